package postgres

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
)

// The OAI-PMH view (oai.go in the root package, migration 0003_oai.sql).
// Every list is a keyset walk over seq: the rows of a format are one range
// of oai_records_prefix (prefix, seq), the rows of a set one range of the
// primary key of oai_set_records (collection, prefix, seq).

// oaiCols are the columns scanOAIRecord reads; oaiColsPayload adds the
// payload.
const (
	oaiCols        = `seq, prefix, key, datestamp, deleted, sets`
	oaiColsPayload = oaiCols + `, payload`
	oaiColsO       = `o.seq, o.prefix, o.key, o.datestamp, o.deleted, o.sets`
)

func oaiColumns(payload bool) string {
	if payload {
		return oaiColsPayload
	}
	return oaiCols
}

func scanOAIRecord(rows pgx.Rows, payload bool) (*shelfmark.OAIRecord, error) {
	var (
		rec       shelfmark.OAIRecord
		datestamp int64
		sets      string
	)
	dest := []any{&rec.Seq, &rec.Prefix, &rec.Key, &datestamp, &rec.Deleted, &sets}
	if payload {
		dest = append(dest, &rec.Payload)
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, err
	}
	rec.Datestamp = time.Unix(datestamp, 0).UTC()
	var err error
	if rec.Sets, err = parseSets(sets); err != nil {
		return nil, fmt.Errorf("row %d: %w", rec.Seq, err)
	}
	return &rec, nil
}

// sortedSets returns keys ascending, without repeats.
func sortedSets(keys []int64) []int64 {
	return slices.Compact(slices.Sorted(slices.Values(keys)))
}

// formatSets encodes set keys as stored in oai_records.sets: ascending,
// without repeats, comma-separated; "" for none.
func formatSets(sets []int64) string {
	s := sortedSets(sets)
	b := make([]byte, 0, 12*len(s))
	for i, k := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, k, 10)
	}
	return string(b)
}

// parseSets decodes oai_records.sets.
func parseSets(s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	out := make([]int64, len(parts))
	for i, p := range parts {
		k, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("sets %q: %w", s, err)
		}
		out[i] = k
	}
	return out, nil
}

// oaiListSQL is a page of a format's rows: one range of oai_records_prefix.
// $1 prefix, $2 after, $3 max, $4 limit.
func oaiListSQL(payload bool) string {
	return `SELECT ` + oaiColumns(payload) + ` FROM oai_records
WHERE prefix = $1 AND seq > $2 AND seq <= $3 ORDER BY seq LIMIT $4`
}

// oaiSetListSQL is a page of a format's rows in any of a list of sets: for
// each set, at most limit seqs from its range of the oai_set_records primary
// key (the LATERAL subquery); the first limit of their union, without
// repeats; and each of those rows looked up by seq (the second LATERAL,
// whose OFFSET 0 keeps the planner from turning the lookups into a join
// driven by oai_records). The work is bounded by the page size times the
// number of sets, never by the depth. $1 sets, $2 prefix, $3 after, $4 max,
// $5 limit.
func oaiSetListSQL(payload bool) string {
	cols := oaiColsO
	if payload {
		cols += ", o.payload"
	}
	return `SELECT ` + cols + ` FROM (
    SELECT DISTINCT x.seq FROM unnest($1::bigint[]) AS s(collection) CROSS JOIN LATERAL (
        SELECT seq FROM oai_set_records
        WHERE collection = s.collection AND prefix = $2 AND seq > $3 AND seq <= $4 ORDER BY seq LIMIT $5) x
    ORDER BY x.seq LIMIT $5
) p CROSS JOIN LATERAL (SELECT * FROM oai_records o WHERE o.seq = p.seq OFFSET 0) o
ORDER BY p.seq`
}

// oaiRecords runs a query returning oaiColumns(payload) rows.
func (t *readTx) oaiRecords(ctx context.Context, sql string, args []any, payload bool) ([]*shelfmark.OAIRecord, error) {
	var out []*shelfmark.OAIRecord
	_, err := t.r.query(ctx, sql, args, func(rows pgx.Rows) error {
		rec, err := scanOAIRecord(rows, payload)
		if err == nil {
			out = append(out, rec)
		}
		return err
	})
	return out, err
}

// OAIRecords returns up to l.Limit rows of the list, by seq, in one
// statement (oaiListSQL, or oaiSetListSQL with sets).
func (t *readTx) OAIRecords(ctx context.Context, l shelfmark.OAIList) ([]*shelfmark.OAIRecord, error) {
	if l.Limit <= 0 || l.After >= l.Max {
		return nil, nil
	}
	var (
		out []*shelfmark.OAIRecord
		err error
	)
	if len(l.Sets) == 0 {
		out, err = t.oaiRecords(ctx, oaiListSQL(l.Payload), []any{l.Prefix, l.After, l.Max, int64(l.Limit)}, l.Payload)
	} else {
		out, err = t.oaiRecords(ctx, oaiSetListSQL(l.Payload),
			[]any{sortedSets(l.Sets), l.Prefix, l.After, l.Max, int64(l.Limit)}, l.Payload)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: oai records of %s after %d: %w", l.Prefix, l.After, err)
	}
	return out, nil
}

// oaiCountSQL reads a format's tally: the kept count, one primary key read
// of oai_counts, and the ends of the rows' range, one seek at each end of
// oai_records_prefix. $1 prefix.
const oaiCountSQL = `SELECT
    (SELECT n FROM oai_counts WHERE prefix = $1 AND collection = 0),
    (SELECT seq FROM oai_records WHERE prefix = $1 ORDER BY seq LIMIT 1),
    (SELECT seq FROM oai_records WHERE prefix = $1 ORDER BY seq DESC LIMIT 1)`

// oaiSetCountSQL is oaiCountSQL for the rows directly in one set, whose
// ends are those of its range of the oai_set_records primary key. $1
// prefix, $2 set.
const oaiSetCountSQL = `SELECT
    (SELECT n FROM oai_counts WHERE prefix = $1 AND collection = $2),
    (SELECT seq FROM oai_set_records WHERE collection = $2 AND prefix = $1 ORDER BY seq LIMIT 1),
    (SELECT seq FROM oai_set_records WHERE collection = $2 AND prefix = $1 ORDER BY seq DESC LIMIT 1)`

// OAICount returns the tally of prefix (in set, when set is not 0) in one
// statement of three index seeks, whatever the number of rows.
func (t *readTx) OAICount(ctx context.Context, prefix string, set int64) (shelfmark.OAITally, error) {
	var n, first, last *int64
	var err error
	if set == 0 {
		err = t.r.queryRow(ctx, oaiCountSQL, []any{prefix}, &n, &first, &last)
	} else {
		err = t.r.queryRow(ctx, oaiSetCountSQL, []any{prefix, set}, &n, &first, &last)
	}
	if err != nil {
		return shelfmark.OAITally{}, fmt.Errorf("postgres: count oai records of %s in %d: %w", prefix, set, err)
	}
	return shelfmark.OAITally{N: zeroNull(n), First: zeroNull(first), Last: zeroNull(last)}, nil
}

// ceilUnix rounds a time up to whole seconds.
func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

// OAISeqRange turns [from, until] into the seq range (after, max] of
// prefix, from one row at each end of the window in oai_records_datestamp
// (prefix, datestamp, seq). Datestamps never fall as seq rises, so the first
// row with datestamp >= from has the smallest such seq, and every row of
// prefix above it is in the window's lower side.
func (t *readTx) OAISeqRange(ctx context.Context, prefix string, from, until time.Time) (after, max int64, err error) {
	var first, last, top *int64
	err = t.r.queryRow(ctx, `SELECT
    (SELECT seq FROM oai_records WHERE prefix = $1 AND datestamp >= $2 ORDER BY datestamp, seq LIMIT 1),
    (SELECT seq FROM oai_records WHERE prefix = $1 AND datestamp <= $3 ORDER BY datestamp DESC, seq DESC LIMIT 1),
    (SELECT max(seq) FROM oai_records)`,
		[]any{prefix, ceilUnix(from), until.Unix()}, &first, &last, &top)
	if err != nil {
		return 0, 0, fmt.Errorf("postgres: oai seq range of %s: %w", prefix, err)
	}
	switch {
	case from.IsZero():
		after = 0
	case first == nil:
		return zeroNull(top), zeroNull(top), nil // nothing as late as from: empty
	default:
		after = *first - 1
	}
	if until.IsZero() {
		max = zeroNull(top)
	} else {
		max = zeroNull(last)
	}
	return after, max, nil
}

// OAIBounds returns the highest seq and the earliest datestamp. Datestamps
// never fall as seq rises, so the earliest is that of the lowest seq: two
// reads at the ends of the primary key.
func (t *readTx) OAIBounds(ctx context.Context) (maxSeq int64, earliest time.Time, ok bool, err error) {
	var top, first *int64
	err = t.r.queryRow(ctx, `SELECT (SELECT max(seq) FROM oai_records), (SELECT datestamp FROM oai_records ORDER BY seq LIMIT 1)`,
		nil, &top, &first)
	if err != nil {
		return 0, time.Time{}, false, fmt.Errorf("postgres: oai bounds: %w", err)
	}
	if top == nil || first == nil {
		return 0, time.Time{}, false, nil
	}
	return *top, time.Unix(*first, 0).UTC(), true, nil
}

// OAIRecord returns the row of key in prefix, with its payload, or nil.
func (t *readTx) OAIRecord(ctx context.Context, prefix string, key int64) (*shelfmark.OAIRecord, error) {
	out, err := t.oaiRecords(ctx, `SELECT `+oaiColsPayload+` FROM oai_records WHERE key = $1 AND prefix = $2`,
		[]any{key, prefix}, true)
	if err != nil {
		return nil, fmt.Errorf("postgres: oai record %d in %s: %w", key, prefix, err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out[0], nil
}

// OAIRecordsOf returns the rows of keys without payloads, by key and
// prefix, over oai_records_key.
func (t *readTx) OAIRecordsOf(ctx context.Context, keys []int64) ([]*shelfmark.OAIRecord, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	out, err := t.oaiRecords(ctx, `SELECT `+oaiCols+` FROM oai_records WHERE key = ANY($1) ORDER BY key, prefix`, []any{keys}, false)
	if err != nil {
		return nil, fmt.Errorf("postgres: oai records of %d works: %w", len(keys), err)
	}
	return out, nil
}

// oaiSets runs a query returning key, spec, name.
func (t *readTx) oaiSets(ctx context.Context, sql string, args ...any) ([]shelfmark.OAISet, error) {
	var out []shelfmark.OAISet
	_, err := t.r.query(ctx, sql, args, func(rows pgx.Rows) error {
		var s shelfmark.OAISet
		err := rows.Scan(&s.Key, &s.Spec, &s.Name)
		out = append(out, s)
		return err
	})
	return out, err
}

// OAISets returns up to limit sets with keys above after, by key.
func (t *readTx) OAISets(ctx context.Context, after int64, limit int) ([]shelfmark.OAISet, error) {
	if limit <= 0 {
		return nil, nil
	}
	out, err := t.oaiSets(ctx, `SELECT key, spec, name FROM oai_sets WHERE key > $1 ORDER BY key LIMIT $2`, after, int64(limit))
	if err != nil {
		return nil, fmt.Errorf("postgres: oai sets after %d: %w", after, err)
	}
	return out, nil
}

// OAISetsByKey returns the sets among keys, by key.
func (t *readTx) OAISetsByKey(ctx context.Context, keys []int64) ([]shelfmark.OAISet, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	out, err := t.oaiSets(ctx, `SELECT key, spec, name FROM oai_sets WHERE key = ANY($1) ORDER BY key`, keys)
	if err != nil {
		return nil, fmt.Errorf("postgres: %d oai sets: %w", len(keys), err)
	}
	return out, nil
}

// OAISetTree returns the key of the set spec and of the sets below it: the
// exact spec and the range [spec+":", spec+";") of the unique spec index.
// The column's collation is "C" (bytewise, see the migration), in which ";"
// follows ":", so the range holds exactly the specs that start with
// spec+":", and not those of a sibling such as spec+"b".
func (t *readTx) OAISetTree(ctx context.Context, spec string) ([]int64, error) {
	var (
		keys  []int64
		found bool
	)
	_, err := t.r.query(ctx, `SELECT key, true FROM oai_sets WHERE spec = $1
UNION ALL SELECT key, false FROM oai_sets WHERE spec >= $2 AND spec < $3`,
		[]any{spec, spec + ":", spec + ";"}, func(rows pgx.Rows) error {
			var k int64
			var exact bool
			err := rows.Scan(&k, &exact)
			found = found || exact
			keys = append(keys, k)
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("postgres: oai set tree %q: %w", spec, err)
	}
	if !found {
		return nil, nil
	}
	return keys, nil
}

// Counter returns the value of a named counter, 0 when it was never set.
func (t *readTx) Counter(ctx context.Context, name string) (int64, error) {
	var v int64
	n, err := t.r.query(ctx, `SELECT value FROM counters WHERE name = $1`, []any{name}, func(rows pgx.Rows) error {
		return rows.Scan(&v)
	})
	if err != nil {
		return 0, fmt.Errorf("postgres: counter %s: %w", name, err)
	}
	if n == 0 {
		return 0, nil
	}
	return v, nil
}

// AddCounter adds delta to a named counter (created at 0) in one upsert
// and returns the new value.
func (t *writeTx) AddCounter(ctx context.Context, name string, delta int64) (int64, error) {
	var v int64
	if err := t.r.queryRow(ctx, `INSERT INTO counters (name, value) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET value = counters.value + EXCLUDED.value RETURNING value`,
		[]any{name, delta}, &v); err != nil {
		return 0, fmt.Errorf("postgres: add to counter %s: %w", name, err)
	}
	return v, nil
}

// latestRecords drops every record that a later one of the same (Key,
// Prefix) replaces, keeping the order of the rest.
func latestRecords(recs []*shelfmark.OAIRecord) []*shelfmark.OAIRecord {
	type id struct {
		key    int64
		prefix string
	}
	last := make(map[id]int, len(recs))
	for i, r := range recs {
		last[id{r.Key, r.Prefix}] = i
	}
	if len(last) == len(recs) {
		return recs
	}
	out := make([]*shelfmark.OAIRecord, 0, len(last))
	for i, r := range recs {
		if last[id{r.Key, r.Prefix}] == i {
			out = append(out, r)
		}
	}
	return out
}

// deleteOldOAISQL removes the rows that a batch replaces ($1 keys, $2
// prefixes, found by the unique index (key, prefix)) and their set entries,
// which their sets column names, and brings the counts of oai_counts up to
// date in one upsert: the batch's own rows ($3 prefixes, $4 collections, 0
// for the format, $5 how many, per format and set) less the rows and set
// entries removed.
const deleteOldOAISQL = `WITH old AS (
    DELETE FROM oai_records o USING unnest($1::bigint[], $2::text[]) AS n(key, prefix)
    WHERE o.key = n.key AND o.prefix = n.prefix
    RETURNING o.seq, o.prefix, o.sets
), gone AS (
    DELETE FROM oai_set_records s
    USING old CROSS JOIN LATERAL unnest(string_to_array(old.sets, ',')::bigint[]) AS c(collection)
    WHERE s.collection = c.collection AND s.prefix = old.prefix AND s.seq = old.seq
    RETURNING s.prefix, s.collection
), delta AS (
    SELECT prefix, collection, sum(n)::bigint AS n FROM (
        SELECT prefix, 0::bigint AS collection, -1::bigint AS n FROM old
        UNION ALL SELECT prefix, collection, -1 FROM gone
        UNION ALL SELECT * FROM unnest($3::text[], $4::bigint[], $5::bigint[])
    ) d GROUP BY prefix, collection HAVING sum(n) <> 0
)
INSERT INTO oai_counts (prefix, collection, n) SELECT prefix, collection, n FROM delta
ON CONFLICT (prefix, collection) DO UPDATE SET n = oai_counts.n + EXCLUDED.n`

var (
	oaiRecordColumns    = strings.Split(oaiColsPayload, ", ")
	oaiSetRecordColumns = []string{"collection", "prefix", "seq"}
)

// PutOAIRecords replaces the rows of the records' (Key, Prefix), with
// their set entries, and writes the records (a later record of the same
// (Key, Prefix) in recs wins), in three statements whatever their number:
// the deletion of the old rows and their set entries (which also brings the
// counts of oai_counts up to date), the insertion of the
// rows and that of their set entries (each COPY for many rows, else one
// INSERT over unnest arrays).
func (t *writeTx) PutOAIRecords(ctx context.Context, recs []*shelfmark.OAIRecord) error {
	if len(recs) == 0 {
		return nil
	}
	recs = latestRecords(recs)
	n := len(recs)
	var (
		seqs, keys, datestamps = make([]int64, n), make([]int64, n), make([]int64, n)
		prefixes, sets         = make([]string, n), make([]string, n)
		deleted                = make([]bool, n)
		payloads               = make([][]byte, n)
		eColls, eSeqs          []int64
		ePrefixes              []string
	)
	for i, r := range recs {
		seqs[i], keys[i], datestamps[i] = r.Seq, r.Key, r.Datestamp.Unix()
		prefixes[i], sets[i], deleted[i] = r.Prefix, formatSets(r.Sets), r.Deleted
		payloads[i] = r.Payload
		if payloads[i] == nil {
			payloads[i] = []byte{} // NOT NULL
		}
		for _, c := range sortedSets(r.Sets) {
			eColls, ePrefixes, eSeqs = append(eColls, c), append(ePrefixes, r.Prefix), append(eSeqs, r.Seq)
		}
	}
	type countKey struct {
		prefix     string
		collection int64
	}
	counts := map[countKey]int64{}
	var order []countKey
	bump := func(k countKey) {
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	for _, r := range recs {
		bump(countKey{r.Prefix, 0})
		for _, c := range sortedSets(r.Sets) {
			bump(countKey{r.Prefix, c})
		}
	}
	cPrefixes, cColls, cNs := make([]string, len(order)), make([]int64, len(order)), make([]int64, len(order))
	for i, k := range order {
		cPrefixes[i], cColls[i], cNs[i] = k.prefix, k.collection, counts[k]
	}
	if _, err := t.r.exec(ctx, deleteOldOAISQL, keys, prefixes, cPrefixes, cColls, cNs); err != nil {
		return fmt.Errorf("postgres: put %d oai records: delete the old rows: %w", n, err)
	}
	var err error
	if t.r.useCopy(n) {
		_, err = t.r.copyFrom(ctx, "oai_records", oaiRecordColumns, n, func(i int) []any {
			return []any{seqs[i], prefixes[i], keys[i], datestamps[i], deleted[i], sets[i], payloads[i]}
		})
	} else {
		_, err = t.r.exec(ctx, `INSERT INTO oai_records (`+oaiColsPayload+`)
SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::boolean[], $6::text[], $7::bytea[])`,
			seqs, prefixes, keys, datestamps, deleted, sets, payloads)
	}
	if err != nil {
		return fmt.Errorf("postgres: put %d oai records: %w", n, err)
	}
	if m := len(eColls); m == 0 {
		return nil
	} else if t.r.useCopy(m) {
		_, err = t.r.copyFrom(ctx, "oai_set_records", oaiSetRecordColumns, m, func(i int) []any {
			return []any{eColls[i], ePrefixes[i], eSeqs[i]}
		})
	} else {
		_, err = t.r.exec(ctx, `INSERT INTO oai_set_records (collection, prefix, seq)
SELECT * FROM unnest($1::bigint[], $2::text[], $3::bigint[])`, eColls, ePrefixes, eSeqs)
	}
	if err != nil {
		return fmt.Errorf("postgres: put %d oai records: set entries: %w", n, err)
	}
	return nil
}

// PutOAISets inserts or replaces sets by key (a later set of the same key
// wins), in two statements. The old rows of those keys go first, so sets
// that swap or pass on specs within one call never meet the unique spec
// index midway.
func (t *writeTx) PutOAISets(ctx context.Context, sets []shelfmark.OAISet) error {
	if len(sets) == 0 {
		return nil
	}
	last := make(map[int64]int, len(sets))
	for i, s := range sets {
		last[s.Key] = i
	}
	var (
		keys         = make([]int64, 0, len(last))
		specs, names = make([]string, 0, len(last)), make([]string, 0, len(last))
	)
	for i, s := range sets {
		if last[s.Key] == i {
			keys, specs, names = append(keys, s.Key), append(specs, s.Spec), append(names, s.Name)
		}
	}
	if _, err := t.r.exec(ctx, `DELETE FROM oai_sets WHERE key = ANY($1)`, keys); err != nil {
		return fmt.Errorf("postgres: put %d oai sets: %w", len(keys), err)
	}
	if _, err := t.r.exec(ctx, `INSERT INTO oai_sets (key, spec, name) SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[])`,
		keys, specs, names); err != nil {
		return fmt.Errorf("postgres: put %d oai sets: %w", len(keys), err)
	}
	return nil
}

// DeleteOAISets removes sets in one statement.
func (t *writeTx) DeleteOAISets(ctx context.Context, keys []int64) error {
	if len(keys) == 0 {
		return nil
	}
	if _, err := t.r.exec(ctx, `DELETE FROM oai_sets WHERE key = ANY($1)`, keys); err != nil {
		return fmt.Errorf("postgres: delete %d oai sets: %w", len(keys), err)
	}
	return nil
}
