package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/sqlite"
	"github.com/shelfmark/shelfmark/storagetest"
)

// TestEffectiveBackfill: migration 0013 gives a store made before effective
// access the sources and effective access the engine would have stored.
func TestEffectiveBackfill(t *testing.T) {
	migration, err := os.ReadFile("migrations/0013_effective_access.sql")
	if err != nil {
		t.Fatal(err)
	}
	paths := map[shelfmark.Storage]string{}
	open := func(t *testing.T, tracer shelfmark.StatementTracer) shelfmark.Storage {
		path := filepath.Join(t.TempDir(), "shelfmark.db")
		db, err := sqlite.Open(context.Background(), path, sqlite.Options{Tracer: tracer})
		if err != nil {
			t.Fatal(err)
		}
		paths[db] = path
		return db
	}
	exec := func(t *testing.T, store shelfmark.Storage, stmt string) {
		t.Helper()
		// a connection of its own to the same file, as the migration's
		conn, err := sql.Open("sqlite3", paths[store])
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Exec(stmt); err != nil {
			t.Fatalf("%v\n%s", err, stmt)
		}
	}
	storagetest.RunEffectiveBackfill(t, open, exec, string(migration))
}
