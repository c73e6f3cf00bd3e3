package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// explainSearch runs a search statement under EXPLAIN (ANALYZE, BUFFERS)
// in the test's schema, planned for its values as Search plans it, and
// returns the buffers it touched and the rows its scans of search_docs,
// resources and memberships read (returned or removed by a filter).
func explainSearch(t *testing.T, schema, query string, args []any) (buffers, rows int64) {
	t.Helper()
	ctx := context.Background()
	conn, err := adminPool(t).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	defer conn.Exec(ctx, "RESET search_path")
	if _, err := conn.Exec(ctx, "SET search_path TO "+schema); err != nil {
		t.Fatal(err)
	}
	var plan []struct {
		Plan map[string]any `json:"Plan"`
	}
	if err := conn.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+query, append([]any{pgx.QueryExecModeExec}, args...)...).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("SHELFMARK_PG_SHOW_PLANS") != "" {
		b, _ := json.MarshalIndent(plan, "", " ")
		t.Logf("%s", b)
	}
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if rel, _ := n["Relation Name"].(string); rel == "search_docs" || rel == "resources" || rel == "memberships" {
			r, _ := n["Actual Rows"].(float64)
			removed, _ := n["Rows Removed by Filter"].(float64)
			rechecked, _ := n["Rows Removed by Index Recheck"].(float64)
			loops, _ := n["Actual Loops"].(float64)
			rows += int64((r + removed + rechecked) * loops)
		}
		kids, _ := n["Plans"].([]any)
		for _, k := range kids {
			if m, ok := k.(map[string]any); ok {
				walk(m)
			}
		}
	}
	walk(plan[0].Plan)
	hit, _ := plan[0].Plan["Shared Hit Blocks"].(float64)
	read, _ := plan[0].Plan["Shared Read Blocks"].(float64)
	return int64(hit + read), rows
}

// TestSearchExamines: the statements of a search read no more rows of
// search_docs, resources and memberships, and touch no more buffers, for a
// word in 10
// windows' worth of documents than for a word in five windows' worth, on
// the first page with its facets and on a page deep in the results: about
// one window for a word in every document, never the number of matches.
// Measured by PostgreSQL itself (EXPLAIN ANALYZE), with the plans the
// statistics of the tsvector column lead to. (A window read along the
// primary key reads the documents between its matches too: a word in one
// document in d reads about d × SearchWindow rows; PostgreSQL takes the
// GIN index instead when that is fewer, so a window never reads more than
// about sqrt(SearchWindow × documents).)
func TestSearchExamines(t *testing.T) {
	db, schema := openTest(t, Options{})
	ctx := context.Background()
	const c = shelfmark.SearchWindow
	small, large := 5*c, 10*c
	// a public collection (key 1) and a work in it for each document
	rows := []*shelfmark.ResourceRow{row(1, 0, 0)}
	var ms []shelfmark.Membership
	for k := int64(2); k < int64(2+large); k++ {
		rows = append(rows, row(k, 0, 0))
		ms = append(ms, shelfmark.Membership{Collection: 1, Member: k})
	}
	update(t, db, func(tx shelfmark.WriteTx) error {
		return errors.Join(tx.InsertResources(ctx, rows), tx.InsertMemberships(ctx, ms))
	})
	var docs []shelfmark.SearchDoc
	for i := 0; i < large; i++ {
		body := "large"
		if i%(large/small) == 0 {
			body += " small"
		}
		docs = append(docs, shelfmark.SearchDoc{Key: int64(1<<30 + i), Work: int64(2 + i), Kind: shelfmark.KindFileSet, Format: "PDF",
			Title: fmt.Sprint("page ", i), Body: body})
	}
	update(t, db, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) })
	if _, err := adminPool(t).Exec(ctx, "ANALYZE "+schema+".search_docs, "+schema+".resources, "+schema+".memberships"); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	limit := shelfmark.DefaultSearchLimit
	type cost struct{ buffers, rows int64 }
	costs := map[string]cost{}
	for _, word := range []string{"small", "large"} {
		q := shelfmark.SearchQuery{Text: word, Now: now}
		terms := []shelfmark.SearchTerm{{Text: word}}
		var deep *shelfmark.SearchCursor
		view(t, db, func(tx shelfmark.ReadTx) error {
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
		})
		n := map[string]int{"small": small, "large": large}[word]
		// the measure sees every row a statement reads: counting every
		// match (as the facets did before windows) reads them all
		count := sqlstore.NewStmt(arg)
		count.WriteString(`SELECT count(*) FROM `)
		searchMatches(count, &q, tsqExpr(count, terms))
		if _, rows := explainSearch(t, schema, count.String(), count.Args); rows < int64(n) {
			t.Fatalf("%q: counting every match read %d rows, want at least %d", word, rows, n)
		}
		for _, what := range []string{"first page with facets", "a page deep in the results"} {
			var sql string
			var args []any
			if what == "first page with facets" {
				sql, args = dialect.SearchSQL(&q, match{terms}, 0, nil, limit+1, true)
			} else {
				sql, args = dialect.SearchSQL(&q, match{terms}, deep.Window, deep, limit+1, false)
			}
			buffers, rows := explainSearch(t, schema, sql, args)
			t.Logf("%q in %d documents, %s: %d rows of search_docs, resources and memberships, %d buffers", word, n, what, rows, buffers)
			// a word in every document: each document of the sample and its
			// work's row, the page's hits again, and with the facets the
			// memberships and collections of the sample's works; a word in one
			// document in two reads two documents per match of its sample
			if word == "large" && rows > 5*(c+1) {
				t.Errorf("%q, %s: %d rows read; want about one window (%d)", word, what, rows, c)
			}
			if word == "small" {
				costs[what] = cost{buffers, rows}
			} else if s := costs[what]; rows > s.rows+int64(limit) || buffers > s.buffers+s.buffers/4+10 {
				t.Errorf("%s: %d rows and %d buffers for a word in %d documents, %d rows and %d buffers for one in %d",
					what, s.rows, s.buffers, small, rows, buffers, large)
			}
		}
	}
}

// TestHeadlineQuery: a hit's headline marks the words of the query's
// terms, any of them, each once, a prefix term's last word as a prefix
// (and its stem as one), quotes escaped: never the terms' phrases, whose
// covers ts_headline would look for over the whole document; stemmed, so
// that whale marks whales.
func TestHeadlineQuery(t *testing.T) {
	terms, err := shelfmark.ParseSearchText(`"Whales of the north" ice "whales of" ice-floe voy* running* "o'neil" -north -south`)
	if err != nil {
		t.Fatal(err)
	}
	words, prefixes := headlineWords(terms)
	if want := `'whales' | 'of' | 'the' | 'north' | 'ice' | 'floe' | 'o' | 'neil'`; words != want {
		t.Fatalf("headline words %q, want %q", words, want)
	}
	if want := []string{`'voy':*`, `'running':*`, `'run':*`}; !slices.Equal(prefixes, want) {
		t.Fatalf("headline prefixes %q, want %q", prefixes, want)
	}
	db, _ := openTest(t, Options{})
	for _, c := range []struct{ q, text, want string }{
		{`"whale of the north"`, "Notes on whales of the north sea", "<b>whales</b> <b>of</b> <b>the</b> <b>north</b>"},
		{`voy*`, "Three voyages south", "<b>voyages</b>"},
		{`running*`, "He runs on", "<b>runs</b>"},
	} {
		terms, err := shelfmark.ParseSearchText(c.q)
		if err != nil {
			t.Fatal(err)
		}
		s := sqlstore.NewStmt(arg)
		expr := headlineExpr(s, terms)
		doc := s.Arg(c.text)
		var text string
		view(t, db, func(tx shelfmark.ReadTx) error {
			return tx.(*readTx).r.queryRow(context.Background(), `SELECT ts_headline(`+searchConfigs[0]+`, `+doc+`::text, `+expr+`)`, s.Args, &text)
		})
		if !strings.Contains(text, c.want) {
			t.Fatalf("%s: headline %q", c.q, text)
		}
	}
}

// TestSearchConfigs: a document's configuration (shelfmark_config,
// migration 0027_stem_languages.sql) is shelfmark for English and any
// language without a stemmer, and shelfmark_<language> for each of
// shelfmark.SearchLanguages, whose dictionary stems the language's words;
// a query is made in all of them (searchConfigs).
func TestSearchConfigs(t *testing.T) {
	db, _ := openTest(t, Options{})
	if len(searchConfigs) != len(shelfmark.SearchLanguages())+1 {
		t.Fatalf("searchConfigs %q", searchConfigs)
	}
	for i, lang := range append([]string{"", "latin"}, shelfmark.SearchLanguages()...) {
		want := `'shelfmark'::regconfig`
		if i >= 2 {
			want = searchConfigs[i-1]
		}
		var got string
		view(t, db, func(tx shelfmark.ReadTx) error {
			return tx.(*readTx).r.queryRow(context.Background(), `SELECT '''' || shelfmark_config($1)::text || '''::regconfig'`, []any{lang}, &got)
		})
		if got != want {
			t.Errorf("shelfmark_config(%q) = %s, want %s", lang, got, want)
		}
	}
	for _, c := range []struct{ lang, text, want string }{
		{"french", "les chevaux", "'cheval':2 'le':1"},
		{"german", "Häuser", "'haus':1"},
		{"spanish", "ciudades", "'ciudad':1"},
		{"", "harbours", "'harbour':1"},
	} {
		var got string
		view(t, db, func(tx shelfmark.ReadTx) error {
			return tx.(*readTx).r.queryRow(context.Background(), `SELECT to_tsvector(shelfmark_config($1), $2)::text`, []any{c.lang, c.text}, &got)
		})
		if got != c.want {
			t.Errorf("%s %q: %s, want %s", c.lang, c.text, got, c.want)
		}
	}
}

// TestPutSearchDocsPlan: the statement that gives the pages of the
// records written their record's language finds them through an index on
// work (search_docs_work_key or search_docs_work_kind), one look-up a
// record, not by reading every document (seq scans off, as on a table
// too large for them).
func TestPutSearchDocsPlan(t *testing.T) {
	ctx := context.Background()
	db, _ := openTest(t, Options{})
	tx := noSeqScanTx(t, db)
	rows := sqlstore.Rows{Cols: sqlstore.SearchDocCols, N: 2, Row: func(i int, v []any) {
		for j := range v {
			v[j] = nil
		}
		v[0], v[1], v[2], v[3], v[4], v[5], v[6] = int64(i+1), int64(1), "work", "", "t", "b", int64(1)
		v[7], v[8], v[9], v[13] = "", "", "", "french"
	}}
	from, args, err := fromRows(rows, 1)
	if err != nil {
		t.Fatal(err)
	}
	r, err := tx.Query(ctx, `EXPLAIN `+putSearchDocs[len(putSearchDocs)-1](from), args...)
	if err != nil {
		t.Fatal(err)
	}
	var plan []string
	for r.Next() {
		var line string
		if err := r.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	r.Close()
	all := strings.Join(plan, "\n")
	if !strings.Contains(all, "Index Cond: (work = v.key)") || strings.Contains(all, "Seq Scan on search_docs") {
		t.Errorf("the plan does not look the pages up by work:\n%s", all)
	}
}
