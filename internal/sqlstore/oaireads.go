package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/shelfmark/shelfmark"
)

// OAI is a dialect's statements of the OAI-PMH reads of Tx. Their
// arguments are those of the methods named, in that order; a list is one
// argument bound by Dialect.Int64s.
type OAI struct {
	OAIRecord    string // key, prefix; OAIColsPayload
	OAIRecordsOf string // keys; OAICols
	OAISets      string // after, limit: key, spec, name
	OAISetsByKey string // keys: key, spec, name
	OAISetTree   string // spec, spec+":", spec+";": key, whether exact
	Counter      string // name: value
	// OAICount reads a format's tally: the kept count (one primary key
	// read of oai_counts) and the lowest and highest seq (one seek at each
	// end of oai_records_prefix): prefix.
	OAICount string
	// OAISetCount is OAICount for the rows directly in one set, whose
	// ends are those of its range of the oai_set_records primary key:
	// prefix, set.
	OAISetCount string
	// OAISeqRange reads the lowest seq with datestamp >= from, the highest
	// with datestamp <= until (one row at each end of the window in
	// oai_records_datestamp) and the highest of the view: prefix, from,
	// until.
	OAISeqRange string
	// OAIList and OAIListPayload read a page of a format's rows (one
	// range of oai_records_prefix), OAICols or OAIColsPayload: prefix,
	// after, max, limit.
	OAIList, OAIListPayload string
	// OAIRecordsInSets reads a page of a list of the rows in any of sets
	// (sorted, without repeats): at most l.Limit rows by seq, the work
	// bounded by the page size times the number of sets, never by the
	// depth.
	OAIRecordsInSets func(ctx context.Context, q Querier, l shelfmark.OAIList, sets []int64) ([]*shelfmark.OAIRecord, error)
}

// OAIRecords returns up to l.Limit rows of the list, by seq: without sets
// one range of oai_records_prefix from l.After, with sets the dialect's
// OAIRecordsInSets.
func (t *Tx) OAIRecords(ctx context.Context, l shelfmark.OAIList) ([]*shelfmark.OAIRecord, error) {
	if l.Limit <= 0 || l.After >= l.Max {
		return nil, nil
	}
	var (
		out []*shelfmark.OAIRecord
		err error
	)
	if sets := SortedSets(l.Sets); len(sets) > 0 {
		out, err = t.d.OAIRecordsInSets(ctx, t.q, l, sets)
	} else {
		list := t.d.OAIList
		if l.Payload {
			list = t.d.OAIListPayload
		}
		out, err = OAIRecords(ctx, t.q, list, []any{l.Prefix, l.After, l.Max, int64(l.Limit)}, l.Payload)
	}
	if err != nil {
		return nil, fmt.Errorf("%soai records of %s after %d: %w", t.d.Prefix, l.Prefix, l.After, err)
	}
	return out, nil
}

// oaiBoundsSQL reads the highest seq and the datestamp of the lowest.
const oaiBoundsSQL = `SELECT (SELECT max(seq) FROM oai_records), (SELECT datestamp FROM oai_records ORDER BY seq LIMIT 1)`

// OAIRecords runs a query of OAIColumns(payload) rows.
func OAIRecords(ctx context.Context, q Querier, query string, args []any, payload bool) ([]*shelfmark.OAIRecord, error) {
	return Collect(ctx, q, query, args, func(r Scanner) (*shelfmark.OAIRecord, error) {
		return ScanOAIRecord(r, payload)
	})
}

// OAIBounds returns the highest seq and the earliest datestamp. Datestamps
// never fall as seq rises, so the earliest is that of the lowest seq: two
// reads at the ends of the primary key.
func (t *Tx) OAIBounds(ctx context.Context) (maxSeq int64, earliest time.Time, ok bool, err error) {
	var top, first *int64
	if err := Row(ctx, t.q, oaiBoundsSQL, nil, &top, &first); err != nil {
		return 0, time.Time{}, false, fmt.Errorf("%soai bounds: %w", t.d.Prefix, err)
	}
	if top == nil || first == nil {
		return 0, time.Time{}, false, nil
	}
	return *top, time.Unix(*first, 0).UTC(), true, nil
}

// OAIRecord returns the row of key in prefix, with its payload, or nil:
// one probe of a unique index.
func (t *Tx) OAIRecord(ctx context.Context, prefix string, key int64) (*shelfmark.OAIRecord, error) {
	out, err := OAIRecords(ctx, t.q, t.d.OAIRecord, []any{key, prefix}, true)
	if err != nil {
		return nil, fmt.Errorf("%soai record %d in %s: %w", t.d.Prefix, key, prefix, err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out[0], nil
}

// OAIRecordsOf returns the rows of keys without payloads, by key and
// prefix, over oai_records_key.
func (t *Tx) OAIRecordsOf(ctx context.Context, keys []int64) ([]*shelfmark.OAIRecord, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	out, err := OAIRecords(ctx, t.q, t.d.OAIRecordsOf, []any{t.d.Int64s(keys)}, false)
	if err != nil {
		return nil, fmt.Errorf("%soai records of %d works: %w", t.d.Prefix, len(keys), err)
	}
	return out, nil
}

// OAISets returns up to limit sets with keys above after, by key.
func (t *Tx) OAISets(ctx context.Context, after int64, limit int) ([]shelfmark.OAISet, error) {
	if limit <= 0 {
		return nil, nil
	}
	out, err := Collect(ctx, t.q, t.d.OAISets, []any{after, int64(limit)}, ScanOAISet)
	if err != nil {
		return nil, fmt.Errorf("%soai sets after %d: %w", t.d.Prefix, after, err)
	}
	return out, nil
}

// OAISetsByKey returns the sets among keys, by key.
func (t *Tx) OAISetsByKey(ctx context.Context, keys []int64) ([]shelfmark.OAISet, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	out, err := Collect(ctx, t.q, t.d.OAISetsByKey, []any{t.d.Int64s(keys)}, ScanOAISet)
	if err != nil {
		return nil, fmt.Errorf("%s%d oai sets: %w", t.d.Prefix, len(keys), err)
	}
	return out, nil
}

// OAISetTree returns the key of the set spec and of the sets below it: the
// exact spec and the range [spec+":", spec+";") of the unique spec index,
// whose order is bytewise (";" follows ":", so the range holds exactly the
// specs that start with spec+":", and not those of a sibling such as
// spec+"b"). It returns nil when spec is not a set.
func (t *Tx) OAISetTree(ctx context.Context, spec string) ([]int64, error) {
	var (
		keys  []int64
		found bool
	)
	err := t.q.EachRow(ctx, t.d.OAISetTree, []any{spec, spec + ":", spec + ";"}, func(r Scanner) error {
		var k int64
		var exact bool
		err := r.Scan(&k, &exact)
		found = found || exact
		keys = append(keys, k)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%soai set tree %q: %w", t.d.Prefix, spec, err)
	}
	if !found {
		return nil, nil
	}
	return keys, nil
}

// Counter returns the value of a named counter, 0 when it was never set:
// one primary key probe.
func (t *Tx) Counter(ctx context.Context, name string) (int64, error) {
	v, err := Int64s(ctx, t.q, t.d.Counter, name)
	if err != nil {
		return 0, fmt.Errorf("%scounter %s: %w", t.d.Prefix, name, err)
	}
	if len(v) == 0 {
		return 0, nil
	}
	return v[0], nil
}

// OAICount returns the tally of prefix (in set, when set is not 0) in one
// statement of three index seeks, whatever the number of rows.
func (t *Tx) OAICount(ctx context.Context, prefix string, set int64) (shelfmark.OAITally, error) {
	var n, first, last *int64
	var err error
	if set == 0 {
		err = Row(ctx, t.q, t.d.OAICount, []any{prefix}, &n, &first, &last)
	} else {
		err = Row(ctx, t.q, t.d.OAISetCount, []any{prefix, set}, &n, &first, &last)
	}
	if err != nil {
		return shelfmark.OAITally{}, fmt.Errorf("%scount oai records of %s in %d: %w", t.d.Prefix, prefix, set, err)
	}
	return shelfmark.OAITally{N: zeroNil(n), First: zeroNil(first), Last: zeroNil(last)}, nil
}

// OAISeqRange turns [from, until] into the seq range (after, max] of
// prefix in one statement, from one row at each end of the window in
// oai_records_datestamp (prefix, datestamp, seq). Datestamps never fall as
// seq rises, so the first row with datestamp >= from has the smallest such
// seq, and every row of prefix above it is in the window's lower side.
func (t *Tx) OAISeqRange(ctx context.Context, prefix string, from, until time.Time) (after, max int64, err error) {
	var first, last, top *int64
	if err := Row(ctx, t.q, t.d.OAISeqRange, []any{prefix, CeilUnix(from), until.Unix()}, &first, &last, &top); err != nil {
		return 0, 0, fmt.Errorf("%soai seq range of %s: %w", t.d.Prefix, prefix, err)
	}
	switch {
	case from.IsZero():
		after = 0
	case first == nil:
		return zeroNil(top), zeroNil(top), nil // nothing as late as from: empty
	default:
		after = *first - 1
	}
	if until.IsZero() {
		max = zeroNil(top)
	} else {
		max = zeroNil(last)
	}
	return after, max, nil
}

// zeroNil is *v, 0 for nil.
func zeroNil(v *int64) int64 {
	if v == nil {
		return 0
	}
	return *v
}
