package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestOAIPlans: the statements of the OAI-PMH view and of the change feed
// read ranges of the indexes meant for them and never scan a table, so a
// page costs the same at any depth (rule R11). The conformance suite shows
// the statements and rows do not change with depth; this shows what SQLite
// does to find them.
func TestOAIPlans(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plans.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	l := shelfmark.OAIList{Prefix: "oai_dc", After: 100, Max: 1000, Limit: 10}
	for _, c := range []struct {
		name  string
		query string
		args  []any
		want  []string // in the plan, in this order
	}{
		{"records", dialect.OAIListPayload, []any{"oai_dc", 100, 1000, 10},
			[]string{"SEARCH oai_records USING INDEX oai_records_prefix (prefix=? AND seq>? AND seq<?)"}},
		{"identifiers", dialect.OAIList, []any{"oai_dc", 100, 1000, 10},
			[]string{"SEARCH oai_records USING INDEX oai_records_prefix (prefix=? AND seq>? AND seq<?)"}},
		{"records of a set", oaiSetListSQL(true, 1), setSeqsArgs([]int64{1}, l),
			[]string{"SEARCH oai_records USING INTEGER PRIMARY KEY (rowid=?)",
				"SEARCH oai_set_records USING PRIMARY KEY (collection=? AND prefix=? AND seq>? AND seq<?)"}},
		{"records of four sets", oaiSetListSQL(true, 4), setSeqsArgs([]int64{1, 2, 3, 4}, l),
			[]string{"SEARCH oai_records USING INTEGER PRIMARY KEY (rowid=?)",
				"SEARCH oai_set_records USING PRIMARY KEY (collection=? AND prefix=? AND seq>? AND seq<?)"}},
		{"seq range", dialect.OAISeqRange, []any{"oai_dc", 5, 9},
			[]string{"SEARCH oai_records USING COVERING INDEX oai_records_datestamp (prefix=? AND datestamp>?)",
				"SEARCH oai_records USING COVERING INDEX oai_records_datestamp (prefix=? AND datestamp<?)"}},
		{"set tree", oaiSetTreeSQL, []any{"a", "a:", "a;"},
			[]string{"(spec=?)", "(spec>? AND spec<?)"}},
		{"delete set entries", deleteSetEntriesSQL, []any{"1,2", "oai_dc", 7},
			[]string{"SEARCH oai_set_records USING PRIMARY KEY (collection=? AND prefix=? AND seq=?)"}},
		{"changes", dialect.Changes, []any{5, 10},
			[]string{"SEARCH resources USING INDEX resources_seq (seq>?)"}},
		{"embargoes", `SELECT key FROM resources WHERE embargo IS NOT NULL AND embargo > ? AND embargo <= ? ORDER BY key`, []any{1, 2},
			[]string{"SEARCH resources USING COVERING INDEX resources_embargo (embargo>? AND embargo<?)"}},
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
			for _, table := range []string{"oai_records", "oai_set_records", "oai_sets", "resources"} {
				if d == "SCAN "+table || strings.HasPrefix(d, "SCAN "+table+" ") {
					t.Errorf("%s scans %s:\n%s", c.name, table, all)
				}
			}
		}
	}
}
