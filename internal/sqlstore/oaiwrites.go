package sqlstore

import (
	"context"
	"fmt"

	"github.com/shelfmark/shelfmark"
)

// OAIWrites is a dialect's statements of the counter and OAI set writes
// of WriteTx. Their arguments are those named, in that order; a list is
// one argument bound by Dialect.Int64s.
type OAIWrites struct {
	AddCounter    string // name, delta: the new value
	DeleteOAISets string // keys
	// NextSeq adds n to the counter seq and returns its new value: n.
	NextSeq string
}

// NextSeq reserves n change sequence numbers and returns the first.
//
// The UPDATE takes the write lock of the counter's row, held until the
// transaction ends (SQLite's one writer holds the whole database). A
// second transaction calling NextSeq waits for it, and gets higher
// numbers only after the first has committed; so the order of sequence
// numbers is the order of commits, and a harvester that has read every
// change with seq <= X never sees a change with seq <= X appear later.
func (w *WriteTx) NextSeq(ctx context.Context, n int) (int64, error) {
	if n < 1 {
		return 0, fmt.Errorf("%sreserve %d sequence numbers: n must be at least 1", w.d.Prefix, n)
	}
	var last int64
	if err := Row(ctx, w.q, w.d.NextSeq, []any{int64(n)}, &last); err != nil {
		return 0, fmt.Errorf("%sreserve %d sequence numbers: %w", w.d.Prefix, n, err)
	}
	return last - int64(n) + 1, nil
}

// PutOAISets inserts or replaces sets by key (a later set of the same key
// wins): one statement and one bulk write. The old rows of those keys go
// first, so sets that swap or pass on specs within one call never meet
// the unique spec index midway.
func (w *WriteTx) PutOAISets(ctx context.Context, sets []shelfmark.OAISet) error {
	if len(sets) == 0 {
		return nil
	}
	keys, kept := LatestSets(sets)
	if _, err := w.q.Exec(ctx, w.d.DeleteOAISets, w.d.Int64s(keys)); err != nil {
		return fmt.Errorf("%sput %d oai sets: %w", w.d.Prefix, len(keys), err)
	}
	return w.insert(ctx, "put %d oai sets", "oai_sets", Rows{Cols: []Col{{"key", Int64}, {"spec", Text}, {"name", Text}}, N: len(kept),
		Row: func(i int, v []any) { v[0], v[1], v[2] = kept[i].Key, kept[i].Spec, kept[i].Name }}, "")
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
