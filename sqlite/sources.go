package sqlite

import "context"

// InsertSources records ingested source keys.
func (t *writeTx) InsertSources(ctx context.Context, sourceKeys []string, keys []int64) error {
	return chunked(len(sourceKeys), func(lo, hi int) error {
		args := make([]any, 0, (hi-lo)*2)
		for i := lo; i < hi; i++ {
			args = append(args, sourceKeys[i], keys[i])
		}
		_, err := t.exec(ctx, `INSERT INTO sources (source_key, resource) VALUES `+placeholders(hi-lo, 2), args...)
		return err
	})
}
