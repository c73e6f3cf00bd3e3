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
	// SourceKeysOf reads resource, source_key of the resources among a
	// list bound by Dialect.Int64s (index sources_resource).
	SourceKeysOf string
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

// SourceKeysOf returns the source keys each of keys was ingested from,
// sorted, for those that have any: one statement over the index
// sources_resource.
func (t *Tx) SourceKeysOf(ctx context.Context, keys []int64) (map[int64][]string, error) {
	out := map[int64][]string{}
	if len(keys) == 0 {
		return out, nil
	}
	err := t.q.EachRow(ctx, t.d.SourceSQL.SourceKeysOf, []any{t.d.Int64s(keys)}, func(r Scanner) error {
		var k int64
		var v string
		if err := r.Scan(&k, &v); err != nil {
			return err
		}
		out[k] = append(out[k], v)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%sread the source keys of %d resources: %w", t.d.Prefix, len(keys), err)
	}
	return out, nil
}
