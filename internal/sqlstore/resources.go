package sqlstore

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/shelfmark/shelfmark"
)

// ResourceCols are the columns RowScan reads, in its order.
const ResourceCols = `key, kind, visibility, embargo, lease, parent, position, version, seq, created, modified, deleted, source, eff_visibility, eff_embargo, eff_lease`

// ResourceColsR is ResourceCols qualified with the alias r, for joins.
const ResourceColsR = `r.key, r.kind, r.visibility, r.embargo, r.lease, r.parent, r.position, r.version, r.seq, r.created, r.modified, r.deleted, r.source, r.eff_visibility, r.eff_embargo, r.eff_lease`

// NullInt is a nullable integer column as a backend scans it without
// allocating (sql.NullInt64 in SQLite, pgtype.Int8 in PostgreSQL, each
// wrapped to give Get); a pointer to it is the scan destination.
type NullInt interface {
	// Get returns the value and whether it is not NULL.
	Get() (int64, bool)
}

// RowScan holds the destinations of ResourceCols, in their order, and
// builds the row scanned into them, so that a query returning more
// columns after them (ChildFiles) shares the scanning. N is the backend's
// NullInt; scanning allocates nothing but the destinations' slice and the
// row returned.
type RowScan[N NullInt] struct {
	row                       shelfmark.ResourceRow
	kind, vis, effVis         string
	embargo, lease            N
	parent, position, deleted N
	source, effEmb, effLease  N
	created, modified         int64
}

// Dest returns the destinations of ResourceCols.
func (s *RowScan[N]) Dest() []any {
	return []any{&s.row.Key, &s.kind, &s.vis, &s.embargo, &s.lease, &s.parent, &s.position, &s.row.Version, &s.row.Seq,
		&s.created, &s.modified, &s.deleted, &s.source, &s.effVis, &s.effEmb, &s.effLease}
}

// nullTime is the time of stored microseconds, nil for NULL.
func nullTime[N NullInt](v N) *time.Time {
	n, ok := v.Get()
	if !ok {
		return nil
	}
	t := FromMicros(n)
	return &t
}

// zero is the value of v, 0 for NULL.
func zero[N NullInt](v N) int64 {
	n, _ := v.Get()
	return n
}

// Result returns the row scanned.
func (s *RowScan[N]) Result() *shelfmark.ResourceRow {
	row := s.row
	row.Kind = shelfmark.Kind(s.kind)
	row.Visibility = shelfmark.Visibility(s.vis)
	row.Embargo = nullTime(s.embargo)
	row.Lease = nullTime(s.lease)
	row.Parent = zero(s.parent)
	row.Position = zero(s.position)
	row.Created = FromMicros(s.created)
	row.Modified = FromMicros(s.modified)
	row.Deleted = nullTime(s.deleted)
	row.Source = zero(s.source)
	row.Effective = shelfmark.Access{Visibility: shelfmark.Visibility(s.effVis), Embargo: nullTime(s.effEmb), Lease: nullTime(s.effLease)}
	return &row
}

// ResourceScanner returns a scanner of the rows of one statement of
// ResourceCols: its destinations are made once and scanned into for every
// row, and each row is copied out of them (one allocation a row; making
// the destinations for each row would be three).
func ResourceScanner[N NullInt]() func(Scanner) (*shelfmark.ResourceRow, error) {
	var s RowScan[N]
	dest := s.Dest()
	return func(r Scanner) (*shelfmark.ResourceRow, error) {
		if err := r.Scan(dest...); err != nil {
			return nil, err
		}
		return s.Result(), nil
	}
}

// ScanResourceAnd reads a row of ResourceCols followed by columns scanned
// into extra.
func ScanResourceAnd[N NullInt](r Scanner, extra ...any) (*shelfmark.ResourceRow, error) {
	var s RowScan[N]
	if err := r.Scan(append(s.Dest(), extra...)...); err != nil {
		return nil, err
	}
	return s.Result(), nil
}

// Resources is a dialect's statements of the resource reads of Tx. Their
// arguments are those of the methods named, in that order; a list is one
// argument bound by Dialect.Int64s.
type Resources struct {
	// ResourceScanner is ResourceScanner of the dialect's NullInt.
	ResourceScanner func() func(Scanner) (*shelfmark.ResourceRow, error)
	// ScanResourceAnd is ScanResourceAnd of the dialect's NullInt.
	ScanResourceAnd func(Scanner, ...any) (*shelfmark.ResourceRow, error)
	Resource        string // key; ResourceCols
	Resources       string // keys; ResourceCols
	Chain           string // key, n; ResourceCols, key first, then its parents
	MemberOf        string // key: collection keys
	Members         string // collection, after, limit; ResourceColsR
	MembersBefore   string // collection, before, limit; ResourceColsR
	Owned           string // user, before, kind, limit; ResourceColsR
	Roots           string // kind, before, limit; ResourceCols
	Children        string // parent, after, limit; ResourceCols
}

// ResourceRows runs a query of the dialect's resource rows.
func (t *Tx) ResourceRows(ctx context.Context, query string, args ...any) ([]*shelfmark.ResourceRow, error) {
	return Collect(ctx, t.q, query, args, t.d.ResourceScanner())
}

// Resource returns the row for key (deleted or not), or nil.
func (t *Tx) Resource(ctx context.Context, key int64) (*shelfmark.ResourceRow, error) {
	rows, err := t.ResourceRows(ctx, t.d.Resources.Resource, key)
	if err != nil {
		return nil, fmt.Errorf("%sread resource %d: %w", t.d.Prefix, key, err)
	}
	return first(rows), nil
}

// Resources returns the rows that exist among keys.
func (t *Tx) Resources(ctx context.Context, keys []int64) ([]*shelfmark.ResourceRow, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	rows, err := t.ResourceRows(ctx, t.d.Resources.Resources, t.d.Int64s(keys))
	if err != nil {
		return nil, fmt.Errorf("%sread %d resources: %w", t.d.Prefix, len(keys), err)
	}
	return rows, nil
}

// ResourceChain returns key's row and its parents' rows, nearest first, at
// most n: one statement, a primary-key read a level.
func (t *Tx) ResourceChain(ctx context.Context, key int64, n int) ([]*shelfmark.ResourceRow, error) {
	if n <= 0 {
		return nil, nil
	}
	rows, err := t.ResourceRows(ctx, t.d.Resources.Chain, key, n)
	if err != nil {
		return nil, fmt.Errorf("%sread resource %d and its parents: %w", t.d.Prefix, key, err)
	}
	return rows, nil
}

// MemberOf returns the live collections key belongs to, by key.
func (t *Tx) MemberOf(ctx context.Context, key int64) ([]int64, error) {
	out, err := Int64s(ctx, t.q, t.d.MemberOf, key)
	if err != nil {
		return nil, fmt.Errorf("%sread collections of %d: %w", t.d.Prefix, key, err)
	}
	return out, nil
}

// Members returns up to limit live members of collection with keys above
// after, by key: a keyset page of the memberships primary key, whose cost
// does not depend on its depth.
func (t *Tx) Members(ctx context.Context, collection, after int64, limit int) ([]*shelfmark.ResourceRow, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := t.ResourceRows(ctx, t.d.Members, collection, after, int64(limit))
	if err != nil {
		return nil, fmt.Errorf("%sread members of %d: %w", t.d.Prefix, collection, err)
	}
	return rows, nil
}

// MembersBefore returns up to limit live members of collection with keys
// below before (0: no bound), from the highest: a keyset page of the
// memberships primary key read backwards.
func (t *Tx) MembersBefore(ctx context.Context, collection, before int64, limit int) ([]*shelfmark.ResourceRow, error) {
	if limit <= 0 {
		return nil, nil
	}
	if before <= 0 {
		before = math.MaxInt64
	}
	rows, err := t.ResourceRows(ctx, t.d.MembersBefore, collection, before, int64(limit))
	if err != nil {
		return nil, fmt.Errorf("%sread members of %d: %w", t.d.Prefix, collection, err)
	}
	return rows, nil
}

// Owned returns up to limit live resources of kind that user deposited,
// with keys below before (0: no bound), from the highest, over
// owners_user.
func (t *Tx) Owned(ctx context.Context, user int64, kind shelfmark.Kind, before int64, limit int) ([]*shelfmark.ResourceRow, error) {
	if limit <= 0 {
		return nil, nil
	}
	if before <= 0 {
		before = math.MaxInt64
	}
	rows, err := t.ResourceRows(ctx, t.d.Owned, user, before, string(kind), int64(limit))
	if err != nil {
		return nil, fmt.Errorf("%sread the %ss of user %d: %w", t.d.Prefix, kind, user, err)
	}
	return rows, nil
}

// Roots returns up to limit live resources of kind without a parent with
// keys below before (0: no bound), from the highest, over resources_roots.
func (t *Tx) Roots(ctx context.Context, kind shelfmark.Kind, before int64, limit int) ([]*shelfmark.ResourceRow, error) {
	if limit <= 0 {
		return nil, nil
	}
	if before <= 0 {
		before = math.MaxInt64
	}
	rows, err := t.ResourceRows(ctx, t.d.Roots, string(kind), before, int64(limit))
	if err != nil {
		return nil, fmt.Errorf("%sread %ss: %w", t.d.Prefix, kind, err)
	}
	return rows, nil
}

// Children returns up to limit live children of parent with positions
// above after, by position, over the index on (parent, position).
func (t *Tx) Children(ctx context.Context, parent, after int64, limit int) ([]*shelfmark.ResourceRow, error) {
	if limit <= 0 {
		return nil, nil
	}
	rows, err := t.ResourceRows(ctx, t.d.Children, parent, after, int64(limit))
	if err != nil {
		return nil, fmt.Errorf("%sread children of %d: %w", t.d.Prefix, parent, err)
	}
	return rows, nil
}
