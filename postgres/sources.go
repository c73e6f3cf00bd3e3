package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Sources returns the resources of already ingested source keys.
func (t *readTx) Sources(ctx context.Context, sourceKeys []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(sourceKeys) == 0 {
		return out, nil
	}
	_, err := t.r.query(ctx, `SELECT source_key, resource FROM sources WHERE source_key = ANY($1)`, []any{sourceKeys}, func(rows pgx.Rows) error {
		var k string
		var v int64
		if err := rows.Scan(&k, &v); err != nil {
			return err
		}
		out[k] = v
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: read %d source keys: %w", len(sourceKeys), err)
	}
	return out, nil
}

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
