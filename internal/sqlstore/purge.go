package sqlstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/shelfmark/shelfmark"
)

// purgeTreeSQL lists the tree a purge removes: $1, its descendants at any
// depth (live or deleted) and the files made from any of them, each with
// its kind and its file's digest (empty for none), at most $2 rows. One
// recursive walk of resources_children.
const purgeTreeSQL = `WITH RECURSIVE below(key) AS (
    SELECT key FROM resources WHERE key = $1
  UNION
    SELECT r.key FROM resources r JOIN below ON r.parent = below.key
), tree(key) AS (
    SELECT key FROM below
  UNION
    SELECT r.key FROM resources r JOIN below ON r.source = below.key
)
SELECT r.key, r.kind, COALESCE(f.sha256, '') FROM tree t JOIN resources r ON r.key = t.key
LEFT JOIN files f ON f.resource = r.key ORDER BY r.key LIMIT $2`

// purgeWebSQL counts the web archive files among the tree's files.
const purgeWebSQL = `SELECT count(*) FROM web_files WHERE file = ANY($1)`

// purgeDeletes remove every row of the purged keys ($1), one statement a
// table; the resources go last.
var purgeDeletes = []string{
	`DELETE FROM fields WHERE resource = ANY($1)`,
	`DELETE FROM memberships WHERE member = ANY($1)`,
	`DELETE FROM memberships WHERE collection = ANY($1)`,
	`DELETE FROM files WHERE resource = ANY($1)`,
	`DELETE FROM sources WHERE resource = ANY($1)`,
	`DELETE FROM jobs WHERE resource = ANY($1)`,
	`DELETE FROM grants WHERE resource = ANY($1)`,
	`DELETE FROM access_requests WHERE resource = ANY($1)`,
	`DELETE FROM owners WHERE resource = ANY($1)`,
	`DELETE FROM resources WHERE key = ANY($1)`,
}

// PurgeTree implements shelfmark.WriteTx: it reads the tree (one
// statement, at most limit+1 rows, else EINVALID), refuses a tree holding
// web archive files (EINVALID), then deletes the tree's rows of every
// table in one statement each (len(purgeDeletes) statements whatever the
// tree's size). The search documents and the OAI-PMH view are the
// engine's (Repository.Purge). The statements are rebound for the dialect
// on each call (a purge is rare).
func (w *WriteTx) PurgeTree(ctx context.Context, key int64, limit int) (*shelfmark.Purged, error) {
	if limit <= 0 {
		limit = shelfmark.MaxPurge
	}
	p := &shelfmark.Purged{}
	seen := map[string]bool{}
	var files []int64
	err := w.q.EachRow(ctx, w.d.Rebind(purgeTreeSQL), []any{key, int64(limit) + 1}, func(r Scanner) error {
		var k int64
		var kind, sha string
		if err := r.Scan(&k, &kind, &sha); err != nil {
			return err
		}
		p.Keys = append(p.Keys, k)
		switch shelfmark.Kind(kind) {
		case shelfmark.KindWork:
			p.Objects = append(p.Objects, k)
		case shelfmark.KindCollection:
			p.Objects = append(p.Objects, k)
			p.Collections = append(p.Collections, k)
		case shelfmark.KindFile:
			files = append(files, k)
		}
		if sha != "" && !seen[sha] {
			seen[sha] = true
			p.SHA256 = append(p.SHA256, sha)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%spurge %d: read the tree: %w", w.d.Prefix, key, err)
	}
	switch {
	case len(p.Keys) == 0:
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "Resource not found.")
	case len(p.Keys) > limit:
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "The resource holds more than %d resources: too many to purge at once.", limit)
	}
	if len(files) > 0 {
		var n int64
		if err := Row(ctx, w.q, w.d.Rebind(purgeWebSQL), []any{w.d.Int64s(files)}, &n); err != nil {
			return nil, fmt.Errorf("%spurge %d: web archives: %w", w.d.Prefix, key, err)
		}
		if n > 0 {
			return nil, shelfmark.Errorf(shelfmark.EINVALID, "The resource holds %d web archive files: purging web archives is not supported yet.", n)
		}
	}
	keys := w.d.Int64s(p.Keys)
	for _, stmt := range purgeDeletes {
		if _, err := w.q.Exec(ctx, w.d.Rebind(stmt), keys); err != nil {
			return nil, fmt.Errorf("%spurge %d: %w", w.d.Prefix, key, err)
		}
	}
	slices.Sort(p.SHA256)
	return p, nil
}
