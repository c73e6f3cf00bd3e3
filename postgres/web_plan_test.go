package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// TestWebPlans: the reads of the web index walk the indexes meant for
// them in their order, never sorting and never scanning a table (with
// sequential scans and sorts priced out, as they would be on a large
// index when only the first rows are read): the
// top queries read the first n entries of a partial inbound index, a
// capture scan walks the SURT index and each URL's captures in order.
func TestWebPlans(t *testing.T) {
	ctx := context.Background()
	db, _ := openTest(t, Options{})
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	// an empty table's statistics favour sorting a few rows and reading
	// whole tables once; price those plans out, to show that the indexes
	// give the rows in order, each URL's captures found by its id
	if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off; SET LOCAL enable_sort = off; SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_material = off; SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off`); err != nil {
		t.Fatal(err)
	}
	to := "b"
	for _, c := range []struct {
		name  string
		query string
		args  []any
		want  []string // in the plan, in this order
	}{
		{"top urls", dialect.WebTopURLs, []any{"a.example", 10}, []string{"Limit", "web_domains_name_key", "web_url_counts_top", "web_urls_pkey"}},
		{"top domains", dialect.WebTopDomains, []any{10}, []string{"Limit", "web_domains_top"}},
		{"log at", sqlstore.WebLinkLogAtSQL(dialect.Arg), []any{int64(1), int64(0), 10}, []string{"Limit", "web_link_log_pkey"}},
		{"take the log", sqlstore.TakeWebLinkLogSQL(dialect.Arg), []any{int64(1), int64(0), int64(5), int64(0)}, []string{"Delete on web_link_log", "web_link_log_pkey"}},
		{"inbound", dialect.WebInbound, []any{int64(1), int64(0), 10},
			// then each page's URL and count by primary key, in either order
			[]string{"Limit", "web_links_pkey", "_pkey", "_pkey"}},
		{"url view", dialect.WebURLView, []any{"a"},
			[]string{"web_urls_surt_key", "web_url_counts_pkey", "web_domains_pkey", "web_captures_pkey"}},
		{"captures of a url", dialect.WebURLCaptures, []any{int64(1), int64(5), int64(3), 10}, []string{"Limit", "web_captures_url"}},
		{"captures of a url, descending", dialect.WebURLCapturesDesc, []any{int64(1), int64(5), int64(3), 10},
			[]string{"Limit", "Index Scan Backward using web_captures_url"}},
		{"scan the rest of a url", capturesRestOfURLSQL, []any{"a", int64(0), int64(9), int64(5), int64(1), 10},
			[]string{"Limit", "web_captures_url", "web_urls_pkey"}},
		{"scan from", dialect.CapturesFrom, []any{"a", to, int64(0), int64(9), 10},
			[]string{"Limit", "Incremental Sort", "web_urls_surt_key", "web_captures_url", "url = u.id"}},
		{"scan from, open", dialect.CapturesFromOpen, []any{"a", int64(0), int64(9), 10},
			[]string{"Limit", "Incremental Sort", "web_urls_surt_key", "web_captures_url", "url = u.id"}},
		{"scan after", dialect.CapturesAfter, []any{"a", to, int64(0), int64(9), 10},
			[]string{"Limit", "Incremental Sort", "web_urls_surt_key", "web_captures_url", "url = u.id"}},
		{"scan after, open", dialect.CapturesAfterOpen, []any{"a", int64(0), int64(9), 10},
			[]string{"Limit", "Incremental Sort", "web_urls_surt_key", "web_captures_url", "url = u.id"}},
	} {
		rows, err := tx.Query(ctx, `EXPLAIN `+c.query, append([]any{pgx.QueryExecModeExec}, c.args...)...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, line)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		all := strings.Join(plan, "\n")
		rest := all
		for _, w := range c.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%s: the plan lacks %q:\n%s", c.name, w, all)
				break
			}
			rest = rest[i+len(w):]
		}
		for _, line := range plan {
			// an incremental sort of each URL's captures is bounded by
			// the captures of one URL
			l := strings.TrimLeft(strings.TrimSpace(line), "-> ")
			if strings.HasPrefix(l, "Seq Scan") || strings.HasPrefix(l, "Sort  (") {
				t.Errorf("%s: the plan scans a table or sorts:\n%s", c.name, all)
			}
		}
		if strings.Contains(all, "Incremental Sort") && !strings.Contains(all, "Presorted Key: u.surt") {
			t.Errorf("%s: the plan sorts more than a URL's captures:\n%s", c.name, all)
		}
		t.Logf("%s:\n%s", c.name, all)
	}
}

// noSeqScanTx is a transaction of db's in which sequential scans are
// priced out (as they are on tables too large for them), for the plan
// tests; it is rolled back and its connection released when t ends.
func noSeqScanTx(t *testing.T, db *DB) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		conn.Release()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		tx.Rollback(ctx)
		conn.Release()
	})
	if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	return tx
}
