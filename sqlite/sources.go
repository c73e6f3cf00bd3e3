package sqlite

import (
	"context"
	"encoding/json"

	"database/sql"
)

// Sources returns the resources of already ingested source keys.
func (t *tx) Sources(ctx context.Context, sourceKeys []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(sourceKeys) == 0 {
		return out, nil
	}
	b, err := json.Marshal(sourceKeys)
	if err != nil {
		return nil, err
	}
	err = t.query(ctx, `SELECT source_key, resource FROM sources WHERE source_key IN (SELECT value FROM json_each(?))`,
		[]any{string(b)}, func(r *sql.Rows) error {
			var k string
			var v int64
			err := r.Scan(&k, &v)
			out[k] = v
			return err
		})
	return out, err
}

// InsertSources records ingested source keys.
func (t *tx) InsertSources(ctx context.Context, sourceKeys []string, keys []int64) error {
	return chunked(len(sourceKeys), func(lo, hi int) error {
		args := make([]any, 0, (hi-lo)*2)
		for i := lo; i < hi; i++ {
			args = append(args, sourceKeys[i], keys[i])
		}
		_, err := t.exec(ctx, `INSERT INTO sources (source_key, resource) VALUES `+placeholders(hi-lo, 2), args...)
		return err
	})
}
