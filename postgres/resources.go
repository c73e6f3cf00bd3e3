package postgres

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/shelfmark/shelfmark"
)

func micros(t time.Time) int64 { return t.UnixMicro() }

// setPositionsSQL orders a parent's children in one statement. $1 is the
// parent, $2 the ordered children. The rows it considers are the children
// now ordered (position < UnorderedBase, a range of the (parent, position)
// index) and the unordered children that $2 names; each gets its index in
// $2 (1-based) or, when $2 does not name it, UnorderedBase+key. Rows whose
// position would not change are dropped before the update, so applying the
// same order twice writes nothing, and unordered children that stay
// unordered are never read.
//
// The UPDATE finds its rows by the ctid (physical address) read in x, not
// by key: a TID scan instead of one primary key lookup per row (5–9% of
// the statement's time for 1,200 children). A ctid identifies the row
// version this statement's snapshot sees, and nothing else can update it in
// the meantime: every write transaction holds the writer lock (see the
// package documentation). Without that lock a concurrently updated row
// would be skipped (its new version has another ctid), not reordered.
//
// The cost per row is writing the new row version into the heap and into
// all three indexes of resources: an update of position can never be HOT
// (resources_children indexes it), so even resources_seq, whose key does
// not change, gets a new entry for every reordered child.
var setPositionsSQL = `WITH u AS (
    SELECT key, ord FROM unnest($2::bigint[]) WITH ORDINALITY AS u(key, ord)
), x AS (
    SELECT c.ctid AS tid, c.position AS old, COALESCE(u.ord, ` + strconv.FormatInt(shelfmark.UnorderedBase, 10) + ` + c.key) AS pos
    FROM resources c LEFT JOIN u ON u.key = c.key
    WHERE c.parent = $1 AND c.position < ` + strconv.FormatInt(shelfmark.UnorderedBase, 10) + `
  UNION ALL
    SELECT c.ctid, c.position, u.ord
    FROM u JOIN resources c ON c.key = u.key
    WHERE c.parent = $1 AND (c.position >= ` + strconv.FormatInt(shelfmark.UnorderedBase, 10) + ` OR c.position IS NULL)
)
UPDATE resources r SET position = x.pos FROM x
WHERE r.ctid = x.tid AND x.old IS DISTINCT FROM x.pos`

// SetPositions gives children[i] position i+1 and every other child of
// parent that had an order position UnorderedBase+key, in one statement
// whatever the number of children. Only positions change. Keys in children
// that are not children of parent are ignored.
func (t *writeTx) SetPositions(ctx context.Context, parent int64, children []int64) error {
	if children == nil {
		children = []int64{}
	}
	if _, err := t.r.exec(ctx, setPositionsSQL, parent, children); err != nil {
		return fmt.Errorf("postgres: order %d children of %d: %w", len(children), parent, err)
	}
	return nil
}

// tombstoneSQL marks $1 and its live descendants deleted (recursively over
// parent), removes their statements and the memberships where they are the
// member, and returns how many resources it marked. Memberships where they
// are the collection stay (there may be millions): reads join live rows.
// Every data-modifying CTE runs to completion whether or not it is read.
const tombstoneSQL = `WITH RECURSIVE below(key) AS (
    SELECT key FROM resources WHERE key = $1 AND deleted IS NULL
  UNION
    SELECT r.key FROM resources r JOIN below ON r.parent = below.key WHERE r.deleted IS NULL
), t(key) AS (
    SELECT key FROM below
  UNION
    SELECT r.key FROM resources r JOIN below ON r.source = below.key WHERE r.deleted IS NULL
), marked AS (
    UPDATE resources r SET deleted = $3, seq = $2, version = r.version + 1, modified = $3
    FROM t WHERE r.key = t.key
    RETURNING r.key
), ds AS (
    DELETE FROM fields s USING marked m WHERE s.resource = m.key
), dm AS (
    DELETE FROM memberships ms USING marked m WHERE ms.member = m.key
)
SELECT count(*) FROM marked`

// Tombstone marks key, its live descendants and the live files made from
// any of them deleted at the given time and sequence number, in one
// statement, and returns how many it marked.
// Descendants already deleted are left as they are.
func (t *writeTx) Tombstone(ctx context.Context, key, seq int64, at time.Time) (int64, error) {
	var n int64
	if err := t.r.queryRow(ctx, tombstoneSQL, []any{key, seq, micros(at)}, &n); err != nil {
		return 0, fmt.Errorf("postgres: delete resource %d: %w", key, err)
	}
	return n, nil
}
