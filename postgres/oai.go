package postgres

import (
	"context"
	"fmt"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// The OAI-PMH view (oai.go in the root package, migration 0003_oai.sql).
// Every list is a keyset walk over seq: the rows of a format are one range
// of oai_records_prefix (prefix, seq), the rows of a set one range of the
// primary key of oai_set_records (collection, prefix, seq).

const (
	oaiColsO = `o.seq, o.prefix, o.key, o.datestamp, o.deleted, o.sets`
)

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

// oaiRecordsInSets is sqlstore.OAI.OAIRecordsInSets: one statement
// (oaiSetListSQL).
func oaiRecordsInSets(ctx context.Context, q sqlstore.Querier, l shelfmark.OAIList, sets []int64) ([]*shelfmark.OAIRecord, error) {
	return sqlstore.OAIRecords(ctx, q, oaiSetListSQL(l.Payload), []any{sets, l.Prefix, l.After, l.Max, int64(l.Limit)}, l.Payload)
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

// replaceOAIRecords is sqlstore.Dialect.ReplaceOAIRecords, in one
// statement whatever the number of records (deleteOldOAISQL).
func replaceOAIRecords(ctx context.Context, q sqlstore.Execer, recs []*shelfmark.OAIRecord) error {
	t, ok := q.(*writeTx)
	if !ok {
		return fmt.Errorf("%T is not a PostgreSQL write transaction", q)
	}
	keys, prefixes := make([]int64, len(recs)), make([]string, len(recs))
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
	for i, r := range recs {
		keys[i], prefixes[i] = r.Key, r.Prefix
		bump(countKey{r.Prefix, 0})
		for _, c := range sqlstore.SortedSets(r.Sets) {
			bump(countKey{r.Prefix, c})
		}
	}
	cPrefixes, cColls, cNs := make([]string, len(order)), make([]int64, len(order)), make([]int64, len(order))
	for i, k := range order {
		cPrefixes[i], cColls[i], cNs[i] = k.prefix, k.collection, counts[k]
	}
	_, err := t.r.exec(ctx, deleteOldOAISQL, keys, prefixes, cPrefixes, cColls, cNs)
	return err
}
