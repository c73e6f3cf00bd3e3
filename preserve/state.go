package preserve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/rdf"
)

// State is the logical content of an object's next version: its record
// and metadata (in memory: a few hundred bytes a resource) and the
// originals it keeps.
type State struct {
	// Key is the object's resource (a work or a collection), and Record
	// what object.json holds.
	Key    int64
	Record *Record
	// Metadata is metadata.nt, empty when no resource has metadata.
	Metadata []byte
	// Originals are the files whose bytes the object keeps, each with
	// its description in Record (whose Path and digests name them).
	Originals []Original
}

// Original is a file whose bytes the content store holds (by SHA256) and
// the object keeps at Record.Path.
type Original struct {
	File   *shelfmark.File
	Record *File
}

// Content is one logical file of an object: bytes held in memory (the
// record, the metadata), or an original in the content store with the
// SHA-512 its record gives (SHA512).
type Content struct {
	Path   string
	Bytes  []byte
	File   *shelfmark.File
	SHA512 string
}

// Contents returns the object's logical files sorted by path: object.json
// (the record as it stands now: fill in digests first), metadata.nt and
// the originals.
func (st *State) Contents() ([]Content, error) {
	js, err := json.MarshalIndent(st.Record, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("preserve: record of %s: %w", st.Record.ID, err)
	}
	out := []Content{{Path: RecordPath, Bytes: append(js, '\n')}}
	if len(st.Metadata) > 0 {
		out = append(out, Content{Path: MetadataPath, Bytes: st.Metadata})
	}
	for _, o := range st.Originals {
		out = append(out, Content{Path: o.Record.Path, File: o.File, SHA512: o.Record.SHA512})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// pageSize bounds every read of Build: children are read this many at a
// time, and the files of this many file sets at once.
const pageSize = 1000

// maxFilesPerSet is how many files of one file set Build reads: an
// original and its derivatives are a handful.
const maxFilesPerSet = 1000

// ErrAbsent is Build's error for a resource the database does not hold
// (purged since its change was read): there is nothing to preserve.
var ErrAbsent = errors.New("no such resource in the database (purged)")

// Build reads in tx the state of the object of key, a work or a
// collection: its own row, metadata and memberships, and for a work those
// of its file sets and their files (child works are objects of their
// own), the originals kept as files. A deleted resource's object holds
// its tombstone only: its children and their bytes stay in the object's
// earlier versions.
//
// Cost: one read of the resource, per pageSize children one read of them
// and one of their files, then one read each of the metadata, the
// memberships, the depositors and the source keys of all the object's
// resources, one of a collection's grants, and one per depositor (a
// handful) of the depositor's name: O(children / pageSize) statements.
func Build(ctx context.Context, tx shelfmark.ReadTx, ids *shelfmark.IDCodec, key int64) (*State, error) {
	states, _, err := BuildAll(ctx, tx, ids, []int64{key}, 0)
	if err != nil {
		return nil, err
	}
	st := states[key]
	if st == nil {
		return nil, fmt.Errorf("preserve: object %d: %w", key, ErrAbsent)
	}
	return st, nil
}

// BuildAll reads in tx the states of objects from the front of keys, as
// Build reads each, with the reads shared among them: it takes objects
// until their resources number maxRows or more (always at least one; 0:
// no bound), and returns their states by key and how many of keys it
// took. A key the database no longer holds (purged) has no state.
//
// Cost, whatever the number of objects taken: one read of their rows, two
// reads that find the works with file sets or files (when there are two
// works or more), then per such work the reads of its children as in
// Build, and one read each of the metadata, memberships, depositors and
// source keys of all their resources, one of the collections' grants, and
// one per depositor of the depositor's name. A step of the preserver
// reads a few hundred new works in about ten statements, not seven each.
func BuildAll(ctx context.Context, tx shelfmark.ReadTx, ids *shelfmark.IDCodec, keys []int64, maxRows int) (map[int64]*State, int, error) {
	if len(keys) == 0 {
		return map[int64]*State{}, 0, nil
	}
	roots := make(map[int64]*shelfmark.ResourceRow, len(keys))
	if len(keys) == 1 {
		root, err := tx.Resource(ctx, keys[0])
		if err != nil {
			return nil, 0, fmt.Errorf("preserve: object %d: %w", keys[0], err)
		}
		if root != nil {
			roots[root.Key] = root
		}
	} else {
		rows, err := tx.Resources(ctx, keys)
		if err != nil {
			return nil, 0, fmt.Errorf("preserve: %d objects: %w", len(keys), err)
		}
		for _, r := range rows {
			roots[r.Key] = r
		}
	}
	var works []int64 // the live works, whose file sets and files are theirs
	for _, k := range keys {
		root := roots[k]
		if root == nil {
			continue
		}
		if root.Kind != shelfmark.KindWork && root.Kind != shelfmark.KindCollection {
			return nil, 0, fmt.Errorf("preserve: resource %d is a %s, not a work or a collection", k, root.Kind)
		}
		if root.Kind == shelfmark.KindWork && root.Deleted == nil {
			works = append(works, k)
		}
	}
	// which works have file sets or files: the others' children are not
	// read (one read of each kind for all, where a read of children each
	// would cost a statement a work)
	parents := map[int64]bool{}
	if len(works) == 1 {
		parents[works[0]] = true
	} else if len(works) > 1 {
		for _, kind := range []shelfmark.Kind{shelfmark.KindFileSet, shelfmark.KindFile} {
			first, err := tx.FirstChildren(ctx, works, kind)
			if err != nil {
				return nil, 0, fmt.Errorf("preserve: children of %d works: %w", len(works), err)
			}
			for p := range first {
				parents[p] = true
			}
		}
	}
	objRows := make(map[int64][]*shelfmark.ResourceRow, len(keys))
	files := map[int64]*shelfmark.File{}
	var all []int64 // the resources of the objects taken
	taken := 0
	for taken < len(keys) && (maxRows <= 0 || len(all) < maxRows) {
		k := keys[taken]
		taken++
		root := roots[k]
		if root == nil {
			continue
		}
		rows := []*shelfmark.ResourceRow{root}
		if parents[k] {
			var err error
			if rows, err = children(ctx, tx, root, rows, files); err != nil {
				return nil, 0, err
			}
		}
		objRows[k] = rows
		for _, r := range rows {
			all = append(all, r.Key)
		}
	}
	out := make(map[int64]*State, len(objRows))
	if len(all) == 0 {
		return out, taken, nil
	}
	fields, err := tx.FieldsOf(ctx, all)
	if err != nil {
		return nil, 0, fmt.Errorf("preserve: metadata of %d objects: %w", len(objRows), err)
	}
	memberOf, err := tx.MemberOfMany(ctx, all)
	if err != nil {
		return nil, 0, fmt.Errorf("preserve: memberships of %d objects: %w", len(objRows), err)
	}
	var colls []int64 // the live collections, whose grants their objects keep
	for k, rows := range objRows {
		if r := rows[0]; r.Kind == shelfmark.KindCollection && r.Deleted == nil {
			colls = append(colls, k)
		}
	}
	acc, err := accountsOf(ctx, tx, all, colls)
	if err != nil {
		return nil, 0, err
	}
	for k, rows := range objRows {
		out[k] = state(ids, k, rows, files, fields, memberOf, acc)
	}
	return out, taken, nil
}

// state assembles the state of the object of key from the reads of
// BuildAll: rows are its resources (its own first).
func state(ids *shelfmark.IDCodec, key int64, rows []*shelfmark.ResourceRow, files map[int64]*shelfmark.File,
	fields map[int64][]shelfmark.Field, memberOf map[int64][]int64, acc *accounts) *State {
	st := &State{Key: key, Record: &Record{Shelfmark: FormatVersion, ID: string(ids.Encode(key))}}
	st.Record.Resources = make([]Resource, 0, len(rows))
	paths := map[string]bool{}
	for _, r := range rows {
		rec := record(ids, r, memberOf[r.Key])
		rec.Depositor = acc.depositors[r.Key]
		rec.SourceKeys = acc.sourceKeys[r.Key]
		if r.Key == key {
			rec.Grants = acc.grants[key]
		}
		if stmts := shelfmark.StatementsOf(fields[r.Key]); len(stmts) > 0 {
			rec.Statements = len(stmts)
			st.Metadata = rdf.AppendNTriples(st.Metadata, SubjectIRI(ids.Encode(r.Key)), stmts)
		}
		if f := files[r.Key]; f != nil {
			rec.File = fileRecord(f)
			if Keep(f) {
				rec.File.Path = filePath(ids, r, f, paths)
			}
		}
		st.Record.Resources = append(st.Record.Resources, rec)
	}
	// the originals point into Resources, complete now
	for i := range st.Record.Resources {
		if rec := st.Record.Resources[i].File; rec != nil && rec.Path != "" {
			st.Originals = append(st.Originals, Original{File: files[rows[i].Key], Record: rec})
		}
	}
	return st
}

// accounts is what the access policy and ingest know of objects'
// resources beyond their rows: depositors by name, source keys, and the
// grants on collections.
type accounts struct {
	depositors map[int64]string
	sourceKeys map[int64][]string
	grants     map[int64][]Grant
}

// accountsOf reads the accounts of keys, the resources of some objects,
// and the grants on colls, the live collections among those objects.
func accountsOf(ctx context.Context, tx shelfmark.ReadTx, keys, colls []int64) (*accounts, error) {
	out := &accounts{depositors: map[int64]string{}, grants: map[int64][]Grant{}}
	owners, err := tx.Owners(ctx, keys)
	if err != nil {
		return nil, fmt.Errorf("preserve: depositors of %d resources: %w", len(keys), err)
	}
	names := map[int64]string{}
	for k, u := range owners {
		name, ok := names[u]
		if !ok {
			usr, err := tx.UserByKey(ctx, u)
			if err != nil {
				return nil, fmt.Errorf("preserve: depositor %d of %d: %w", u, k, err)
			}
			if usr != nil {
				name = usr.Name
			}
			names[u] = name
		}
		if name != "" {
			out.depositors[k] = name
		}
	}
	if out.sourceKeys, err = tx.SourceKeysOf(ctx, keys); err != nil {
		return nil, fmt.Errorf("preserve: source keys of %d resources: %w", len(keys), err)
	}
	if len(colls) > 0 {
		gs, err := tx.GrantsOn(ctx, colls)
		if err != nil {
			return nil, fmt.Errorf("preserve: grants on %d collections: %w", len(colls), err)
		}
		for _, g := range gs {
			out.grants[g.Resource] = append(out.grants[g.Resource], Grant{Principal: g.Principal, Role: string(g.Role)})
		}
		for _, list := range out.grants {
			sort.Slice(list, func(i, j int) bool {
				if list[i].Principal != list[j].Principal {
					return list[i].Principal < list[j].Principal
				}
				return list[i].Role < list[j].Role
			})
		}
	}
	return out, nil
}

// children appends to rows the work's live file sets and files in their
// order (each file set followed by its files), and puts the description
// of each file in files.
func children(ctx context.Context, tx shelfmark.ReadTx, work *shelfmark.ResourceRow, rows []*shelfmark.ResourceRow, files map[int64]*shelfmark.File) ([]*shelfmark.ResourceRow, error) {
	for after := int64(0); ; {
		page, err := tx.Children(ctx, work.Key, after, pageSize)
		if err != nil {
			return nil, fmt.Errorf("preserve: children of %d: %w", work.Key, err)
		}
		var sets []int64 // the parents whose files to read: the file sets, and the work when it holds files itself
		direct := false
		for _, c := range page {
			switch c.Kind {
			case shelfmark.KindFileSet:
				sets = append(sets, c.Key)
			case shelfmark.KindFile:
				direct = true
			}
		}
		if direct {
			sets = append(sets, work.Key)
		}
		byParent := map[int64][]*shelfmark.FileRow{}
		if len(sets) > 0 {
			fs, err := tx.ChildFiles(ctx, sets, maxFilesPerSet)
			if err != nil {
				return nil, fmt.Errorf("preserve: files of %d file sets of %d: %w", len(sets), work.Key, err)
			}
			for _, f := range fs {
				byParent[f.Row.Parent] = append(byParent[f.Row.Parent], f)
			}
		}
		for _, c := range page {
			switch c.Kind {
			case shelfmark.KindFileSet:
				rows = append(rows, c)
				for _, f := range byParent[c.Key] {
					rows = append(rows, f.Row)
					files[f.Row.Key] = f.File
				}
			case shelfmark.KindFile:
				for _, f := range byParent[work.Key] {
					if f.Row.Key == c.Key {
						rows = append(rows, f.Row)
						files[c.Key] = f.File
					}
				}
			}
		}
		if len(page) < pageSize {
			return rows, nil
		}
		after = page[len(page)-1].Position
	}
}

// record is the Resource of row r.
func record(ids *shelfmark.IDCodec, r *shelfmark.ResourceRow, memberOf []int64) Resource {
	rec := Resource{
		ID:         string(ids.Encode(r.Key)),
		Kind:       string(r.Kind),
		Visibility: string(r.Visibility),
		Embargo:    utc(r.Embargo),
		Lease:      utc(r.Lease),
		Version:    r.Version,
		Seq:        r.Seq,
		Created:    r.Created.UTC(),
		Modified:   r.Modified.UTC(),
		Deleted:    utc(r.Deleted),
	}
	if r.Parent != 0 {
		rec.Parent = string(ids.Encode(r.Parent))
		if r.Position > 0 && r.Position < shelfmark.UnorderedBase {
			rec.Position = r.Position
		}
	}
	if r.Source != 0 {
		rec.Source = string(ids.Encode(r.Source))
	}
	if !r.Effective.Equal(r.Own()) {
		rec.Effective = &Access{Visibility: string(r.Effective.Visibility), Embargo: utc(r.Effective.Embargo), Lease: utc(r.Effective.Lease)}
	}
	for _, c := range memberOf {
		rec.MemberOf = append(rec.MemberOf, string(ids.Encode(c)))
	}
	return rec
}

// utc returns t in UTC, nil for nil.
func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

// fileRecord describes f.
func fileRecord(f *shelfmark.File) *File {
	out := &File{Name: f.Name, MediaType: f.MediaType, Size: f.Size, SHA256: f.SHA256, SHA512: f.SHA512, SHA512Stored: f.SHA512 != "", MD5: f.MD5,
		Use: f.Use, ExternalURL: f.ExternalURL}
	if f.Format != nil {
		out.Format = &Format{PRONOM: f.Format.PRONOM, Name: f.Format.Name, Version: f.Format.Version, MediaType: f.Format.MediaType,
			Width: f.Format.Width, Height: f.Format.Height, Pages: f.Format.Pages, Note: f.Format.Note}
	}
	return out
}

// filePath is the logical path of the bytes of file r: under its file
// set's directory (files/SET-ID/), by its original name made safe for a
// path, or by its own id when that name is taken in the object already
// (paths holds those taken).
func filePath(ids *shelfmark.IDCodec, r *shelfmark.ResourceRow, f *shelfmark.File, paths map[string]bool) string {
	dir := FilesDir + "/" + string(ids.Encode(r.Key))
	if r.Parent != 0 {
		dir = FilesDir + "/" + string(ids.Encode(r.Parent))
	}
	p := dir + "/" + safeName(f.Name, string(ids.Encode(r.Key)))
	if paths[p] {
		p = dir + "/" + string(ids.Encode(r.Key)) + "-" + safeName(f.Name, "file")
	}
	paths[p] = true
	return p
}

// safeName is name as one segment of a logical path: no slash, no
// control character, not "." or "..", not empty (fallback then).
func safeName(name, fallback string) string {
	var b bytes.Buffer
	for _, c := range name {
		if c == '/' || c == '\\' || c < 0x20 || c == 0x7f {
			c = '_'
		}
		b.WriteRune(c)
	}
	s := strings.TrimSpace(b.String())
	if s == "" || s == "." || s == ".." {
		return fallback
	}
	return s
}
