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
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "plans.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p := strings.Join(explain(t, db, dialect.PruneGrants, []any{1, 256}), "\n")
	t.Logf("plan:\n%s", p)
	if !strings.Contains(p, "INDEX grants_expires (expires") || strings.Contains(p, "SCAN grants") {
		t.Errorf("prune grants plan:\n%s", p)
	}
}
