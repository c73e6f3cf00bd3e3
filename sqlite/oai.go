package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// The OAI-PMH view (oai.go in the root package, migration 0003_oai.sql).
// Every list is a keyset walk over seq: the rows of a format are one range
// of oai_records_prefix (prefix, seq), the rows of a set one range of the
// primary key of oai_set_records (collection, prefix, seq).

// maxUnionSets is the most sets one list statement walks, one bounded
// subquery each, joined by UNION (SQLite allows 500 terms in a compound
// SELECT). Lists over more sets run one such statement per group of sets
// and merge their pages.
const maxUnionSets = 128

// setSeqsSQL selects, for n sets, the first Limit seqs of the list in any
// of them, ascending and without repeats: one bounded range of the
// oai_set_records primary key per set (never the whole of a set), merged.
// Its arguments are setSeqsArgs.
func setSeqsSQL(n int) string {
	const one = `SELECT seq FROM oai_set_records WHERE collection = ? AND prefix = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?`
	if n == 1 {
		return one
	}
	terms := make([]string, n)
	for i := range terms {
		terms[i] = `SELECT seq FROM (` + one + `)`
	}
	return strings.Join(terms, "\nUNION ") + "\nORDER BY 1 LIMIT ?"
}

func setSeqsArgs(sets []int64, l shelfmark.OAIList) []any {
	args := make([]any, 0, 5*len(sets)+1)
	for _, c := range sets {
		args = append(args, c, l.Prefix, l.After, l.Max, l.Limit)
	}
	if len(sets) > 1 {
		args = append(args, l.Limit)
	}
	return args
}

// padSets repeats the last of sets up to the next power of two, so that
// lists over any number of sets share a few statement texts (and prepared
// statements); UNION drops the repeats.
func padSets(sets []int64) []int64 {
	n := 1
	for n < len(sets) {
		n *= 2
	}
	for len(sets) < n {
		sets = append(sets, sets[len(sets)-1])
	}
	return sets
}

// oaiSetListSQL is a page of a format's rows in any of n sets: the rows of
// the seqs that setSeqsSQL selects, each found by its seq. Arguments:
// setSeqsArgs.
func oaiSetListSQL(payload bool, n int) string {
	return `SELECT ` + sqlstore.OAIColumns(payload) + ` FROM oai_records WHERE seq IN (` + setSeqsSQL(n) + `) ORDER BY seq`
}

// oaiRecordsInSets is sqlstore.OAI.OAIRecordsInSets: it takes at most
// l.Limit seqs from each set's range of oai_set_records (a UNION of one
// range per set, maxUnionSets sets a statement), keeps the first l.Limit
// of their union and reads those rows by seq.
func oaiRecordsInSets(ctx context.Context, q sqlstore.Querier, l shelfmark.OAIList, sets []int64) ([]*shelfmark.OAIRecord, error) {
	if len(sets) <= maxUnionSets {
		sets = padSets(sets)
		return sqlstore.OAIRecords(ctx, q, oaiSetListSQL(l.Payload, len(sets)), setSeqsArgs(sets, l), l.Payload)
	}
	var seqs []int64
	for lo := 0; lo < len(sets); lo += maxUnionSets {
		group := padSets(slices.Clone(sets[lo:min(lo+maxUnionSets, len(sets))]))
		more, err := sqlstore.Int64s(ctx, q, setSeqsSQL(len(group)), setSeqsArgs(group, l)...)
		if err != nil {
			return nil, err
		}
		seqs = append(seqs, more...)
	}
	seqs = slices.Compact(slices.Sorted(slices.Values(seqs)))
	seqs = seqs[:min(len(seqs), l.Limit)]
	return sqlstore.OAIRecords(ctx, q, `SELECT `+sqlstore.OAIColumns(l.Payload)+` FROM oai_records WHERE seq IN (SELECT value FROM json_each(?)) ORDER BY seq`,
		[]any{jsonInts(seqs)}, l.Payload)
}

// oaiSetTreeSQL reads the set of a spec (second column 1) and those below
// it (0). Arguments: spec, spec+":", spec+";".
const oaiSetTreeSQL = `SELECT key, 1 FROM oai_sets WHERE spec = ?
		UNION ALL SELECT key, 0 FROM oai_sets WHERE spec >= ? AND spec < ?`

// addOAICountsSQL adds changes to the counts of oai_counts in one upsert.
// Argument: a JSON array of [prefix, collection, delta].
const addOAICountsSQL = `INSERT INTO oai_counts (prefix, collection, n)
		SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), json_extract(value, '$[2]') FROM json_each(?) WHERE true
		ON CONFLICT (prefix, collection) DO UPDATE SET n = n + excluded.n`

// oaiDeltas gathers the changes a batch makes to the counts of
// oai_counts: one per format (collection 0) and per set.
type oaiDeltas struct {
	n     map[oaiCountKey]int64
	order []oaiCountKey
}

type oaiCountKey struct {
	prefix     string
	collection int64
}

func newOAIDeltas() *oaiDeltas { return &oaiDeltas{n: map[oaiCountKey]int64{}} }

// add counts a row of prefix in sets (each set once) d times.
func (d *oaiDeltas) add(prefix string, sets []int64, n int64) {
	d.bump(oaiCountKey{prefix, 0}, n)
	for _, c := range slices.Compact(slices.Sorted(slices.Values(sets))) {
		d.bump(oaiCountKey{prefix, c}, n)
	}
}

func (d *oaiDeltas) bump(k oaiCountKey, n int64) {
	if _, ok := d.n[k]; !ok {
		d.order = append(d.order, k)
	}
	d.n[k] += n
}

// rows returns the changes that are not 0, as [prefix, collection, delta].
func (d *oaiDeltas) rows() [][3]any {
	out := make([][3]any, 0, len(d.order))
	for _, k := range d.order {
		if n := d.n[k]; n != 0 {
			out = append(out, [3]any{k.prefix, k.collection, n})
		}
	}
	return out
}

// deleteSetEntriesSQL removes the set entries of one row, one primary key
// probe per set. Arguments: the row's sets column, prefix, seq.
const deleteSetEntriesSQL = `DELETE FROM oai_set_records
		WHERE collection IN (SELECT value FROM json_each('[' || ? || ']')) AND prefix = ? AND seq = ?`

// replaceOAIRecords is sqlstore.Dialect.ReplaceOAIRecords. One statement
// finds the rows replaced, by the unique index (key, prefix); a prepared
// statement removes the set entries of each of them (one primary key probe
// per set: a single DELETE over row values (collection, prefix, seq) IN
// (…) would use only the first column of the key, and read every entry of
// each set); one statement removes the old rows; one upsert brings the
// counts of oai_counts up to date.
func replaceOAIRecords(ctx context.Context, q sqlstore.Execer, recs []*shelfmark.OAIRecord) error {
	t, ok := q.(*writeTx)
	if !ok {
		return fmt.Errorf("%T is not a SQLite write transaction", q)
	}
	pairs := make([][2]any, len(recs))
	for i, r := range recs {
		pairs[i] = [2]any{r.Key, r.Prefix}
	}
	b, err := json.Marshal(pairs)
	if err != nil {
		return err
	}
	type oldRow struct {
		seq          int64
		prefix, sets string
	}
	var old []oldRow
	err = t.query(ctx, `SELECT o.seq, o.prefix, o.sets FROM json_each(?) j
		JOIN oai_records o ON o.key = json_extract(j.value, '$[0]') AND o.prefix = json_extract(j.value, '$[1]')`,
		[]any{string(b)}, func(r sqlstore.Scanner) error {
			var o oldRow
			err := r.Scan(&o.seq, &o.prefix, &o.sets)
			old = append(old, o)
			return err
		})
	if err != nil {
		return fmt.Errorf("find them: %w", err)
	}
	deltas := newOAIDeltas()
	for _, r := range recs {
		deltas.add(r.Prefix, r.Sets, 1)
	}
	for _, o := range old {
		sets, err := sqlstore.ParseSets(o.sets)
		if err != nil {
			return err
		}
		deltas.add(o.prefix, sets, -1)
	}
	if b, err := json.Marshal(deltas.rows()); err != nil {
		return err
	} else if _, err := t.exec(ctx, addOAICountsSQL, string(b)); err != nil {
		return fmt.Errorf("counts: %w", err)
	}
	if len(old) > 0 {
		seqs := make([]int64, len(old))
		for i, o := range old {
			seqs[i] = o.seq
			if o.sets == "" {
				continue
			}
			if _, err := t.exec(ctx, deleteSetEntriesSQL, o.sets, o.prefix, o.seq); err != nil {
				return fmt.Errorf("the set entries of row %d: %w", o.seq, err)
			}
		}
		if _, err := t.exec(ctx, `DELETE FROM oai_records WHERE seq IN (SELECT value FROM json_each(?))`, jsonInts(seqs)); err != nil {
			return err
		}
	}
	return nil
}
