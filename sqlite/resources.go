package sqlite

import (
	"context"
	"encoding/json"
	"time"

	"github.com/shelfmark/shelfmark"
)

// jsonInts encodes keys as a JSON array for json_each().
func jsonInts(keys []int64) string {
	b, _ := json.Marshal(keys)
	return string(b)
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
