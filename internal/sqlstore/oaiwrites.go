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
	// ReplaceOAIRecords deletes the rows of oai_records that recs (one
	// each (Key, Prefix)) replace, with their set entries, and brings
	// oai_counts up to date: the records' rows, per format and per set,
	// less those it deleted.
	ReplaceOAIRecords func(ctx context.Context, q Execer, recs []*shelfmark.OAIRecord) error
}

// oaiRecordCols are the columns of OAIColsPayload as a bulk write sends
// them.
var oaiRecordCols = []Col{{"seq", Int64}, {"prefix", Text}, {"key", Int64}, {"datestamp", Int64}, {"deleted", Bool},
	{"sets", Text}, {"payload", Bytes}}

// PutOAIRecords replaces the rows of the records' (Key, Prefix), with
// their set entries, and writes the records (a later record of the same
// (Key, Prefix) in recs wins): the dialect's ReplaceOAIRecords, then one
// bulk write of the rows and one of their set entries.
func (w *WriteTx) PutOAIRecords(ctx context.Context, recs []*shelfmark.OAIRecord) error {
	if len(recs) == 0 {
		return nil
	}
	recs = LatestRecords(recs)
	if err := w.d.ReplaceOAIRecords(ctx, w.q, recs); err != nil {
		return fmt.Errorf("%sput %d oai records: delete the old rows: %w", w.d.Prefix, len(recs), err)
	}
	var entries []setEntry
	for _, r := range recs {
		for _, c := range SortedSets(r.Sets) {
			entries = append(entries, setEntry{c, r.Prefix, r.Seq})
		}
	}
	if err := w.insert(ctx, "put %d oai records", "oai_records", Rows{Cols: oaiRecordCols, N: len(recs), Row: func(i int, v []any) {
		r := recs[i]
		payload := r.Payload
		if payload == nil {
			payload = []byte{} // NOT NULL
		}
		v[0], v[1], v[2], v[3], v[4], v[5], v[6] = r.Seq, r.Prefix, r.Key, r.Datestamp.Unix(), r.Deleted, FormatSets(r.Sets), payload
	}}, ""); err != nil {
		return err
	}
	return w.insert(ctx, "put the set entries of %d oai records", "oai_set_records",
		Rows{Cols: []Col{{"collection", Int64}, {"prefix", Text}, {"seq", Int64}}, N: len(entries), Row: func(i int, v []any) {
			v[0], v[1], v[2] = entries[i].collection, entries[i].prefix, entries[i].seq
		}}, "")
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

// setEntry is a row of oai_set_records.
type setEntry struct {
	collection int64
	prefix     string
	seq        int64
}
