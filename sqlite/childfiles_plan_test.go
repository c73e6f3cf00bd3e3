package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestChildFilesPlan: the files of a page of file sets are found through
// the index on (parent, position), one bounded range per file set (and
// one look-up for its bound, made only when the index alone, covering,
// finds the parent holds as many entries as the limit), never by
// scanning the resources, and come
// out as they are found, with no sort holding them back (sqlstore orders
// them).
func TestChildFilesPlan(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plans.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.read.QueryContext(ctx, "EXPLAIN QUERY PLAN "+childFilesSQL, "[1,2,3]", 32)
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
	p := strings.Join(plan, "\n")
	t.Logf("plan:\n%s", p)
	if !strings.Contains(p, "SEARCH r USING INDEX resources_children (parent=? AND position<?)") ||
		!strings.Contains(p, "SEARCH c USING INDEX resources_children (parent=?)") ||
		!strings.Contains(p, "SEARCH c USING COVERING INDEX resources_children (parent=?)") || strings.Contains(p, "SCAN c") || strings.Contains(p, "SCAN r") ||
		strings.Contains(p, "TEMP B-TREE FOR ORDER BY") {
		t.Errorf("child files plan:\n%s", p)
	}
}
