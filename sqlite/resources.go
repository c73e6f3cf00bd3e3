package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

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

// InsertResources inserts rows, up to 64 per statement.
func (t *writeTx) InsertResources(ctx context.Context, rows []*shelfmark.ResourceRow) error {
	const width = 16
	return chunked(len(rows), func(lo, hi int) error {
		args := make([]any, 0, (hi-lo)*width)
		for _, r := range rows[lo:hi] {
			args = append(args, r.Key, string(r.Kind), string(r.Visibility), nullMicros(r.Embargo), nullMicros(r.Lease), nullInt(r.Parent),
				nullInt(r.Position), r.Version, r.Seq, r.Created.UnixMicro(), r.Modified.UnixMicro(), nullMicros(r.Deleted),
				nullInt(r.Source), string(r.Effective.Visibility), nullMicros(r.Effective.Embargo), nullMicros(r.Effective.Lease))
		}
		_, err := t.exec(ctx, `INSERT INTO resources (`+sqlstore.ResourceCols+`) VALUES `+placeholders(hi-lo, width), args...)
		return err
	})
}

// UpdateResource writes a row's mutable fields.
func (t *writeTx) UpdateResource(ctx context.Context, r *shelfmark.ResourceRow) error {
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
func (t *writeTx) SetEffectiveAccess(ctx context.Context, rows []*shelfmark.ResourceRow) error {
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
func (t *readTx) AccessDependents(ctx context.Context, keys []int64) ([]*shelfmark.ResourceRow, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	k := jsonInts(keys)
	var out []*shelfmark.ResourceRow
	err := t.query(ctx, `SELECT `+sqlstore.ResourceCols+` FROM resources WHERE parent IN (SELECT value FROM json_each(?)) AND deleted IS NULL
		UNION SELECT `+sqlstore.ResourceCols+` FROM resources WHERE source IN (SELECT value FROM json_each(?)) AND deleted IS NULL`,
		[]any{k, k}, func(r *sql.Rows) error {
			row, err := sqlstore.ScanResource[nullable](r)
			out = append(out, row)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("sqlite: what depends on the access of %d resources: %w", len(keys), err)
	}
	return out, nil
}

// SetPositions orders parent's children in two statements.
func (t *writeTx) SetPositions(ctx context.Context, parent int64, children []int64) error {
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
func (t *writeTx) Tombstone(ctx context.Context, key, seq int64, at time.Time) (int64, error) {
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
