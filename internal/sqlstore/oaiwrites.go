package sqlstore

import (
	"context"
	"fmt"
)

// OAIWrites is a dialect's statements of the counter and OAI set writes
// of WriteTx. Their arguments are those named, in that order; a list is
// one argument bound by Dialect.Int64s.
type OAIWrites struct {
	AddCounter    string // name, delta: the new value
	DeleteOAISets string // keys
}

// AddCounter adds delta to a named counter (created at 0) in one upsert
// and returns the new value.
func (w *WriteTx) AddCounter(ctx context.Context, name string, delta int64) (int64, error) {
	var v int64
	if err := Row(ctx, w.q, w.d.AddCounter, []any{name, delta}, &v); err != nil {
		return 0, fmt.Errorf("%sadd to counter %s: %w", w.d.Prefix, name, err)
	}
	return v, nil
}

// DeleteOAISets removes sets in one statement.
func (w *WriteTx) DeleteOAISets(ctx context.Context, keys []int64) error {
	if len(keys) == 0 {
		return nil
	}
	if _, err := w.q.Exec(ctx, w.d.DeleteOAISets, w.d.Int64s(keys)); err != nil {
		return fmt.Errorf("%sdelete %d oai sets: %w", w.d.Prefix, len(keys), err)
	}
	return nil
}
