package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// changesSQL reads the resources changed after a seq, in seq order (then
// key), from one range of resources_seq (seq, key): a page costs the same
// at any depth. One commit gives one seq to every resource an operation
// changes (a group, a tombstoned tree), so a page may end inside a seq; the
// caller resumes after the last seq it has read whole.
const changesSQL = `SELECT ` + sqlstore.ResourceCols + ` FROM resources WHERE seq > ? ORDER BY seq, key LIMIT ?`

// Changes returns up to limit resources, live or tombstoned, whose seq is
// above after, by seq (then key).
func (t *tx) Changes(ctx context.Context, after int64, limit int) ([]*shelfmark.ResourceRow, error) {
	if limit <= 0 {
		return nil, nil
	}
	out, err := t.ResourceRows(ctx, changesSQL, after, limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: changes after %d: %w", after, err)
	}
	return out, nil
}

// FieldsOf returns the fields of each of keys, sorted by predicate, in one
// statement over the fields primary key.
func (t *tx) FieldsOf(ctx context.Context, keys []int64) (map[int64][]shelfmark.Field, error) {
	out := map[int64][]shelfmark.Field{}
	if len(keys) == 0 {
		return out, nil
	}
	err := t.query(ctx, `SELECT resource, predicate, objects FROM fields
		WHERE resource IN (SELECT value FROM json_each(?)) ORDER BY resource, predicate`,
		[]any{jsonInts(keys)}, func(r *sql.Rows) error {
			var (
				key int64
				f   shelfmark.Field
				raw []byte
			)
			if err := r.Scan(&key, &f.Predicate, &raw); err != nil {
				return err
			}
			objs, err := shelfmark.DecodeObjects(raw)
			if err != nil {
				return fmt.Errorf("resource %d field %s: %w", key, f.Predicate, err)
			}
			f.Objects = objs
			out[key] = append(out[key], f)
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("sqlite: fields of %d resources: %w", len(keys), err)
	}
	return out, nil
}

// MemberOfMany returns the live collections of each of keys, ascending,
// in one statement over memberships_member.
func (t *tx) MemberOfMany(ctx context.Context, keys []int64) (map[int64][]int64, error) {
	out := map[int64][]int64{}
	if len(keys) == 0 {
		return out, nil
	}
	err := t.query(ctx, `SELECT m.member, m.collection FROM memberships m JOIN resources r ON r.key = m.collection
		WHERE m.member IN (SELECT value FROM json_each(?)) AND r.deleted IS NULL ORDER BY m.member, m.collection`,
		[]any{jsonInts(keys)}, func(r *sql.Rows) error {
			var m, c int64
			err := r.Scan(&m, &c)
			out[m] = append(out[m], c)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("sqlite: collections of %d resources: %w", len(keys), err)
	}
	return out, nil
}

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
