package postgres

import (
	"context"
	"os"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/storagetest"
)

// TestEffectiveBackfill: migration 0013 gives a store made before effective
// access the sources and effective access the engine would have stored.
func TestEffectiveBackfill(t *testing.T) {
	migration, err := os.ReadFile("migrations/0013_effective_access.sql")
	if err != nil {
		t.Fatal(err)
	}
	open := func(t *testing.T, tracer shelfmark.StatementTracer) shelfmark.Storage {
		dsn, _ := testSchema(t)
		db, err := Open(context.Background(), dsn, Options{Tracer: tracer})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	exec := func(t *testing.T, store shelfmark.Storage, stmt string) {
		t.Helper()
		if _, err := store.(*DB).pool.Exec(context.Background(), stmt); err != nil {
			t.Fatalf("%v\n%s", err, stmt)
		}
	}
	storagetest.RunEffectiveBackfill(t, open, exec, string(migration))
}
