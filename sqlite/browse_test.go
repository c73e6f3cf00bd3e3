package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// explain returns SQLite's plan of a statement, one line per step.
func explain(t *testing.T, db *DB, stmt string, args []any) []string {
	t.Helper()
	rows, err := db.read.QueryContext(context.Background(), "EXPLAIN QUERY PLAN "+stmt, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	return plan
}

// TestBrowsePlan: a browse reads the collection's memberships backwards by
// primary key and each member's documents through an index on work, and
// sorts nothing but the two short ranges of a page after a cursor.
func TestBrowsePlan(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []shelfmark.SearchQuery{
		{Collection: 7},
		{Collection: 7, Kind: shelfmark.KindWork},
		{Collection: 7, Kind: shelfmark.KindFileSet, Format: "PDF"},
		{Collection: 7, Format: "PDF"},
	} {
		for _, after := range []*shelfmark.SearchCursor{nil, {Window: 9, Key: 12}} {
			stmt, args := dialect.BrowseSQL(&q, after, 21, true)
			plan := explain(t, db, stmt, args)
			all := strings.Join(plan, "\n")
			sorts := 0 // ORDER BYs but those of the facets' GROUP BY results
			for i, d := range plan {
				if strings.Contains(d, "TEMP B-TREE FOR ORDER BY") && !strings.Contains(plan[i-1], "GROUP BY") {
					sorts++
				}
				for _, table := range []string{"d", "r", "x", "w", "ms", "memberships", "resources", "search_docs", "search_text"} {
					if strings.HasPrefix(d, "SCAN "+table+" ") || d == "SCAN "+table {
						t.Errorf("%+v, after %v: %s is scanned:\n%s", q, after, table, all)
					}
				}
			}
			// after a cursor, the page's two ranges are merged (each sorted
			// alone: at most a page of rows)
			want := 0
			if after != nil {
				want = 2
			}
			if sorts != want {
				t.Errorf("%+v, after %v: %d sorts, want %d:\n%s", q, after, sorts, want, all)
			}
			if q.Kind != "" && !strings.Contains(all, "search_docs_work_kind (work=? AND kind=?)") {
				t.Errorf("%+v, after %v: a kind is not read by work and kind:\n%s", q, after, all)
			}
			if !strings.Contains(all, "SEARCH m USING PRIMARY KEY (collection=?)") {
				t.Errorf("%+v, after %v: the memberships are not read by collection:\n%s", q, after, all)
			}
		}
	}
}

// TestBrowseExamines: the first page of a browse with its facets, and a
// page at 90% depth, read as many rows of resources and memberships for a
// collection of 5,000 members as for one of 1,100 (and a page after a
// cursor about a page's worth), counted by SQLite itself.
func TestBrowseExamines(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "browse.db")
	db, err := Open(ctx, path, Options{Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	defer repo.Close()
	collection := func(n int) (int64, []int64) {
		coll, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection})
		if err != nil {
			t.Fatal(err)
		}
		var works []int64
		for len(works) < n {
			nrs := make([]*shelfmark.NewResource, min(1000, n-len(works)))
			for i := range nrs {
				nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}}
			}
			res, errs := repo.CreateResources(ctx, nrs)
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			var docs []shelfmark.SearchDoc
			for _, r := range res {
				k, _ := repo.IDs().Key(r.ID)
				works = append(works, k)
				docs = append(docs, shelfmark.SearchDoc{Key: k, Work: k, Kind: shelfmark.KindWork, Title: "w"},
					shelfmark.SearchDoc{Key: 1<<30 + k, Work: k, Kind: shelfmark.KindFileSet, Format: "PDF", Body: "p"})
			}
			if err := db.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) }); err != nil {
				t.Fatal(err)
			}
		}
		key, _ := repo.IDs().Key(coll.ID)
		return key, works
	}
	const c = shelfmark.SearchWindow
	sc, sw := collection(c + 100)
	lc, lw := collection(5000)
	probe := probeDB(t, path)
	now := time.Now()
	limit := shelfmark.DefaultSearchLimit
	reads := map[string]int64{}
	for _, coll := range []struct {
		key   int64
		works []int64
	}{{sc, sw}, {lc, lw}} {
		q := shelfmark.SearchQuery{Collection: coll.key, Now: now}
		k := coll.works[len(coll.works)/10]
		deep := &shelfmark.SearchCursor{Window: k, Key: k}
		for _, what := range []string{"first page with facets", "a page at 90% depth", "a page at 90% depth, works only"} {
			var query string
			var args []any
			switch what {
			case "first page with facets":
				query, args = dialect.BrowseSQL(&q, nil, limit+1, true)
			case "a page at 90% depth":
				query, args = dialect.BrowseSQL(&q, deep, limit+1, false)
			default:
				q := q
				q.Kind = shelfmark.KindWork
				query, args = dialect.BrowseSQL(&q, deep, limit+1, false)
			}
			read, returned := examined(t, probe, query, args)
			t.Logf("%d members, %s: %d rows of resources and memberships read, %d returned", len(coll.works), what, read, returned)
			if what != "first page with facets" && read > int64(4*(limit+1)) {
				t.Errorf("%d members, %s: %d rows read; want about a page's members", len(coll.works), what, read)
			}
			if what == "first page with facets" && read > 4*(c+1) {
				t.Errorf("%d members, %s: %d rows read; want about a sample's", len(coll.works), what, read)
			}
			if coll.key == sc {
				reads[what] = read
			} else if read != reads[what] {
				t.Errorf("%s: %d rows read for %d members, %d for %d", what, reads[what], len(sw), read, len(lw))
			}
		}
	}
}

// TestEverythingPlan: a query without words and without a collection
// (everything, newest first) reads its window from search_docs in key
// order (backwards by rowid, from the window's top when it has one) with
// each document's access row by key, and sorts nothing there: the window
// stops at SearchWindow+1 visible documents, whatever the index holds, for
// an anonymous reader and for a signed-in one.
func TestEverythingPlan(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []shelfmark.SearchQuery{
		{Now: time.Now()},
		{Now: time.Now(), Kind: shelfmark.KindWork},
		{Now: time.Now(), Reader: &shelfmark.SearchReader{User: 2, Collections: []int64{3}}},
	} {
		for _, top := range []int64{0, 5000} {
			stmt, args := dialect.SearchSQL(&q, nil, top, nil, 21, top == 0)
			plan := explain(t, db, stmt, args)
			all := strings.Join(plan, "\n")
			start := slices.Index(plan, "MATERIALIZE win")
			end := slices.Index(plan, "SCAN win")
			if start < 0 || end < start {
				t.Fatalf("%+v, top %d: no window:\n%s", q.Reader, top, all)
			}
			// the window's own reads: up to the signed-in reader's walk (a
			// correlated subquery over a few rows, made for documents their
			// access does not show)
			for i := start; i < end; i++ {
				if strings.HasPrefix(plan[i], "CORRELATED") {
					end = i
				}
			}
			win := strings.Join(plan[start:end], "\n")
			read := "SCAN d"
			if top > 0 {
				read = "SEARCH d USING INTEGER PRIMARY KEY (rowid<?)"
			}
			if plan[start+1] != read || !strings.Contains(win, "SEARCH r USING INTEGER PRIMARY KEY (rowid=?)") ||
				strings.Contains(win, "TEMP B-TREE") || strings.Contains(win, "SCAN r") {
				t.Errorf("%+v, top %d: the window is not read in key order with its access rows by key:\n%s", q.Reader, top, win)
			}
		}
	}
}
