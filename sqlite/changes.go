package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
)

// FilesOfWorks returns, for each of works, its live file sets' live files
// of the given use in public view at now, in the file sets' order (then the files' own), in one
// statement: the works' children from resources_children, their children
// likewise, and each file's description.
func (t *tx) FilesOfWorks(ctx context.Context, works []int64, use string, now time.Time) (map[int64][]*shelfmark.File, error) {
	out := map[int64][]*shelfmark.File{}
	if len(works) == 0 {
		return out, nil
	}
	err := t.query(ctx, `SELECT fs.parent, f.name, f.media_type, f.size, f.sha256, f.sha512, f.md5, f.use, f.external_url
		FROM resources fs
		JOIN resources fr ON fr.parent = fs.key
		JOIN files f ON f.resource = fr.key
		WHERE fs.parent IN (SELECT value FROM json_each(?)) AND fs.kind = 'fileset' AND fs.deleted IS NULL
		  AND fr.kind = 'file' AND fr.deleted IS NULL AND f.use = ? AND `+strings.ReplaceAll(searchVisible, "r.", "fr.")+`
		ORDER BY fs.parent, fs.position, fr.position, fr.key`,
		append([]any{jsonInts(works), use}, visibleArgs(now)...), func(r *sql.Rows) error {
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
		return nil, fmt.Errorf("sqlite: %s files of %d works: %w", use, len(works), err)
	}
	return out, nil
}

// AccessEnds returns the keys of the works and collections whose
// effective embargo or lease ends in (after, until], ascending, from the
// partial indexes resources_eff_embargo and resources_eff_lease.
func (t *tx) AccessEnds(ctx context.Context, after, until time.Time) ([]int64, error) {
	var out []int64
	a, u := after.UnixMicro(), until.UnixMicro()
	err := t.query(ctx, `SELECT key FROM resources WHERE eff_embargo > ? AND eff_embargo <= ? AND eff_embargo IS NOT NULL AND kind IN ('work', 'collection')
		UNION SELECT key FROM resources WHERE eff_lease > ? AND eff_lease <= ? AND eff_lease IS NOT NULL AND kind IN ('work', 'collection')
		ORDER BY key`,
		[]any{a, u, a, u}, func(r *sql.Rows) error {
			var k int64
			err := r.Scan(&k)
			out = append(out, k)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("sqlite: access ending in (%s, %s]: %w", after.Format(time.RFC3339), until.Format(time.RFC3339), err)
	}
	return out, nil
}
