package postgres

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// TestBrowseExamines: browsing a collection of 6,000 members reads no more
// rows of search_docs, resources and memberships, and touches about as
// many buffers, as browsing one of 1,200, on the first page with its
// facets (about one sample) and on a page at 90% depth (about one page),
// with or without a kind filter. Measured by PostgreSQL itself (EXPLAIN
// ANALYZE).
func TestBrowseExamines(t *testing.T) {
	db, schema := openTest(t, Options{})
	ctx := context.Background()
	const c = shelfmark.SearchWindow
	small, large := 1200, 6000
	// collections 1 and 2, and their members: a work and one page each
	rows := []*shelfmark.ResourceRow{row(1, 0, 0), row(2, 0, 0)}
	var ms []shelfmark.Membership
	var docs []shelfmark.SearchDoc
	members := map[int64][]int64{}
	k := int64(10)
	for coll, n := range map[int64]int{1: small, 2: large} {
		for range n {
			rows = append(rows, row(k, 0, 0))
			ms = append(ms, shelfmark.Membership{Collection: coll, Member: k})
			members[coll] = append(members[coll], k)
			docs = append(docs, shelfmark.SearchDoc{Key: k, Work: k, Kind: shelfmark.KindWork, Title: "w"},
				shelfmark.SearchDoc{Key: 1<<30 + k, Work: k, Kind: shelfmark.KindFileSet, Format: "PDF", Body: "p"})
			k++
		}
	}
	update(t, db, func(tx shelfmark.WriteTx) error {
		return errors.Join(tx.InsertResources(ctx, rows), tx.InsertMemberships(ctx, ms))
	})
	update(t, db, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) })
	if _, err := adminPool(t).Exec(ctx, "ANALYZE "+schema+".search_docs, "+schema+".resources, "+schema+".memberships"); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	limit := shelfmark.DefaultSearchLimit
	type cost struct{ buffers, rows int64 }
	costs := map[string]cost{}
	for _, coll := range []int64{1, 2} {
		q := shelfmark.SearchQuery{Collection: coll, Now: now}
		m := members[coll]
		deep := &shelfmark.SearchCursor{Window: m[len(m)/10], Key: m[len(m)/10]}
		for _, what := range []string{"first page with facets", "a page at 90% depth", "a page at 90% depth, works only"} {
			var sql string
			var args []any
			switch what {
			case "first page with facets":
				sql, args = dialect.BrowseSQL(&q, nil, limit+1, true)
			case "a page at 90% depth":
				sql, args = dialect.BrowseSQL(&q, deep, limit+1, false)
			default:
				q := q
				q.Kind = shelfmark.KindWork
				sql, args = dialect.BrowseSQL(&q, deep, limit+1, false)
			}
			buffers, rows := explainSearch(t, schema, sql, args)
			t.Logf("%d members, %s: %d rows of search_docs, resources and memberships, %d buffers", len(m), what, rows, buffers)
			if what == "first page with facets" && rows > 6*(c+1) || what != "first page with facets" && rows > int64(8*(limit+1)) {
				t.Errorf("%d members, %s: %d rows read", len(m), what, rows)
			}
			if coll == 1 {
				costs[what] = cost{buffers, rows}
			} else if s := costs[what]; rows != s.rows || buffers > s.buffers+s.buffers/4+10 {
				t.Errorf("%s: %d rows and %d buffers for %d members, %d rows and %d buffers for %d",
					what, s.rows, s.buffers, small, rows, buffers, large)
			}
		}
	}
}
