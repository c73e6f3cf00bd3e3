package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestWebPlans: the statements of the web index read ranges of the indexes
// meant for them and never scan a table: the top queries read n entries
// of a partial inbound index, the bulk writes look each row up by key, and
// a capture scan walks the SURT index and each URL's captures in order,
// without sorting.
func TestWebPlans(t *testing.T) {
	ctx := context.Background()
	// the bulk writes' statements are built at run time: take them from
	// the tracer as the writes run
	var sent []string
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plans.db"), Options{Tracer: func(q string, _ int64) { sent = append(sent, q) }})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Update(ctx, func(tx shelfmark.WriteTx) error {
		if err := tx.AddWebCounts(ctx, map[int64]int64{1: 1}, map[int64]int64{1: 1}, map[int64]int64{1: 1}); err != nil {
			return err
		}
		if err := tx.SetWebCurrent(ctx, map[int64]int64{1: 1}); err != nil {
			return err
		}
		if err := tx.LogWebLinks(ctx, []shelfmark.WebLinkChange{{WebLink: shelfmark.WebLink{Dst: 1, Src: 2}, Delta: 1}}); err != nil {
			return err
		}
		if _, _, err := tx.WebLinkLogAt(ctx, shelfmark.WebLink{Dst: 1}, 10); err != nil {
			return err
		}
		if _, err := tx.TakeWebLinkLog(ctx, shelfmark.WebLink{Dst: 1}, shelfmark.WebLink{Dst: 5}); err != nil {
			return err
		}
		if err := tx.AddWebInbound(ctx, map[int64]int64{1: 1}); err != nil {
			return err
		}
		return tx.DeleteWebLinks(ctx, []shelfmark.WebLink{{Dst: 1, Src: 2}})
	}); err != nil {
		t.Fatal(err)
	}
	statement := func(prefix string) string {
		for _, q := range sent {
			if strings.HasPrefix(q, prefix) {
				return q
			}
		}
		t.Fatalf("no statement %s… among %q", prefix, sent)
		return ""
	}
	pairs := `[[1,2],[3,4]]`
	for _, c := range []struct {
		name  string
		query string
		args  []any
		want  []string // in the plan, in this order
	}{
		{"top urls", dialect.WebTopURLs, []any{"a.example", 10},
			[]string{"SEARCH n USING COVERING INDEX web_url_counts_top (domain=? AND inbound>?)", "SCALAR SUBQUERY", "SEARCH web_domains USING COVERING INDEX sqlite_autoindex_web_domains_1 (name=?)", "SEARCH u USING INTEGER PRIMARY KEY (rowid=?)"}},
		{"top domains", dialect.WebTopDomains, []any{10},
			[]string{"SEARCH web_domains USING INDEX web_domains_top (inbound>?)"}},
		{"inbound", dialect.WebInbound, []any{1, 0, 10},
			[]string{"SEARCH l USING PRIMARY KEY (dst=? AND src>?)", "SEARCH u USING INTEGER PRIMARY KEY (rowid=?)", "SEARCH n USING INTEGER PRIMARY KEY (rowid=?)"}},
		{"url view", dialect.WebURLView, []any{"a"},
			[]string{"SEARCH u USING INDEX sqlite_autoindex_web_urls_1 (surt=?)", "SEARCH n USING INTEGER PRIMARY KEY (rowid=?)",
				"SEARCH d USING INTEGER PRIMARY KEY (rowid=?)", "SEARCH c USING INTEGER PRIMARY KEY (rowid=?)"}},
		{"urls by surt", webURLsBySURTSQL, []any{`["a"]`},
			[]string{"SEARCH u USING INDEX sqlite_autoindex_web_urls_1 (surt=?)", "SEARCH n USING INTEGER PRIMARY KEY (rowid=?)"}},
		{"urls by id", webURLRowsSQL, []any{`[1]`},
			[]string{"SEARCH u USING INTEGER PRIMARY KEY (rowid=?)", "SEARCH n USING INTEGER PRIMARY KEY (rowid=?)"}},
		{"add counts", statement("UPDATE web_url_counts"), []any{pairs},
			[]string{"SCAN json_each", "SEARCH web_url_counts USING INTEGER PRIMARY KEY (rowid=?)"}},
		{"add domain counts", statement("UPDATE web_domains"), []any{`[[1,2,3]]`},
			[]string{"SCAN json_each", "SEARCH web_domains USING INTEGER PRIMARY KEY (rowid=?)"}},
		{"set current", statement("UPDATE web_urls"), []any{pairs},
			[]string{"SCAN json_each", "SEARCH web_urls USING INTEGER PRIMARY KEY (rowid=?)"}},
		{"delete links", statement("DELETE FROM web_links"), []any{pairs},
			[]string{"SEARCH web_links USING PRIMARY KEY (dst=? AND src=?)"}},
		{"log links", statement("INSERT INTO web_link_log"), []any{`[[1,2,1]]`},
			[]string{"SCAN json_each"}},
		{"log at", statement("SELECT dst, src FROM web_link_log"), []any{1, 0, 10},
			[]string{"SEARCH web_link_log USING PRIMARY KEY ((dst,src)>(?,?))"}},
		{"take the log", statement("DELETE FROM web_link_log"), []any{1, 0, 5, 0},
			[]string{"SEARCH web_link_log USING PRIMARY KEY ((dst,src)>(?,?) AND (dst,src)<(?,?))"}},
		{"add inbound", statement("UPDATE web_url_counts SET inbound = web_url_counts.inbound + v.delta FROM (SELECT value ->> 0 AS id, value ->> 1 AS delta FROM json_each(?1)) AS v\nWHERE"), []any{pairs},
			[]string{"SCAN json_each", "SEARCH web_url_counts USING INTEGER PRIMARY KEY (rowid=?)"}},
		{"delete captures", deleteCapturesSQL, []any{`[1]`},
			[]string{"SEARCH web_captures USING INTEGER PRIMARY KEY (rowid=?)"}},
		{"captures of a url", dialect.WebURLCaptures, []any{1, 5, 3, 10},
			[]string{"SEARCH u USING INTEGER PRIMARY KEY (rowid=?)", "SEARCH c USING INDEX web_captures_url (url=? AND time"}},
		{"captures of a url, descending", dialect.WebURLCapturesDesc, []any{1, 5, 3, 10},
			[]string{"SEARCH u USING INTEGER PRIMARY KEY (rowid=?)", "SEARCH c USING INDEX web_captures_url (url=? AND time"}},
		{"captures of a file", fileCapturesSQL, []any{1, 0, 10},
			[]string{"SEARCH c USING INDEX web_captures_file (file=? AND rowid>?)", "SEARCH u USING INTEGER PRIMARY KEY (rowid=?)"}},
		{"scan the rest of a url", capturesRestOfURLSQL, []any{"a", 0, 9, 5, 1, 10},
			[]string{"SEARCH u USING INTEGER PRIMARY KEY (rowid=?)", "SEARCH web_urls USING COVERING INDEX sqlite_autoindex_web_urls_1 (surt=?)", "SEARCH c USING INDEX web_captures_url (url=? AND time>? AND time<?)"}},
		{"scan from", dialect.CapturesFrom, []any{"a", "b", 0, 9, 10},
			[]string{"SEARCH u USING INDEX sqlite_autoindex_web_urls_1 (surt>? AND surt<?)", "SEARCH c USING INDEX web_captures_url (url=? AND time>? AND time<?)"}},
		{"scan from, open", dialect.CapturesFromOpen, []any{"a", 0, 9, 10},
			[]string{"SEARCH u USING INDEX sqlite_autoindex_web_urls_1 (surt>?)", "SEARCH c USING INDEX web_captures_url (url=? AND time>? AND time<?)"}},
		{"scan after", dialect.CapturesAfter, []any{"a", "b", 0, 9, 10},
			[]string{"SEARCH u USING INDEX sqlite_autoindex_web_urls_1 (surt>? AND surt<?)", "SEARCH c USING INDEX web_captures_url (url=? AND time>? AND time<?)"}},
		{"scan after, open", dialect.CapturesAfterOpen, []any{"a", 0, 9, 10},
			[]string{"SEARCH u USING INDEX sqlite_autoindex_web_urls_1 (surt>?)", "SEARCH c USING INDEX web_captures_url (url=? AND time>? AND time<?)"}},
	} {
		rows, err := db.read.QueryContext(ctx, "EXPLAIN QUERY PLAN "+c.query, c.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
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
		rest := all
		for _, w := range c.want {
			i := strings.Index(rest, w)
			if i < 0 {
				t.Errorf("%s: the plan lacks %q:\n%s", c.name, w, all)
				break
			}
			rest = rest[i+len(w):]
		}
		for _, d := range plan {
			if strings.Contains(d, "TEMP B-TREE") {
				t.Errorf("%s sorts:\n%s", c.name, all)
			}
			for _, table := range []string{"web_urls", "web_url_counts", "web_domains", "web_captures", "web_links", "web_link_log", "u", "c", "n"} {
				if d == "SCAN "+table || strings.HasPrefix(d, "SCAN "+table+" ") {
					t.Errorf("%s scans %s:\n%s", c.name, table, all)
				}
			}
		}
		t.Logf("%s:\n%s", c.name, all)
	}
}
