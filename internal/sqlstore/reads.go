package sqlstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/shelfmark/shelfmark"
)

// Reads is a dialect's statements of the file, access and blob reads of
// Tx and of ReferencedBlobs. Their arguments are those named; a list is one
// argument bound by Dialect.Int64s or Strings.
type Reads struct {
	// ChildFiles reads ResourceColsR and FileCols (as f) of up to
	// perParent live files of each parent, the first by position, in any
	// order (Tx orders them): parents, perParent.
	ChildFiles string
	// PageFiles reads PageFileCols of what ChildFiles reads, in any
	// order: parents, perParent.
	PageFiles string
	// PageFileScanner is PageFileScanner of the dialect's NullInt.
	PageFileScanner func(*shelfmark.FileRowBuffer) func(Scanner) (*shelfmark.FileRow, error)
	// FirstChildren reads the parent and the key of the first live child
	// of a kind of each parent, by position: parents, kind.
	FirstChildren string
	// FilesOfWorks reads the work and the first nine FileCols of the live
	// files of a use in public view of the works' live file sets: works,
	// use, now.
	FilesOfWorks string
	// AccessEnds reads the keys of the works and collections whose
	// effective embargo or lease ends in (after, until]: after, until.
	AccessEnds string
	// ReferencedBlobs reads the digests of shas that a file or an upload
	// holds: shas.
	ReferencedBlobs string
}

// ChildFiles returns up to perParent live files of each of parents, with
// their descriptions, by parent and position: one statement, a short index
// range of (parent, position) per parent.
func (t *Tx) ChildFiles(ctx context.Context, parents []int64, perParent int) ([]*shelfmark.FileRow, error) {
	if len(parents) == 0 || perParent <= 0 {
		return nil, nil
	}
	out, err := Collect(ctx, t.q, t.d.ChildFiles, []any{t.d.Int64s(parents), int64(perParent)}, func(r Scanner) (*shelfmark.FileRow, error) {
		var (
			f  shelfmark.File
			fm shelfmark.Format
			id *string
		)
		row, err := t.d.ScanResourceAnd(r, &f.Name, &f.MediaType, &f.Size, &f.SHA256, &f.SHA512, &f.MD5, &f.Use, &f.ExternalURL,
			&id, &fm.Name, &fm.Version, &fm.MediaType, &fm.Width, &fm.Height, &fm.Pages, &fm.Note)
		if err != nil {
			return nil, err
		}
		if id != nil {
			fm.PRONOM = *id
			f.Format = &fm
		}
		return &shelfmark.FileRow{Row: row, File: &f}, nil
	})
	if err != nil {
		return nil, fmt.Errorf("%sread files of %d resources: %w", t.d.Prefix, len(parents), err)
	}
	byParentPosition(out)
	return out, nil
}

// PageFileCols are the columns PageFiles reads, of the file's row (as r)
// and its description (as f): what a viewer or a manifest needs of a
// page's files, about half of what ChildFiles reads, since the time a
// book of 1,200 pages and 4,800 files takes to read goes mostly into
// taking the columns out of the rows and making Go values of them.
const PageFileCols = `r.key, r.kind, r.visibility, r.parent, r.position, r.modified, r.eff_visibility, r.eff_embargo, r.eff_lease,
  f.name, f.media_type, f.size, f.sha256, f.use, f.external_url, f.format_id, f.format_mime, f.width, f.height, f.pages`

// PageFileScanner returns a scanner of rows of PageFileCols into buf
// (fresh memory when nil). N is the backend's NullInt. A FileRowBuffer
// holds its rows in blocks: a book reads thousands, and the collector's
// cost grows with the number of objects it traces as well as with their
// bytes. Each row is scanned into the same destinations, then copied into
// its place: the list of destinations passed to Scan escapes, and one a
// row would cost more than the row.
func PageFileScanner[N NullInt](buf *shelfmark.FileRowBuffer) func(Scanner) (*shelfmark.FileRow, error) {
	if buf == nil {
		buf = new(shelfmark.FileRowBuffer)
	}
	var in pageFileScan[N]
	row, f, fm := &in.Row, &in.File, &in.Format
	dest := []any{&row.Key, &in.kind, &in.vis, &row.Parent, &row.Position, &in.modified, &in.effVis, &in.effEmb, &in.effLease,
		&f.Name, &f.MediaType, &f.Size, &f.SHA256, &f.Use, &f.ExternalURL, &in.id, &fm.MediaType, &fm.Width, &fm.Height, &fm.Pages}
	return func(r Scanner) (*shelfmark.FileRow, error) {
		if err := r.Scan(dest...); err != nil {
			return nil, err
		}
		p := buf.Next()
		*p = in.FileRowSpace
		row, f, fm := &p.Row, &p.File, &p.Format
		row.Kind = shelfmark.Kind(in.kind)
		row.Visibility = shelfmark.Visibility(in.vis)
		row.Modified = FromMicros(in.modified)
		row.Effective = shelfmark.Access{Visibility: shelfmark.Visibility(in.effVis), Embargo: nullTime(in.effEmb), Lease: nullTime(in.effLease)}
		if in.id != nil {
			fm.PRONOM = *in.id
			f.Format = fm
		}
		p.FileRow = shelfmark.FileRow{Row: row, File: f}
		return &p.FileRow, nil
	}
}

// pageFileScan holds the destinations of PageFileScanner's columns,
// scanned into once a row and then copied into the row's place: a
// destination passed to Scan escapes, so each would otherwise be
// allocated on its own, and the columns that are converted (kind,
// access, time, format id) stay out of the rows kept.
type pageFileScan[N NullInt] struct {
	shelfmark.FileRowSpace
	kind, vis, effVis string
	effEmb, effLease  N
	modified          int64
	id                *string
}

// PageFiles is ChildFiles with only PageFileCols: one statement, the same
// index ranges. Read into buf (Reset first), the rows and their list are
// buf's memory.
func (t *Tx) PageFiles(ctx context.Context, parents []int64, perParent int, buf *shelfmark.FileRowBuffer) ([]*shelfmark.FileRow, error) {
	var out []*shelfmark.FileRow
	if buf != nil {
		buf.Reset()
		out = buf.Rows
	}
	if len(parents) == 0 || perParent <= 0 {
		return out, nil
	}
	scan := t.d.PageFileScanner(buf)
	err := t.q.EachRow(ctx, t.d.PageFiles, []any{t.d.Int64s(parents), int64(perParent)}, func(r Scanner) error {
		fr, err := scan(r)
		if err != nil {
			return err
		}
		out = append(out, fr)
		return nil
	})
	if buf != nil {
		buf.Rows = out // its room kept, whatever the read's end
	}
	if err != nil {
		return nil, fmt.Errorf("%sread the page files of %d resources: %w", t.d.Prefix, len(parents), err)
	}
	byParentPosition(out)
	return out, nil
}

// byParentPosition puts the rows of ChildFiles and PageFiles in the order
// they promise: by parent, then position (then key). The statements leave
// the order to this, since their sort would hold every row back until the
// last was read (SQLite copies each into a temporary B-tree), and a
// book's 3,600 rows are ordered here for a small part of that.
func byParentPosition(rows []*shelfmark.FileRow) {
	slices.SortFunc(rows, func(a, b *shelfmark.FileRow) int {
		return cmp.Or(cmp.Compare(a.Row.Parent, b.Row.Parent), cmp.Compare(a.Row.Position, b.Row.Position), cmp.Compare(a.Row.Key, b.Row.Key))
	})
}

// FirstChildren returns the first live child of kind of each of parents,
// by position, in one statement.
func (t *Tx) FirstChildren(ctx context.Context, parents []int64, kind shelfmark.Kind) (map[int64]int64, error) {
	out := map[int64]int64{}
	if len(parents) == 0 {
		return out, nil
	}
	err := t.q.EachRow(ctx, t.d.FirstChildren, []any{t.d.Int64s(parents), string(kind)}, func(r Scanner) error {
		var p, c int64
		if err := r.Scan(&p, &c); err != nil {
			return err
		}
		out[p] = c
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%sfirst children of %d resources: %w", t.d.Prefix, len(parents), err)
	}
	return out, nil
}

// FilesOfWorks returns, for each of works, its live file sets' live files
// of the given use in public view at now, in the file sets' order (then
// the files' own), in one statement: the works' children from
// resources_children, their children likewise, and each file's
// description.
func (t *Tx) FilesOfWorks(ctx context.Context, works []int64, use string, now time.Time) (map[int64][]*shelfmark.File, error) {
	out := map[int64][]*shelfmark.File{}
	if len(works) == 0 {
		return out, nil
	}
	err := t.q.EachRow(ctx, t.d.FilesOfWorks, []any{t.d.Int64s(works), use, now.UnixMicro()}, func(r Scanner) error {
		var (
			work int64
			f    shelfmark.File
		)
		if err := r.Scan(&work, &f.Name, &f.MediaType, &f.Size, &f.SHA256, &f.SHA512, &f.MD5, &f.Use, &f.ExternalURL); err != nil {
			return err
		}
		out[work] = append(out[work], &f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s%s files of %d works: %w", t.d.Prefix, use, len(works), err)
	}
	return out, nil
}

// AccessEnds returns the keys of the works and collections whose
// effective embargo or lease ends in (after, until], ascending: one
// statement over the partial indexes resources_eff_embargo and
// resources_eff_lease.
func (t *Tx) AccessEnds(ctx context.Context, after, until time.Time) ([]int64, error) {
	out, err := Int64s(ctx, t.q, t.d.AccessEnds, after.UnixMicro(), until.UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("%saccess ending in (%s, %s]: %w", t.d.Prefix, after.Format(time.RFC3339), until.Format(time.RFC3339), err)
	}
	return out, nil
}
