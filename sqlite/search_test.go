package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mattn/go-sqlite3"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// probeDriver is SQLite with a function probe() that counts its calls:
// TestSearchExamines shadows the resources and memberships tables with
// temporary views that call it for every row read, so the count is the
// number of their rows a statement reads.
var (
	probeOnce  sync.Once
	probeCalls atomic.Int64
)

func probeDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	probeOnce.Do(func() {
		sql.Register("sqlite3_probe", &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
			return c.RegisterFunc("probe", func() bool { probeCalls.Add(1); return true }, false)
		}})
	})
	db, err := sql.Open("sqlite3_probe", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	for _, table := range []string{"resources", "memberships"} {
		if _, err := db.Exec(`CREATE TEMP VIEW ` + table + ` AS SELECT * FROM main.` + table + ` WHERE probe()`); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// examined runs a statement on the probe connection and returns how many
// resources and memberships rows it read and how many rows it returned.
func examined(t *testing.T, db *sql.DB, query string, args []any) (read, returned int64) {
	t.Helper()
	probeCalls.Store(0)
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		returned++
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return probeCalls.Load(), returned
}

// TestSearchExamines: the statement of a search reads as many rows of
// resources (the visibility join, the collection facet) and memberships
// (the collection facet) for a word in 10 windows' worth of documents as
// for a word in five windows' worth, on the first page with its facets
// and on a page deep in the results: about one sample (a window and one
// match more) each, never the number of matches or of works. Counted by
// SQLite itself, through views that call a counting function for every
// row read.
func TestSearchExamines(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "search.db")
	db, err := Open(ctx, path, Options{Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	defer repo.Close()
	coll, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection})
	if err != nil {
		t.Fatal(err)
	}
	const c = shelfmark.SearchWindow
	small, large := 5*c, 10*c
	// a work in the collection for each document
	var works []int64
	for len(works) < large {
		nrs := make([]*shelfmark.NewResource, 1000)
		for i := range nrs {
			nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}}
		}
		res, errs := repo.CreateResources(ctx, nrs)
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			k, _ := repo.IDs().Key(r.ID)
			works = append(works, k)
		}
	}
	var docs []shelfmark.SearchDoc
	for i := 0; i < large; i++ {
		body := "large"
		if i%(large/small) == 0 {
			body += " small"
		}
		format := "PDF"
		if i%3 == 0 {
			format = "TIFF"
		}
		docs = append(docs, shelfmark.SearchDoc{Key: int64(1<<30 + i), Work: works[i], Kind: shelfmark.KindFileSet, Format: format,
			Title: fmt.Sprint("page ", i), Body: body})
	}
	if err := db.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) }); err != nil {
		t.Fatal(err)
	}
	probe := probeDB(t, path)
	now := time.Now()
	limit := shelfmark.DefaultSearchLimit
	reads := map[string]int64{}
	for _, word := range []string{"small", "large"} {
		q := shelfmark.SearchQuery{Text: word, Now: now}
		match := ftsMatchOf([]shelfmark.SearchTerm{{Text: word}})
		// a cursor in the middle of the results
		var deep *shelfmark.SearchCursor
		if err := db.View(ctx, func(tx shelfmark.ReadTx) error {
			q := q
			q.Limit = shelfmark.MaxSearchLimit
			for i := 0; i < 3*small/4/shelfmark.MaxSearchLimit; i++ { // into the second window
				res, err := tx.Search(ctx, q)
				if err != nil {
					return err
				}
				deep, q.After = res.Next, res.Next
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		// the measure sees every row a statement reads: counting every
		// match (as the facets did before windows) reads them all
		count := sqlstore.NewStmt(arg)
		count.WriteString(`SELECT count(*) FROM `)
		searchMatches(count, &q, match.expr)
		n := map[string]int64{"small": int64(small), "large": int64(large)}[word]
		if read, _ := examined(t, probe, count.String(), count.Args); read != n {
			t.Fatalf("%q: counting every match read %d rows, want %d", word, read, n)
		}
		grouped := q
		grouped.Group = true
		for _, what := range []string{"first page with facets", "a page deep in the results", "a grouped page deep in the results"} {
			var query string
			var args []any
			switch what {
			case "first page with facets":
				query, args = dialect.SearchSQL(&q, match, 0, nil, limit+1, true)
			case "a page deep in the results":
				query, args = dialect.SearchSQL(&q, match, deep.Window, deep, limit+1, false)
			default:
				// each of the window's works is looked up for a newer
				// match: none here, so no resources row is read for it
				query, args = dialect.SearchSQL(&grouped, match, deep.Window, &shelfmark.SearchCursor{Window: deep.Window, Score: deep.Score, Key: works[0]}, limit+1, false)
			}
			read, returned := examined(t, probe, query, args)
			t.Logf("%q in %d documents, %s: %d rows of resources and memberships read, %d returned", word, n, what, read, returned)
			// the sample's works, and with the facets their memberships and
			// the collection of each (at most)
			if read < c+1 || read > 3*(c+1) || what != "first page with facets" && read != c+1 {
				t.Errorf("%q, %s: %d rows read; want one sample (%d; with the facets, its memberships and their collections too)", word, what, read, c+1)
			}
			if word == "small" {
				reads[what] = read
			} else if read != reads[what] {
				t.Errorf("%s: %d rows read for a word in %d documents, %d for one in %d", what, reads[what], small, read, large)
			}
		}
	}
	// the facet statement as Search runs it reads one sample and the
	// collections of its works
	var res *shelfmark.SearchResult
	if err := db.View(ctx, func(tx shelfmark.ReadTx) (err error) {
		res, err = tx.Search(ctx, shelfmark.SearchQuery{Text: "large", Now: now, Facets: true})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if !res.Estimated || res.Total != int64(large) {
		t.Errorf("large: total %d, estimated %v; want %d, estimated", res.Total, res.Estimated, large)
	}
}

// TestSearchPlan: a search reads search_fts twice: the window in rowid
// order (newest first, from the window's top), stopping at its LIMIT with
// no sort of every match; and the page's hits, for their snippets, in one
// start over the range of the page's keys (never every match of the
// expression, and never one start per hit).
func TestSearchPlan(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []shelfmark.SearchQuery{
		{Text: "x"},
		{Text: "x", Kind: shelfmark.KindWork, Format: "PDF", Collection: 7},
		{Text: "x", Group: true},
		{Text: "x", Group: true, Reader: &shelfmark.SearchReader{User: 3, Collections: []int64{4}}},
	} {
		for _, top := range []int64{0, 99} {
			for _, facets := range []bool{false, true} {
				stmt, args := dialect.SearchSQL(&q, ftsMatch{expr: `"x"`, mark: `"x"`}, top, &shelfmark.SearchCursor{Window: top, Score: 1, Key: 5}, 21, facets)
				rows, err := db.read.QueryContext(ctx, "EXPLAIN QUERY PLAN "+stmt, args...)
				if err != nil {
					t.Fatal(err)
				}
				var plan []string
				for rows.Next() {
					var id, parent, unused int
					var detail string
					if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
						t.Fatal(err)
					}
					plan = append(plan, detail)
				}
				rows.Close()
				all := strings.Join(plan, "\n")
				var fts []string
				for i, d := range plan {
					if strings.Contains(d, "VIRTUAL TABLE") && !strings.Contains(d, "json_each") {
						fts = append(fts, d)
						// the window's read is followed by look-ups only
						if len(fts) == 1 && i+1 < len(plan) && strings.Contains(plan[i+1], "TEMP B-TREE") {
							t.Errorf("%+v, top %d: the window sorts its matches:\n%s", q, top, all)
						}
					}
				}
				// a grouped window below the newest looks up, by rowid,
				// the matches of its works above its top
				want := 2
				if q.Group && top > 0 {
					want = 3
				}
				if len(fts) != want || !strings.HasPrefix(fts[0], "SCAN search_fts VIRTUAL TABLE") {
					t.Errorf("%+v, top %d: search_fts is not read once in order and then only by rowid or over the page's range:\n%s", q, top, all)
				}
				// the page's snippets: one FTS5 start over the page's range
				// of keys (>< and no rowid equality, which would be one
				// start per hit), never sorted; every other look-up is by
				// rowid
				hits := 0
				for i, d := range plan {
					if !strings.HasSuffix(d, "MATERIALIZE f") {
						continue
					}
					hits++
					if i+1 == len(plan) || !strings.HasPrefix(plan[i+1], "SCAN search_fts VIRTUAL TABLE") ||
						!strings.HasSuffix(plan[i+1], "><") || strings.Contains(plan[i+1], "=") {
						t.Errorf("%+v, top %d: the snippets are not one read over the page's range:\n%s", q, top, all)
					}
					for _, after := range plan[i+1:] {
						if strings.Contains(after, "TEMP B-TREE") {
							t.Errorf("%+v, top %d: the snippets are sorted:\n%s", q, top, all)
						}
						if strings.HasPrefix(after, "SCAN hits") {
							break
						}
					}
				}
				if hits != 1 {
					t.Errorf("%+v, top %d: %d snippet look-ups, want 1:\n%s", q, top, hits, all)
				}
				for _, f := range fts[1:] {
					if !strings.Contains(f, "=M") && !strings.HasSuffix(f, "><") {
						t.Errorf("%+v, top %d: search_fts is read other than by rowid or over the page's range: %s\n%s", q, top, f, all)
					}
				}
				if q.Group && top > 0 && !strings.Contains(all, "search_docs_work") {
					t.Errorf("%+v, top %d: the works' newer matches are not looked up by work:\n%s", q, top, all)
				}
			}
		}
	}
}
