package sqlstore

import (
	"context"
	"fmt"
)

// SourceSQL is a dialect's statement of the source key read of Tx.
type SourceSQL struct {
	// Sources reads source_key, resource of the source keys among a list
	// bound by Dialect.Strings.
	Sources string
}

// Sources returns the resources of already ingested source keys: one
// statement over the sources primary key.
func (t *Tx) Sources(ctx context.Context, sourceKeys []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(sourceKeys) == 0 {
		return out, nil
	}
	err := t.q.EachRow(ctx, t.d.SourceSQL.Sources, []any{t.d.Strings(sourceKeys)}, func(r Scanner) error {
		var k string
		var v int64
		if err := r.Scan(&k, &v); err != nil {
			return err
		}
		out[k] = v
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%sread %d source keys: %w", t.d.Prefix, len(sourceKeys), err)
	}
	return out, nil
}
