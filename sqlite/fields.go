package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/shelfmark/shelfmark"
)

// Fields returns a resource's fields, sorted by predicate.
func (t *tx) Fields(ctx context.Context, key int64, predicates ...string) ([]shelfmark.Field, error) {
	q := `SELECT predicate, objects FROM fields WHERE resource = ? ORDER BY predicate`
	args := []any{key}
	if len(predicates) > 0 {
		b, _ := json.Marshal(predicates)
		q = `SELECT predicate, objects FROM fields WHERE resource = ? AND predicate IN (SELECT value FROM json_each(?)) ORDER BY predicate`
		args = append(args, string(b))
	}
	var out []shelfmark.Field
	err := t.query(ctx, q, args, func(r *sql.Rows) error {
		var f shelfmark.Field
		var raw []byte
		if err := r.Scan(&f.Predicate, &raw); err != nil {
			return err
		}
		objs, err := shelfmark.DecodeObjects(raw)
		if err != nil {
			return fmt.Errorf("resource %d field %s: %w", key, f.Predicate, err)
		}
		f.Objects = objs
		out = append(out, f)
		return nil
	})
	return out, err
}

// PutFields upserts fields with objects and deletes those without, up to
// 64 rows per statement.
func (t *tx) PutFields(ctx context.Context, keys []int64, fields []shelfmark.Field) error {
	var putArgs, delArgs []any
	for i, f := range fields {
		if len(f.Objects) == 0 {
			delArgs = append(delArgs, keys[i], f.Predicate)
		} else {
			putArgs = append(putArgs, keys[i], f.Predicate, shelfmark.EncodeObjects(f.Objects))
		}
	}
	err := chunked(len(putArgs)/3, func(lo, hi int) error {
		_, err := t.exec(ctx, `INSERT INTO fields (resource, predicate, objects) VALUES `+placeholders(hi-lo, 3)+`
			ON CONFLICT (resource, predicate) DO UPDATE SET objects = excluded.objects`, putArgs[lo*3:hi*3]...)
		return err
	})
	if err != nil {
		return err
	}
	return chunked(len(delArgs)/2, func(lo, hi int) error {
		_, err := t.exec(ctx, `DELETE FROM fields WHERE (resource, predicate) IN (VALUES `+placeholders(hi-lo, 2)+`)`, delArgs[lo*2:hi*2]...)
		return err
	})
}
