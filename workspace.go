package shelfmark

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// WorkspaceScope names the works a staff workspace lists (see Workspace).
type WorkspaceScope string

// The workspace's scopes.
const (
	// WorkspaceMine lists the works the caller deposited.
	WorkspaceMine WorkspaceScope = "mine"
	// WorkspaceCollection lists the works of one collection (its direct
	// members) that the caller may read.
	WorkspaceCollection WorkspaceScope = "collection"
	// WorkspaceAll lists every work without a parent: for administrators
	// and the holders of a role on the whole repository.
	WorkspaceAll WorkspaceScope = "all"
)

// The workspace's filters of visibility beside the visibilities
// themselves (Public, Authenticated, Private), which match a work's own
// visibility.
const (
	// WorkspaceEmbargoed matches a work whose own embargo has not ended.
	WorkspaceEmbargoed = "embargoed"
)

// The workspace's filters of what a work lacks (WorkspaceQuery.Missing).
const (
	// WorkspaceNoTitle matches a work without a dc:title or dcterms:title
	// literal.
	WorkspaceNoTitle = "title"
	// WorkspaceNoThumbnail matches a work whose first page has no
	// thumbnail (or that has no page): what a list or a search shows for
	// it then is no picture.
	WorkspaceNoThumbnail = "thumbnail"
	// WorkspaceNoOCR matches a work whose first page has no text read
	// from it (no OCR, ALTO or extracted text file), or that has no page.
	WorkspaceNoOCR = "ocr"
)

// WorkspaceScopes, WorkspaceVisibilities and WorkspaceMissing are the
// values a WorkspaceQuery accepts, in the order a form offers them.
var (
	WorkspaceScopes       = []WorkspaceScope{WorkspaceMine, WorkspaceCollection, WorkspaceAll}
	WorkspaceVisibilities = []string{string(Public), string(Authenticated), string(Private), WorkspaceEmbargoed}
	WorkspaceMissing      = []string{WorkspaceNoTitle, WorkspaceNoThumbnail, WorkspaceNoOCR}
)

// WorkspaceQuery asks for a page of the works a signed-in caller looks
// after.
type WorkspaceQuery struct {
	// Scope is which works: WorkspaceMine when empty.
	Scope WorkspaceScope
	// Collection is the collection of WorkspaceCollection (required
	// then, refused otherwise).
	Collection ID
	// Visibility keeps the works whose own visibility is this one, or
	// that are embargoed (WorkspaceEmbargoed); "" keeps every one.
	Visibility string
	// Missing keeps the works that lack this (WorkspaceNoTitle,
	// WorkspaceNoThumbnail, WorkspaceNoOCR); "" keeps every one.
	Missing string
	// Since and Before keep the works deposited at or after Since and
	// before Before; a zero time does not filter.
	Since, Before time.Time
	// After continues after the last work of the previous page.
	After Cursor
	// Limit is the page size, clamped to [1, MaxPageSize].
	Limit int
}

// WorkspaceItem is one work of a workspace page: the work with its
// metadata, and the thumbnail of its first page when it has one the
// caller may read ("" otherwise).
type WorkspaceItem struct {
	*Resource
	Thumbnail ID
}

// WorkspacePage is one page of a workspace list, newest work first. Next
// is "" on the last page. A page that is not the last may hold fewer
// than its limit (even none) when the rows it read past are filtered out:
// it reads at most MaxListScan rows, so every page costs the same
// whatever its depth and however rare the filter's matches.
type WorkspacePage struct {
	Items []*WorkspaceItem
	Next  Cursor
}

// Check reports whether q is a query Workspace accepts (EINVALID saying
// which value is wrong, and which exist, otherwise).
func (q *WorkspaceQuery) Check() error {
	if q.Scope != "" && !slices.Contains(WorkspaceScopes, q.Scope) {
		return Errorf(EINVALID, "scope: %q is not a scope; the scopes are %s.", q.Scope, joinQuoted(WorkspaceScopes))
	}
	if q.Visibility != "" && !slices.Contains(WorkspaceVisibilities, q.Visibility) {
		return Errorf(EINVALID, "visibility: %q is not a visibility; they are %s.", q.Visibility, joinQuoted(WorkspaceVisibilities))
	}
	if q.Missing != "" && !slices.Contains(WorkspaceMissing, q.Missing) {
		return Errorf(EINVALID, "missing: %q is not something a work may lack here; those are %s.", q.Missing, joinQuoted(WorkspaceMissing))
	}
	if !q.Since.IsZero() && !q.Before.IsZero() && !q.Since.Before(q.Before) {
		return Errorf(EINVALID, "The dates of deposit end (%s) before they begin (%s).", q.Before.Format(time.DateOnly), q.Since.Format(time.DateOnly))
	}
	if (q.Scope == WorkspaceCollection) != (q.Collection != "") {
		return Errorf(EINVALID, "collection: a collection is named with the scope %q, and only with it.", WorkspaceCollection)
	}
	return nil
}

// joinQuoted writes values as "a", "b" and "c".
func joinQuoted[S ~string](values []S) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = fmt.Sprintf("%q", v)
	}
	if len(q) < 2 {
		return strings.Join(q, "")
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// Workspace returns a page of the works a signed-in caller looks after,
// newest first: those the caller deposited, those of one collection the
// caller may read, or (administrators, and holders of a role on the whole
// repository) every work; narrowed by visibility, by the dates of deposit
// and by what a work lacks. Each work comes with its metadata and thumbnail. An anonymous
// caller is refused (EUNAUTHORIZED), the scope WorkspaceAll to anyone
// else (EFORBIDDEN), a collection the caller may not read answers
// ENOTFOUND.
//
// Cost: each read of rows (one statement over the index of the scope,
// doubling in size from the page's limit) brings one statement for their
// metadata when the filter is of a missing title, and two for their first
// pages and those pages' files when it is about pages; the page's rows
// stop at MaxListScan, so the statements of a page are bounded by its
// logarithm whatever its depth. Then one statement gives the page's works
// their metadata (unless the filter read it), two their thumbnails, and
// the policy's own look-ups decide rows not in public view.
func (r *Repository) Workspace(ctx context.Context, q WorkspaceQuery) (*WorkspacePage, error) {
	if err := q.Check(); err != nil {
		return nil, err
	}
	if q.Scope == "" {
		q.Scope = WorkspaceMine
	}
	c := CallerFrom(ctx)
	if c.User == 0 && !c.System && !c.Admin {
		return nil, Errorf(EUNAUTHORIZED, "The workspace lists the works of a signed-in caller: sign in.")
	}
	after, err := r.descCursor(q.After)
	if err != nil {
		return nil, err
	}
	var coll int64
	if q.Collection != "" {
		if coll, err = r.ids.Key(q.Collection); err != nil {
			return nil, err
		}
	}
	limit := clampLimit(q.Limit)
	var page WorkspacePage
	err = r.store.View(ctx, func(tx ReadTx) error {
		g := r.guard(tx, c)
		if q.Scope == WorkspaceAll && !g.all() {
			role, err := g.repositoryRole(ctx)
			if err != nil {
				return err
			}
			if !role.Includes(RoleViewer) {
				return Errorf(EFORBIDDEN, "Every work is listed to administrators and to those who hold a role on the whole repository.")
			}
		}
		if coll != 0 {
			if _, err := g.readable(ctx, coll); err != nil {
				return err
			}
		}
		lacks := workspaceLacks{tx: tx, missing: q.Missing, fields: map[int64][]Field{}, first: map[int64]int64{}, uses: map[int64][]string{}}
		size := 0
		fetch := func(after int64, n int) ([]*ResourceRow, error) {
			size = min(max(n, 2*size), max(n, MaxPageSize))
			var rows []*ResourceRow
			var err error
			switch q.Scope {
			case WorkspaceMine:
				rows, err = tx.Owned(ctx, c.User, KindWork, -after, size)
			case WorkspaceCollection:
				rows, err = tx.MembersBefore(ctx, coll, -after, size)
			default:
				rows, err = tx.Roots(ctx, KindWork, -after, size)
			}
			if err != nil {
				return nil, err
			}
			return rows, lacks.read(ctx, rows)
		}
		keep := func(row *ResourceRow) (bool, error) {
			if row.Kind != KindWork || !workspaceVisible(row, q.Visibility, g) || !workspaceDeposited(row, q) || !lacks.matches(row.Key) {
				return false, nil
			}
			return g.canReadRow(ctx, row)
		}
		rows, more, last, err := visiblePage(limit, r.maxScan, fetch, func(row *ResourceRow) int64 { return -row.Key }, keep, after)
		if err != nil {
			return err
		}
		p := r.pageOf(rows)
		keys := make([]int64, len(rows))
		for i, row := range rows {
			keys[i] = row.Key
		}
		if err := lacks.readFields(ctx, keys); err != nil {
			return err
		}
		meta := make(map[int64][]Statement, len(rows))
		for i, row := range rows {
			p.Items[i].Metadata = StatementsOf(lacks.fields[row.Key])
			meta[row.Key] = p.Items[i].Metadata
		}
		thumbs, err := r.listThumbnails(ctx, tx, keys, lacks.firstPages(), meta)
		if err != nil {
			return err
		}
		for i, res := range p.Items {
			page.Items = append(page.Items, &WorkspaceItem{Resource: res, Thumbnail: thumbs[keys[i]]})
		}
		if more {
			page.Next = r.descNext(rows, last)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	return &page, nil
}

// workspaceVisible reports whether row's own access matches the
// visibility filter v ("" matches every row).
func workspaceVisible(row *ResourceRow, v string, g *guard) bool {
	switch v {
	case "":
		return true
	case WorkspaceEmbargoed:
		return row.Embargo != nil && row.Embargo.After(g.now)
	}
	return string(row.Visibility) == v
}

// workspaceDeposited reports whether row was deposited within q's dates.
func workspaceDeposited(row *ResourceRow, q WorkspaceQuery) bool {
	return (q.Since.IsZero() || !row.Created.Before(q.Since)) && (q.Before.IsZero() || row.Created.Before(q.Before))
}

// workspaceLacks reads, for each batch of rows a workspace page reads,
// what its filter of missing things needs: the rows' metadata for the
// filter of a missing title (which the page then shows too) and, for the
// filters about pages, each work's first page and the uses of that
// page's files.
type workspaceLacks struct {
	tx      ReadTx
	missing string
	fields  map[int64][]Field
	first   map[int64]int64    // work -> first file set
	uses    map[int64][]string // file set -> uses of its live files
}

// read reads what the filter needs of rows: one statement for their
// metadata when it is about the title, two (first pages, their files)
// when it is about pages, none otherwise.
func (l *workspaceLacks) read(ctx context.Context, rows []*ResourceRow) error {
	keys := make([]int64, 0, len(rows))
	for _, row := range rows {
		if row.Kind == KindWork {
			keys = append(keys, row.Key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	switch l.missing {
	case WorkspaceNoTitle:
		return l.readFields(ctx, keys)
	case WorkspaceNoThumbnail, WorkspaceNoOCR:
	default:
		return nil
	}
	first, err := l.tx.FirstChildren(ctx, keys, KindFileSet)
	if err != nil {
		return err
	}
	pages := make([]int64, 0, len(first))
	for w, fs := range first {
		l.first[w] = fs
		pages = append(pages, fs)
	}
	if len(pages) == 0 {
		return nil
	}
	files, err := l.tx.ChildFiles(ctx, pages, MaxChildFiles)
	if err != nil {
		return err
	}
	for _, fr := range files {
		if fr.Row.Deleted == nil {
			l.uses[fr.Row.Parent] = append(l.uses[fr.Row.Parent], fr.File.Use)
		}
	}
	return nil
}

// readFields reads the metadata of those of keys not read yet, in one
// statement (none when all were).
func (l *workspaceLacks) readFields(ctx context.Context, keys []int64) error {
	var ask []int64
	for _, k := range keys {
		if _, ok := l.fields[k]; !ok {
			ask = append(ask, k)
		}
	}
	if len(ask) == 0 {
		return nil
	}
	fields, err := l.tx.FieldsOf(ctx, ask)
	if err != nil {
		return err
	}
	for _, k := range ask {
		l.fields[k] = fields[k] // nil for a work without metadata: read all the same
	}
	return nil
}

// firstPages returns the first pages read, by work, or nil when the
// filter did not ask for them.
func (l *workspaceLacks) firstPages() map[int64]int64 {
	if l.missing != WorkspaceNoThumbnail && l.missing != WorkspaceNoOCR {
		return nil
	}
	return l.first
}

// matches reports whether the work key lacks what the filter names.
func (l *workspaceLacks) matches(key int64) bool {
	switch l.missing {
	case WorkspaceNoTitle:
		for _, f := range l.fields[key] {
			if f.Predicate != NSDC+"title" && f.Predicate != NSDCTerms+"title" {
				continue
			}
			for _, o := range f.Objects {
				if o.Kind == Literal && strings.TrimSpace(o.Value) != "" {
					return false
				}
			}
		}
		return true
	case WorkspaceNoThumbnail:
		return !slices.Contains(l.uses[l.first[key]], UseThumbnail)
	case WorkspaceNoOCR:
		uses := l.uses[l.first[key]]
		return !slices.Contains(uses, UseOCR) && !slices.Contains(uses, UseALTO) && !slices.Contains(uses, UseText)
	}
	return true
}

// listThumbnails returns the thumbnail the caller may read of the page
// that represents each of works (workThumbnails) that has one. first,
// when not nil, holds the first pages read already (a work absent from
// it has none); nil, they are read (FirstChildren). meta is the works'
// metadata, read already. Two statements at most.
func (r *Repository) listThumbnails(ctx context.Context, tx ReadTx, works []int64, first map[int64]int64, meta map[int64][]Statement) (map[int64]ID, error) {
	if first == nil && len(works) > 0 {
		var err error
		if first, err = tx.FirstChildren(ctx, works, KindFileSet); err != nil {
			return nil, err
		}
	}
	return r.workThumbnails(ctx, tx, works, first, meta)
}
