package postgres

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// TestOAIPageCostFlat: a page of the OAI-PMH view (a format's rows, the
// rows of one set, of two sets) and a page of changes touch as many buffers
// deep in a large view as on its first page, with custom and generic plans
// (rule R11); so does the tally that gives a first page its
// completeListSize, for a format or a set of 40,000 rows.
func TestOAIPageCostFlat(t *testing.T) {
	db, schema := openTest(t, Options{})
	ctx := context.Background()
	const n = 40000
	// seqs 1..2n: oai_dc rows odd, marcxml rows even; every row is in set
	// 1, one in two of set 2, one in five of set 3.
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	var recs []*shelfmark.OAIRecord
	var rows []*shelfmark.ResourceRow
	for k := int64(1); k <= n; k++ {
		sets := []int64{1}
		if k%2 == 0 {
			sets = append(sets, 2)
		}
		if k%5 == 0 {
			sets = append(sets, 3)
		}
		for i, prefix := range []string{"oai_dc", "marcxml"} {
			seq := 2*k - 1 + int64(i)
			recs = append(recs, &shelfmark.OAIRecord{Prefix: prefix, Seq: seq, Key: k, Datestamp: base.Add(time.Duration(seq) * time.Second),
				Sets: sets, Payload: []byte(fmt.Sprintf("<record key=%d>%0512d</record>", k, seq))})
		}
		r := row(k, 0, 0)
		r.Seq = k
		rows = append(rows, r)
	}
	update(t, db, func(tx shelfmark.WriteTx) error {
		if err := tx.InsertResources(ctx, rows); err != nil {
			return err
		}
		return tx.PutOAIRecords(ctx, recs)
	})
	if _, err := adminPool(t).Exec(ctx, "ANALYZE "+schema+".oai_records, "+schema+".oai_set_records, "+schema+".resources"); err != nil {
		t.Fatal(err)
	}
	const limit = 50
	for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
		for _, c := range []struct {
			name        string
			query       string
			first, deep []any
			bound       int64
		}{
			{"records", dialect.OAIListPayload, []any{"'oai_dc'", 0, 2 * n, limit}, []any{"'oai_dc'", 2*n - 200, 2 * n, limit}, 3*limit + 20},
			{"identifiers", dialect.OAIList, []any{"'oai_dc'", 0, 2 * n, limit}, []any{"'oai_dc'", 2*n - 200, 2 * n, limit}, 3*limit + 20},
			{"records of a set", oaiSetListSQL(true), []any{"'{2}'", "'oai_dc'", 0, 2 * n, limit}, []any{"'{2}'", "'oai_dc'", 2*n - 400, 2 * n, limit}, 4*limit + 20},
			{"records of two sets", oaiSetListSQL(true), []any{"'{2,3}'", "'oai_dc'", 0, 2 * n, limit}, []any{"'{2,3}'", "'oai_dc'", 2*n - 400, 2 * n, limit}, 5*limit + 20},
			{"changes", dialect.Changes, []any{0, limit}, []any{n - 100, limit}, 3*limit + 20},
			// completeListSize: a kept count and the ends of the list
			{"tally", dialect.OAICount, []any{"'oai_dc'"}, []any{"'marcxml'"}, 20},
			{"tally of a set", dialect.OAISetCount, []any{"'oai_dc'", 1}, []any{"'oai_dc'", 3}, 20},
		} {
			first := pageBuffers(t, schema, mode, c.query, c.first...)
			deep := pageBuffers(t, schema, mode, c.query, c.deep...)
			t.Logf("%s, %s: page 1 touches %d buffers, a deep page %d", c.name, mode, first, deep)
			if first > c.bound || deep > c.bound {
				t.Errorf("%s, %s: pages of %d touch %d (page 1) and %d (deep) buffers; more than %d grows with the view",
					c.name, mode, limit, first, deep, c.bound)
			}
		}
	}
	view(t, db, func(tx shelfmark.ReadTx) error {
		page, err := tx.OAIRecords(ctx, shelfmark.OAIList{Prefix: "oai_dc", Sets: []int64{3, 2}, After: 2*n - 41, Max: 2 * n, Limit: 5})
		if err != nil {
			return err
		}
		// from key n-19 on, those in set 2 or 3
		var keys []int64
		for _, r := range page {
			keys = append(keys, r.Key)
		}
		if fmt.Sprint(keys) != fmt.Sprint([]int64{n - 18, n - 16, n - 15, n - 14, n - 12}) {
			t.Errorf("deep page of two sets: %v", keys)
		}
		return nil
	})
}
