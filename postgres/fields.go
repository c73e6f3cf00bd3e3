package postgres

import (
	"context"
	"fmt"

	"github.com/shelfmark/shelfmark"
)

// fieldColumns are the columns of fields, for COPY.
var fieldColumns = []string{"resource", "predicate", "objects"}

// PutFields upserts the fields that have objects and deletes those that
// have none: a number of statements that does not depend on the number of
// fields, with the rows in arrays (unnest). Many fields to upsert (the new
// resources of a batch) are first tried with COPY inside a savepoint; if
// one of them exists already, the COPY is undone and the upsert runs.
func (t *writeTx) PutFields(ctx context.Context, keys []int64, fields []shelfmark.Field) error {
	if len(keys) != len(fields) {
		return fmt.Errorf("postgres: put fields: %d keys for %d fields", len(keys), len(fields))
	}
	var putKeys, delKeys []int64
	var putPreds, delPreds []string
	var putObjs [][]byte
	for i, f := range fields {
		if len(f.Objects) == 0 {
			delKeys, delPreds = append(delKeys, keys[i]), append(delPreds, f.Predicate)
		} else {
			putKeys, putPreds = append(putKeys, keys[i]), append(putPreds, f.Predicate)
			putObjs = append(putObjs, shelfmark.EncodeObjects(f.Objects))
		}
	}
	if t.copyInSavepoint(len(putKeys)) {
		conflict, err := t.r.copyNew(ctx, "fields", fieldColumns, len(putKeys), func(i int) []any {
			return []any{putKeys[i], putPreds[i], putObjs[i]}
		})
		if err != nil {
			return fmt.Errorf("postgres: put %d fields: %w", len(putKeys), err)
		}
		if !conflict {
			putKeys = nil // written
		}
	}
	if len(putKeys) > 0 {
		if _, err := t.r.exec(ctx, `INSERT INTO fields (resource, predicate, objects)
SELECT * FROM unnest($1::bigint[], $2::text[], $3::bytea[])
ON CONFLICT (resource, predicate) DO UPDATE SET objects = EXCLUDED.objects`, putKeys, putPreds, putObjs); err != nil {
			return fmt.Errorf("postgres: put %d fields: %w", len(putKeys), err)
		}
	}
	if len(delKeys) > 0 {
		if _, err := t.r.exec(ctx, `DELETE FROM fields f USING unnest($1::bigint[], $2::text[]) AS d(resource, predicate)
WHERE f.resource = d.resource AND f.predicate = d.predicate`, delKeys, delPreds); err != nil {
			return fmt.Errorf("postgres: delete %d fields: %w", len(delKeys), err)
		}
	}
	return nil
}
