package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
)

const resourceCols = `key, kind, visibility, embargo, lease, parent, position, version, seq, created, modified, deleted, source, eff_visibility, eff_embargo, eff_lease`

// the same columns qualified with the alias r, for joins
var resourceColsR = "r." + strings.ReplaceAll(resourceCols, ", ", ", r.")

// rowScan holds the destinations of resourceCols, in their order, and
// builds the row scanned into them, so that a query returning more
// columns after them (ChildFiles) shares the scanning.
type rowScan struct {
	row                       shelfmark.ResourceRow
	kind, vis, effVis         string
	embargo, lease            sql.NullInt64
	parent, position, deleted sql.NullInt64
	source, effEmb, effLease  sql.NullInt64
	created, modified         int64
}

// dest returns the destinations of resourceCols.
func (s *rowScan) dest() []any {
	return []any{&s.row.Key, &s.kind, &s.vis, &s.embargo, &s.lease, &s.parent, &s.position, &s.row.Version, &s.row.Seq,
		&s.created, &s.modified, &s.deleted, &s.source, &s.effVis, &s.effEmb, &s.effLease}
}

// result returns the row scanned.
func (s *rowScan) result() *shelfmark.ResourceRow {
	row := s.row
	row.Kind = shelfmark.Kind(s.kind)
	row.Visibility = shelfmark.Visibility(s.vis)
	row.Embargo = microsPtr(s.embargo)
	row.Lease = microsPtr(s.lease)
	row.Parent = s.parent.Int64
	row.Position = s.position.Int64
	row.Created = time.UnixMicro(s.created).UTC()
	row.Modified = time.UnixMicro(s.modified).UTC()
	row.Deleted = microsPtr(s.deleted)
	row.Source = s.source.Int64
	row.Effective = shelfmark.Access{Visibility: shelfmark.Visibility(s.effVis), Embargo: microsPtr(s.effEmb), Lease: microsPtr(s.effLease)}
	return &row
}

func scanResource(r *sql.Rows) (*shelfmark.ResourceRow, error) {
	var s rowScan
	if err := r.Scan(s.dest()...); err != nil {
		return nil, err
	}
	return s.result(), nil
}

func microsPtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := time.UnixMicro(v.Int64).UTC()
	return &t
}

func nullMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

func nullInt(v int64) any {
	if v == 0 {
		return nil
	}
	return v
}

// jsonInts encodes keys as a JSON array for json_each().
func jsonInts(keys []int64) string {
	b, _ := json.Marshal(keys)
	return string(b)
}

// Resource returns the row of key or nil.
func (t *tx) Resource(ctx context.Context, key int64) (*shelfmark.ResourceRow, error) {
	var out *shelfmark.ResourceRow
	err := t.query(ctx, `SELECT `+resourceCols+` FROM resources WHERE key = ?`, []any{key}, func(r *sql.Rows) (err error) {
		out, err = scanResource(r)
		return err
	})
	return out, err
}

// Resources returns the rows that exist among keys.
func (t *tx) Resources(ctx context.Context, keys []int64) ([]*shelfmark.ResourceRow, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	var out []*shelfmark.ResourceRow
	err := t.query(ctx, `SELECT `+resourceCols+` FROM resources WHERE key IN (SELECT value FROM json_each(?))`, []any{jsonInts(keys)}, func(r *sql.Rows) error {
		row, err := scanResource(r)
		out = append(out, row)
		return err
	})
	return out, err
}

// MemberOf returns the live collections key belongs to.
func (t *tx) MemberOf(ctx context.Context, key int64) ([]int64, error) {
	var out []int64
	err := t.query(ctx, `SELECT m.collection FROM memberships m JOIN resources r ON r.key = m.collection
		WHERE m.member = ? AND r.deleted IS NULL ORDER BY m.collection`, []any{key}, func(r *sql.Rows) error {
		var k int64
		err := r.Scan(&k)
		out = append(out, k)
		return err
	})
	return out, err
}

// Members pages through a collection's live members by key.
func (t *tx) Members(ctx context.Context, collection, after int64, limit int) ([]*shelfmark.ResourceRow, error) {
	var out []*shelfmark.ResourceRow
	err := t.query(ctx, `SELECT `+resourceColsR+` FROM memberships m JOIN resources r ON r.key = m.member
		WHERE m.collection = ? AND m.member > ? AND r.deleted IS NULL ORDER BY m.member LIMIT ?`,
		[]any{collection, after, limit}, func(r *sql.Rows) error {
			row, err := scanResource(r)
			out = append(out, row)
			return err
		})
	return out, err
}

// Roots pages through the live resources of kind without a parent, by
// key from the highest, over resources_roots.
func (t *tx) Roots(ctx context.Context, kind shelfmark.Kind, before int64, limit int) ([]*shelfmark.ResourceRow, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	var out []*shelfmark.ResourceRow
	err := t.query(ctx, `SELECT `+resourceCols+` FROM resources INDEXED BY resources_roots
		WHERE kind = ? AND parent IS NULL AND deleted IS NULL AND key < ? ORDER BY key DESC LIMIT ?`,
		[]any{string(kind), before, limit}, func(r *sql.Rows) error {
			row, err := scanResource(r)
			out = append(out, row)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("sqlite: read %ss: %w", kind, err)
	}
	return out, nil
}

// Children pages through a parent's live children by position.
func (t *tx) Children(ctx context.Context, parent, after int64, limit int) ([]*shelfmark.ResourceRow, error) {
	var out []*shelfmark.ResourceRow
	err := t.query(ctx, `SELECT `+resourceCols+` FROM resources
		WHERE parent = ? AND position > ? AND deleted IS NULL ORDER BY position LIMIT ?`,
		[]any{parent, after, limit}, func(r *sql.Rows) error {
			row, err := scanResource(r)
			out = append(out, row)
			return err
		})
	return out, err
}

// InsertResources inserts rows, up to 64 per statement.
func (t *tx) InsertResources(ctx context.Context, rows []*shelfmark.ResourceRow) error {
	const width = 16
	return chunked(len(rows), func(lo, hi int) error {
		args := make([]any, 0, (hi-lo)*width)
		for _, r := range rows[lo:hi] {
			args = append(args, r.Key, string(r.Kind), string(r.Visibility), nullMicros(r.Embargo), nullMicros(r.Lease), nullInt(r.Parent),
				nullInt(r.Position), r.Version, r.Seq, r.Created.UnixMicro(), r.Modified.UnixMicro(), nullMicros(r.Deleted),
				nullInt(r.Source), string(r.Effective.Visibility), nullMicros(r.Effective.Embargo), nullMicros(r.Effective.Lease))
		}
		_, err := t.exec(ctx, `INSERT INTO resources (`+resourceCols+`) VALUES `+placeholders(hi-lo, width), args...)
		return err
	})
}

// UpdateResource writes a row's mutable fields.
func (t *tx) UpdateResource(ctx context.Context, r *shelfmark.ResourceRow) error {
	n, err := t.exec(ctx, `UPDATE resources SET visibility = ?, embargo = ?, lease = ?, version = ?, seq = ?, modified = ?, deleted = ?,
		eff_visibility = ?, eff_embargo = ?, eff_lease = ? WHERE key = ?`,
		string(r.Visibility), nullMicros(r.Embargo), nullMicros(r.Lease), r.Version, r.Seq, r.Modified.UnixMicro(), nullMicros(r.Deleted),
		string(r.Effective.Visibility), nullMicros(r.Effective.Embargo), nullMicros(r.Effective.Lease), r.Key)
	if err != nil {
		return err
	} else if n != 1 {
		return fmt.Errorf("update resource %d: %d rows", r.Key, n)
	}
	return nil
}

// SetEffectiveAccess writes the effective access and seq of rows in one
// statement whatever their number: the values travel as one JSON array.
func (t *tx) SetEffectiveAccess(ctx context.Context, rows []*shelfmark.ResourceRow) error {
	if len(rows) == 0 {
		return nil
	}
	vals := make([][5]any, len(rows))
	for i, r := range rows {
		vals[i] = [5]any{r.Key, string(r.Effective.Visibility), nullMicros(r.Effective.Embargo), nullMicros(r.Effective.Lease), r.Seq}
	}
	b, err := json.Marshal(vals)
	if err != nil {
		return fmt.Errorf("sqlite: effective access of %d resources: %w", len(rows), err)
	}
	if _, err := t.exec(ctx, `UPDATE resources SET eff_visibility = v.vis, eff_embargo = v.emb, eff_lease = v.lease, seq = v.seq
		FROM (SELECT value ->> 0 AS k, value ->> 1 AS vis, value ->> 2 AS emb, value ->> 3 AS lease, value ->> 4 AS seq FROM json_each(?)) AS v
		WHERE resources.key = v.k`, string(b)); err != nil {
		return fmt.Errorf("sqlite: effective access of %d resources: %w", len(rows), err)
	}
	return nil
}

// AccessDependents returns the live children of keys and the live files
// made from them, over resources_children and resources_source.
func (t *tx) AccessDependents(ctx context.Context, keys []int64) ([]*shelfmark.ResourceRow, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	k := jsonInts(keys)
	var out []*shelfmark.ResourceRow
	err := t.query(ctx, `SELECT `+resourceCols+` FROM resources WHERE parent IN (SELECT value FROM json_each(?)) AND deleted IS NULL
		UNION SELECT `+resourceCols+` FROM resources WHERE source IN (SELECT value FROM json_each(?)) AND deleted IS NULL`,
		[]any{k, k}, func(r *sql.Rows) error {
			row, err := scanResource(r)
			out = append(out, row)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("sqlite: what depends on the access of %d resources: %w", len(keys), err)
	}
	return out, nil
}

// SetPositions orders parent's children in two statements.
func (t *tx) SetPositions(ctx context.Context, parent int64, children []int64) error {
	if _, err := t.exec(ctx, `UPDATE resources SET position = ? + key WHERE parent = ? AND position < ?`,
		shelfmark.UnorderedBase, parent, shelfmark.UnorderedBase); err != nil {
		return err
	}
	if len(children) == 0 {
		return nil
	}
	_, err := t.exec(ctx, `UPDATE resources SET position = o.pos
		FROM (SELECT CAST(value AS INTEGER) AS k, CAST(key AS INTEGER) + 1 AS pos FROM json_each(?)) AS o
		WHERE resources.key = o.k`, jsonInts(children))
	return err
}

// Tombstone marks key and its descendants deleted.
func (t *tx) Tombstone(ctx context.Context, key, seq int64, at time.Time) (int64, error) {
	// the resource, its descendants, and the files made from any of them
	const tree = `WITH RECURSIVE below(key) AS (SELECT ? UNION SELECT r.key FROM resources r JOIN below ON r.parent = below.key),
		tree(key) AS (SELECT key FROM below UNION SELECT r.key FROM resources r JOIN below ON r.source = below.key) `
	n, err := t.exec(ctx, tree+`UPDATE resources SET deleted = ?, seq = ?, version = version + 1, modified = ?
		WHERE key IN (SELECT key FROM tree) AND deleted IS NULL`, key, at.UnixMicro(), seq, at.UnixMicro())
	if err != nil {
		return 0, err
	}
	if _, err := t.exec(ctx, tree+`DELETE FROM fields WHERE resource IN (SELECT key FROM tree)`, key); err != nil {
		return 0, err
	}
	if _, err := t.exec(ctx, tree+`DELETE FROM memberships WHERE member IN (SELECT key FROM tree)`, key); err != nil {
		return 0, err
	}
	return n, nil
}

// chunkSize is the most rows one multi-row INSERT carries.
const chunkSize = 64

// chunked calls fn for consecutive ranges of at most chunkSize of n items.
func chunked(n int, fn func(lo, hi int) error) error {
	for lo := 0; lo < n; lo += chunkSize {
		if err := fn(lo, min(lo+chunkSize, n)); err != nil {
			return err
		}
	}
	return nil
}

// placeholders returns "(?,?,…),(…)" for rows rows of width columns.
func placeholders(rows, width int) string {
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", width), ",") + ")"
	return strings.TrimSuffix(strings.Repeat(one+",", rows), ",")
}
