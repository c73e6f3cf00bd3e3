package postgres

import (
	"context"
	"fmt"
)

// InsertSources records ingested source keys in one statement (COPY for
// many keys). A source key recorded already fails either way.
func (t *writeTx) InsertSources(ctx context.Context, sourceKeys []string, keys []int64) error {
	if len(sourceKeys) == 0 {
		return nil
	}
	if len(keys) != len(sourceKeys) {
		return fmt.Errorf("postgres: insert source keys: %d keys for %d source keys", len(keys), len(sourceKeys))
	}
	if t.r.useCopy(len(sourceKeys)) {
		if _, err := t.r.copyFrom(ctx, "sources", []string{"source_key", "resource"}, len(sourceKeys), func(i int) []any {
			return []any{sourceKeys[i], keys[i]}
		}); err != nil {
			return fmt.Errorf("postgres: insert %d source keys: %w", len(sourceKeys), err)
		}
		return nil
	}
	if _, err := t.r.exec(ctx, `INSERT INTO sources (source_key, resource) SELECT * FROM unnest($1::text[], $2::bigint[])`, sourceKeys, keys); err != nil {
		return fmt.Errorf("postgres: insert %d source keys: %w", len(sourceKeys), err)
	}
	return nil
}
