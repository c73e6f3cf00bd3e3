package shelfmark

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// MaxOrderSize caps the children one order may name.
const MaxOrderSize = 100000

// SetOrder orders a work's children in one step (rule R2): named children
// get positions 1..n in bulk statements whose count does not depend on n;
// children not named follow, unordered. The work's version changes.
func (r *Repository) SetOrder(ctx context.Context, parent ID, children []ID, ifMatch int64) (*Resource, error) {
	pkey, err := r.ids.Key(parent)
	if err != nil {
		return nil, err
	}
	if len(children) > MaxOrderSize {
		return nil, Errorf(EINVALID, "children: at most %d in one order.", MaxOrderSize)
	}
	keys := make([]int64, len(children))
	pos := make(map[int64]int, len(children))
	for i, id := range children {
		k, err := r.refKey(id, "children")
		if err != nil {
			return nil, err
		}
		if j, dup := pos[k]; dup {
			return nil, &Error{Code: EINVALID, Message: fmt.Sprintf("children: %s is named twice (positions %d and %d).", id, j+1, i+1),
				Details: map[string]any{"id": string(id)}}
		}
		pos[k] = i
		keys[i] = k
	}
	var prow *ResourceRow
	o := &op{}
	*o = op{
		check: func(tx WriteTx) error {
			ctx := context.Background()
			var err error
			prow, err = r.editableWorkAt(ctx, tx, CallerFrom(o.ctx), pkey, "order the children of", "only works have ordered children", ifMatch)
			if err != nil {
				return err
			}
			rows, err := tx.Resources(ctx, keys)
			if err != nil {
				return err
			}
			ok := make(map[int64]bool, len(rows))
			for _, row := range rows {
				if row.Parent == pkey && row.Deleted == nil {
					ok[row.Key] = true
				}
			}
			for _, k := range keys {
				if !ok[k] {
					return &Error{Code: EINVALID, Message: fmt.Sprintf("children: %s is not a child of %s.", r.ids.Encode(k), parent),
						Details: map[string]any{"id": string(r.ids.Encode(k))}}
				}
			}
			return nil
		},
		apply: func(tx WriteTx, seq int64, now time.Time) error {
			ctx := context.Background()
			if err := tx.SetPositions(ctx, pkey, keys); err != nil {
				return err
			}
			prow.Version++
			prow.Seq, prow.Modified = seq, now
			o.audit = append(o.audit, auditEntry(o.ctx, "order", pkey, nil))
			return tx.UpdateResource(ctx, prow)
		},
	}
	if err := r.commit.run(ctx, o); err != nil {
		r.auditDenied(ctx, "order", pkey, err)
		return nil, fmt.Errorf("order %s: %w", parent, err)
	}
	return r.rowResource(prow), nil
}

// ListChildren pages through a resource's live children: ordered ones by
// position, then unordered ones by creation.
func (r *Repository) ListChildren(ctx context.Context, parent ID, p PageRequest) (*Page, error) {
	pkey, after, err := r.childCursor(parent, p.After)
	if err != nil {
		return nil, err
	}
	var page *Page
	err = r.store.View(ctx, func(tx ReadTx) error {
		g, keep, err := r.childScope(ctx, tx, pkey)
		if err != nil {
			return err
		}
		page, _, err = r.childrenPage(ctx, tx, g, keep, pkey, after, p, nil)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("children of %s: %w", parent, err)
	}
	return page, nil
}

// childScope is what reading the children of pkey takes: the caller's
// guard and the filter of the children the caller may read (ENOTFOUND
// unless the caller may read pkey).
func (r *Repository) childScope(ctx context.Context, tx ReadTx, pkey int64) (*guard, func(*ResourceRow) (bool, error), error) {
	g := r.guard(tx, CallerFrom(ctx))
	pa, err := g.readable(ctx, pkey)
	if err != nil {
		return nil, nil, err
	}
	keep, err := g.childFilter(ctx, pa)
	if err != nil {
		return nil, nil, err
	}
	return g, keep, nil
}

// childrenPage reads the page of ListChildren (the children of pkey that
// keep accepts, after the position after) and returns it with the rows of
// its items; with buf, its items are buf's memory.
func (r *Repository) childrenPage(ctx context.Context, tx ReadTx, g *guard, keep func(*ResourceRow) (bool, error),
	pkey, after int64, p PageRequest, buf *PageBuffer) (*Page, []*ResourceRow, error) {
	fetch := func(after int64, n int) ([]*ResourceRow, error) { return tx.Children(ctx, pkey, after, n) }
	rows, more, last, err := visiblePage(clampLimit(p.Limit), r.maxScan, fetch, func(row *ResourceRow) int64 { return row.Position }, keep, after)
	if err != nil {
		return nil, nil, err
	}
	page := r.pageInto(rows, buf)
	for i, it := range page.Items {
		// a child is as hidden as its parent
		if v := rows[i].EffectiveAt(g.now); visRank(v) > visRank(it.Visibility) {
			it.Visibility = v
		}
	}
	if p.Metadata {
		if err := r.pageMetadata(ctx, tx, &page, rows); err != nil {
			return nil, nil, err
		}
	}
	if more {
		page.Next = Cursor("p" + strconv.FormatInt(last, 36))
	}
	return &page, rows, nil
}

// PagesPage is a page of a work's children with the files of its pages.
type PagesPage struct {
	Page
	// Files are the files of each file set among Items that the caller
	// may read, by the file set's id, in order, at most MaxChildFiles
	// each, with what ReadTx.PageFiles reads of them: their ids, access,
	// times of change and descriptions, not their checksums other than
	// the SHA-256, their versions or their other times.
	Files map[ID][]*Resource
}

// ListPages is ListChildren of work with the files of its pages (file
// sets), as a viewer or a IIIF manifest shows a book: in one read, the
// statements of ListChildren and one more for the files, whatever the
// number of pages and files, and of each file only what a viewer reads
// (ReadTx.PageFiles), since taking the columns out of the rows is most of
// what reading a book of 1,200 pages and 4,800 files costs. The files the
// caller may not read are left out. buf, when not nil, is the memory the
// page's files are read into (PageBuffer): the page is valid until buf is
// read into again.
func (r *Repository) ListPages(ctx context.Context, work ID, p PageRequest, buf *PageBuffer) (*PagesPage, error) {
	pkey, after, err := r.childCursor(work, p.After)
	if err != nil {
		return nil, err
	}
	var out PagesPage
	err = r.store.View(ctx, func(tx ReadTx) error {
		g, keep, err := r.childScope(ctx, tx, pkey)
		if err != nil {
			return err
		}
		page, rows, err := r.childrenPage(ctx, tx, g, keep, pkey, after, p, buf)
		if err != nil {
			return err
		}
		out.Page = *page
		var sets []*ResourceRow
		for _, row := range rows {
			if row.Kind == KindFileSet {
				sets = append(sets, row)
			}
		}
		var into *FileRowBuffer
		if buf != nil {
			into = &buf.Rows
		}
		out.Files, err = r.filesOf(g, keep, sets, func(parents []int64) ([]*FileRow, error) {
			return tx.PageFiles(ctx, parents, MaxChildFiles, into)
		}, buf)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pages of %s: %w", work, err)
	}
	return &out, nil
}

// childCursor returns the key of parent and the position a cursor of
// ListChildren goes on after (0 for none).
func (r *Repository) childCursor(parent ID, c Cursor) (pkey, after int64, err error) {
	if pkey, err = r.ids.Key(parent); err != nil {
		return 0, 0, err
	}
	if after, err = CursorPosition(c); err != nil {
		return 0, 0, err
	}
	return pkey, after, nil
}

// PositionCursor returns the cursor from which ListChildren and ListPages
// go on after position pos of a parent's children: those ordered are at
// 1..n, so a reader may ask for two ranges of a book at once (after 0 and
// after 500, 500 each), as a manifest's build does.
func PositionCursor(pos int64) Cursor {
	if pos <= 0 {
		return ""
	}
	return Cursor("p" + strconv.FormatInt(pos, 36))
}

// CursorPosition returns the position a cursor of ListChildren or
// ListPages goes on after (0 for the first page), or EINVALID for a cursor
// these lists do not give out.
func CursorPosition(c Cursor) (int64, error) {
	if c == "" {
		return 0, nil
	}
	s, ok := strings.CutPrefix(string(c), "p")
	after, err := strconv.ParseInt(s, 36, 64)
	if !ok || err != nil || after < 0 {
		return 0, Errorf(EINVALID, "after: %q is not a cursor this list gave out.", c)
	}
	return after, nil
}

// ChildCursor returns the cursor from which ListChildren of child's parent
// starts at child (a resource FindResource returned), so that a page of a
// book can be shown among its neighbours, at any depth, for the cost of
// the first page.
func (r *Repository) ChildCursor(child *Resource) (Cursor, error) {
	pos := int64(child.Position)
	if pos == 0 { // unordered: after the ordered ones, by key
		key, err := r.ids.Key(child.ID)
		if err != nil {
			return "", err
		}
		pos = UnorderedBase + key
	}
	return Cursor("p" + strconv.FormatInt(pos-1, 36)), nil
}
