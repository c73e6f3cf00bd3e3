package sqlite

import (
	"context"

	"github.com/shelfmark/shelfmark"
)

// PutFields upserts fields with objects and deletes those without, up to
// 64 rows per statement.
func (t *writeTx) PutFields(ctx context.Context, keys []int64, fields []shelfmark.Field) error {
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
