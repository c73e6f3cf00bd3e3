package shelfmark

import (
	"context"
	"fmt"
	"slices"
)

// MaxChildFiles caps the files ChildFiles returns for one child (a file
// set holds its original and a few derivatives).
const MaxChildFiles = 32

// ChildFiles returns the live files held by each of children, which are
// children of parent: a page of file sets shown with their files (a work's
// page, its thumbnails) costs a fixed number of statements, not one read
// per file set. A child that is not a live child of parent, or that the
// caller may not read, is left out, as are the files the caller may not
// read; a file is as hidden as its file set and its parent.
func (r *Repository) ChildFiles(ctx context.Context, parent ID, children []ID) (map[ID][]*Resource, error) {
	pkey, err := r.ids.Key(parent)
	if err != nil {
		return nil, err
	}
	if len(children) > MaxPageSize {
		return nil, Errorf(EINVALID, "children: %d ids; at most %d are read at once.", len(children), MaxPageSize)
	}
	keys := make([]int64, 0, len(children))
	for _, id := range children {
		k, err := r.ids.Key(id)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	var out map[ID][]*Resource
	err = r.store.View(ctx, func(tx ReadTx) error {
		g, keep, err := r.childScope(ctx, tx, pkey)
		if err != nil {
			return err
		}
		rows, err := tx.Resources(ctx, keys)
		if err != nil {
			return err
		}
		var shown []*ResourceRow
		for _, row := range rows {
			if row.Parent != pkey || row.Deleted != nil {
				continue
			}
			ok, err := keep(row)
			if err != nil {
				return err
			}
			if ok {
				shown = append(shown, row)
			}
		}
		out, err = r.filesOf(g, keep, shown, func(parents []int64) ([]*FileRow, error) {
			return tx.ChildFiles(ctx, parents, MaxChildFiles)
		}, nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("files of the children of %s: %w", parent, err)
	}
	return out, nil
}

// filesOf returns the files of children (rows the caller may read), by
// child id, those keep accepts: read reads them, at most MaxChildFiles a
// child, in one statement. A file is as hidden as the most hidden of its
// chain (its effective access, which is its chain's). With buf, the
// Resources, their lists and the map are buf's memory.
func (r *Repository) filesOf(g *guard, keep func(*ResourceRow) (bool, error), children []*ResourceRow,
	read func(parents []int64) ([]*FileRow, error), buf *PageBuffer) (map[ID][]*Resource, error) {
	var out map[ID][]*Resource
	if buf != nil {
		if buf.files == nil {
			buf.files = map[ID][]*Resource{}
		}
		clear(buf.files)
		out = buf.files
	} else {
		out = map[ID][]*Resource{}
	}
	if len(children) == 0 {
		return out, nil
	}
	// each child's id, encoded once for all its files
	shown := make(map[int64]ID, len(children))
	parents := make([]int64, len(children))
	for i, row := range children {
		shown[row.Key] = r.ids.Encode(row.Key)
		parents[i] = row.Key
	}
	files, err := read(parents)
	if err != nil {
		return nil, err
	}
	// the files are allocated together, and a file set's list is a part
	// of one list of them all (read returns them by parent): three
	// objects for the collector, not two a file
	var (
		all  []Resource
		list []*Resource
	)
	if buf != nil {
		all = buf.resources(len(files))
		clear(buf.list)
		list = buf.list[:0]
		defer func() { buf.list = list }()
	} else {
		all = make([]Resource, len(files))
		list = make([]*Resource, 0, len(files))
	}
	var (
		cur   ID
		start int
	)
	flush := func() {
		if len(list) > start {
			out[cur] = append(out[cur], list[start:len(list):len(list)]...)
		}
		start = len(list)
	}
	for i, fr := range files {
		id, ok := shown[fr.Row.Parent]
		if !ok {
			continue
		}
		// readable through its file set and on its own
		ok, err := keep(fr.Row)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		if id != cur {
			flush()
			cur = id
		}
		res := &all[i]
		r.fillResource(res, fr.Row, id)
		res.File = fr.File
		if v := fr.Row.EffectiveAt(g.now); visRank(v) > visRank(res.Visibility) {
			res.Visibility = v
		}
		list = append(list, res)
	}
	flush()
	return out, nil
}

// FindResources returns the live resources among ids the caller may read,
// with their metadata, in the order of ids: the names of a work's
// collections, for example, in a fixed number of statements (one for the
// rows, one for the metadata, and those the policy needs). An id that is
// missing, deleted, hidden or given twice is left out (the first kept).
func (r *Repository) FindResources(ctx context.Context, ids []ID) ([]*Resource, error) {
	if len(ids) > MaxPageSize {
		return nil, Errorf(EINVALID, "ids: %d; at most %d are read at once.", len(ids), MaxPageSize)
	}
	keys := make([]int64, 0, len(ids))
	for _, id := range ids {
		k, err := r.ids.Key(id)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	var out []*Resource
	err := r.store.View(ctx, func(tx ReadTx) error {
		rows, err := tx.Resources(ctx, keys)
		if err != nil {
			return err
		}
		byKey := make(map[int64]*ResourceRow, len(rows))
		for _, row := range rows {
			byKey[row.Key] = row
		}
		g := r.guard(tx, CallerFrom(ctx))
		var shown []int64
		for _, k := range keys {
			row := byKey[k]
			if row == nil || row.Deleted != nil {
				continue
			}
			delete(byKey, k) // a repeated id is shown once
			a, err := g.accessOf(ctx, row)
			if err != nil {
				return err
			}
			ok, err := g.canRead(ctx, a)
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			res := r.rowResource(row)
			a.showIn(res)
			if err := g.hideUnseen(ctx, res, row, a.chain[1:], nil); err != nil {
				return err
			}
			out = append(out, res)
			shown = append(shown, k)
		}
		if len(shown) == 0 {
			return nil
		}
		fields, err := tx.FieldsOf(ctx, shown)
		if err != nil {
			return err
		}
		for i, res := range out {
			res.Metadata = StatementsOf(fields[shown[i]])
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("find %d resources: %w", len(ids), err)
	}
	return out, nil
}

// HitThumbnails returns, read within tx, a thumbnail file for each of a
// page of search hits, by hit key, that the caller may read: a page hit's
// own, a work's best page's (its first Pages), or, when its record
// matched, the thumbnail of the page that represents it (the page its
// metadata names, else its first page: see workThumbnails). meta, when
// not nil, holds the metadata of the hits' works read already; nil, that
// of the works found by their records is read here (one statement more).
// Hits without a thumbnail the caller may see are absent. Two statements
// whatever the number of hits (the first pages, the files), and the
// policy's own look-ups only for a thumbnail not in public view (see
// thumbnails).
func (r *Repository) HitThumbnails(ctx context.Context, tx ReadTx, hits []SearchHit, meta map[int64][]Statement) (map[int64]ID, error) {
	if len(hits) > MaxPageSize {
		return nil, Errorf(EINVALID, "hits: %d; at most %d are read at once.", len(hits), MaxPageSize)
	}
	tries := map[int64][]int64{} // by hit
	var works []int64
	for _, h := range hits {
		switch {
		case h.Kind == KindFileSet:
			tries[h.Key] = []int64{h.Key}
		case len(h.Pages) > 0:
			tries[h.Key] = []int64{h.Pages[0].Key}
		case h.Kind == KindWork:
			works = append(works, h.Key)
		}
	}
	if len(works) == 0 {
		return r.thumbnailsOf(ctx, tx, tries)
	}
	first, err := tx.FirstChildren(ctx, works, KindFileSet)
	if err != nil {
		return nil, err
	}
	if meta == nil {
		fields, err := tx.FieldsOf(ctx, works)
		if err != nil {
			return nil, err
		}
		meta = make(map[int64][]Statement, len(fields))
		for k, fs := range fields {
			meta[k] = StatementsOf(fs)
		}
	}
	r.representTries(tries, works, first, meta)
	return r.thumbnailsOf(ctx, tx, tries)
}

// thumbnailsOf returns, by key (a hit or a work), the thumbnail the
// caller may read of the first of its pages (tries maps a key to file
// sets, in the order they are tried) that has one: one statement for the
// files of all of them (thumbnails).
func (r *Repository) thumbnailsOf(ctx context.Context, tx ReadTx, tries map[int64][]int64) (map[int64]ID, error) {
	var pages []int64
	for _, fss := range tries {
		pages = append(pages, fss...)
	}
	slices.Sort(pages)
	thumbs, err := r.thumbnails(ctx, tx, slices.Compact(pages))
	if err != nil {
		return nil, err
	}
	out := make(map[int64]ID, len(tries))
	for k, fss := range tries {
		for _, fs := range fss {
			if id, ok := thumbs[fs]; ok {
				out[k] = id
				break
			}
		}
	}
	return out, nil
}

// thumbnails returns the thumbnail file of each of filesets (keys of file
// sets) that the caller may read. One statement for the files; the
// policy's own look-ups only for a thumbnail not in public view (or, to a
// signed-in caller, not open to every signed-in caller), which the
// effective access on the file's row decides for the rest (it is as
// hidden as its file set, its work and its source). File sets without a
// thumbnail, or whose thumbnail the caller may not read, are absent.
func (r *Repository) thumbnails(ctx context.Context, tx ReadTx, filesets []int64) (map[int64]ID, error) {
	out := map[int64]ID{}
	if len(filesets) == 0 {
		return out, nil
	}
	files, err := tx.ChildFiles(ctx, filesets, MaxChildFiles)
	if err != nil {
		return nil, fmt.Errorf("thumbnails of %d file sets: %w", len(filesets), err)
	}
	g := r.guard(tx, CallerFrom(ctx))
	for _, fr := range files {
		if _, done := out[fr.Row.Parent]; done || fr.File.Use != UseThumbnail || fr.Row.Deleted != nil {
			continue
		}
		ok := g.all()
		switch fr.Row.EffectiveAt(g.now) {
		case Public:
			ok = true
		case Authenticated:
			ok = ok || g.c.Authenticated()
		}
		if !ok && g.c.User != 0 { // an owner's or a role's: the policy decides
			if ok, err = g.readableKey(ctx, fr.Row.Key); err != nil {
				return nil, err
			}
		}
		if ok {
			out[fr.Row.Parent] = r.ids.Encode(fr.Row.Key)
		}
	}
	return out, nil
}
