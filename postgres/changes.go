package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
)

// FilesOfWorks returns, for each of works, its live file sets' live files
// of the given use in public view at now, in the file sets' order (then the files' own), in one
// statement: the works' children from resources_children, their children
// likewise, and each file's description.
func (t *readTx) FilesOfWorks(ctx context.Context, works []int64, use string, now time.Time) (map[int64][]*shelfmark.File, error) {
	out := map[int64][]*shelfmark.File{}
	if len(works) == 0 {
		return out, nil
	}
	_, err := t.r.query(ctx, `SELECT fs.parent, f.name, f.media_type, f.size, f.sha256, f.sha512, f.md5, f.use, f.external_url
FROM resources fs
JOIN resources fr ON fr.parent = fs.key
JOIN files f ON f.resource = fr.key
WHERE fs.parent = ANY($1) AND fs.kind = 'fileset' AND fs.deleted IS NULL
  AND fr.kind = 'file' AND fr.deleted IS NULL AND f.use = $2
  AND fr.eff_visibility = 'public' AND (fr.eff_embargo IS NULL OR fr.eff_embargo <= $3) AND (fr.eff_lease IS NULL OR fr.eff_lease > $3)
ORDER BY fs.parent, fs.position, fr.position, fr.key`, []any{works, use, micros(now)}, func(rows pgx.Rows) error {
		var (
			work int64
			f    shelfmark.File
		)
		if err := rows.Scan(&work, &f.Name, &f.MediaType, &f.Size, &f.SHA256, &f.SHA512, &f.MD5, &f.Use, &f.ExternalURL); err != nil {
			return err
		}
		out[work] = append(out[work], &f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: %s files of %d works: %w", use, len(works), err)
	}
	return out, nil
}

// AccessEnds returns the keys of the works and collections whose
// effective embargo or lease ends in (after, until], ascending, from the
// partial indexes resources_eff_embargo and resources_eff_lease.
func (t *readTx) AccessEnds(ctx context.Context, after, until time.Time) ([]int64, error) {
	var out []int64
	_, err := t.r.query(ctx, `SELECT key FROM resources WHERE eff_embargo > $1 AND eff_embargo <= $2 AND eff_embargo IS NOT NULL AND kind IN ('work', 'collection')
UNION SELECT key FROM resources WHERE eff_lease > $1 AND eff_lease <= $2 AND eff_lease IS NOT NULL AND kind IN ('work', 'collection')
ORDER BY key`,
		[]any{micros(after), micros(until)}, func(rows pgx.Rows) error {
			var k int64
			err := rows.Scan(&k)
			out = append(out, k)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("postgres: access ending in (%s, %s]: %w", after.Format(time.RFC3339), until.Format(time.RFC3339), err)
	}
	return out, nil
}
