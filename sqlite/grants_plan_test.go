package sqlite

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestPruneGrantsPlan: the access sweep finds the grants that ended
// through the partial index grants_expires, never by scanning the grants
// (the roles on collections, which never end, are most of them).
func TestPruneGrantsPlan(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "plans.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.read.QueryContext(ctx, "EXPLAIN QUERY PLAN "+dialect.PruneGrants, 1, 256)
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
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	p := strings.Join(plan, "\n")
	t.Logf("plan:\n%s", p)
	if !strings.Contains(p, "INDEX grants_expires (expires") || strings.Contains(p, "SCAN grants") {
		t.Errorf("prune grants plan:\n%s", p)
	}
}
