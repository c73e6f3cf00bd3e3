package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// TestMigrationFieldsRowid: a database whose fields table is the WITHOUT
// ROWID one (every migration before 0030) keeps every field, short and
// long, when opening it applies 0030; afterwards fields is a rowid table
// whose unique index still makes a second write of a field replace the
// first.
func TestMigrationFieldsRowid(t *testing.T) {
	ctx := context.Background()
	path, old := migratedBefore(t, 30)
	var ddl string
	if err := old.QueryRowContext(ctx, `SELECT sql FROM sqlite_schema WHERE name = 'fields'`).Scan(&ddl); err != nil || !strings.Contains(ddl, "WITHOUT ROWID") {
		t.Fatalf("fields before 0030: %q, %v", ddl, err)
	}
	long := strings.Repeat("a reference, ", 300) // past a key B-tree's 1,002 bytes a page
	want := map[int64][]shelfmark.Field{
		1: {{Predicate: "http://purl.org/dc/terms/references", Objects: []shelfmark.Term{shelfmark.NewLiteral(long)}},
			{Predicate: "http://purl.org/dc/terms/title", Objects: []shelfmark.Term{shelfmark.NewLiteral("one")}}},
		2: {{Predicate: "http://purl.org/dc/terms/subject", Objects: []shelfmark.Term{shelfmark.NewLiteral("x"), shelfmark.NewIRI("http://example.org/y")}}},
	}
	for key, fields := range want {
		for _, f := range fields {
			if _, err := old.ExecContext(ctx, `INSERT INTO fields (resource, predicate, objects) VALUES (?, ?, ?)`,
				key, f.Predicate, shelfmark.EncodeObjects(f.Objects)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}

	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.write.QueryRowContext(ctx, `SELECT sql FROM sqlite_schema WHERE name = 'fields'`).Scan(&ddl); err != nil || strings.Contains(ddl, "WITHOUT ROWID") {
		t.Fatalf("fields after 0030: %q, %v", ddl, err)
	}
	read := func() map[int64][]shelfmark.Field {
		got := map[int64][]shelfmark.Field{}
		err := db.View(ctx, func(tx shelfmark.ReadTx) error {
			for key := range want {
				fs, err := tx.Fields(ctx, key)
				if err != nil {
					return err
				}
				got[key] = fs
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	got := read()
	for key, fields := range want {
		if !fieldsEqual(got[key], fields) {
			t.Errorf("resource %d after 0030: %v, want %v", key, got[key], fields)
		}
	}
	// a field written again replaces its row
	title := shelfmark.Field{Predicate: "http://purl.org/dc/terms/title", Objects: []shelfmark.Term{shelfmark.NewLiteral("one, edited")}}
	if err := db.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.PutFields(ctx, []int64{1}, []shelfmark.Field{title})
	}); err != nil {
		t.Fatal(err)
	}
	want[1][1] = title
	if got := read(); !fieldsEqual(got[1], want[1]) {
		t.Errorf("resource 1 after an edit: %v, want %v", got[1], want[1])
	}
	var rows int
	if err := db.write.QueryRowContext(ctx, `SELECT count(*) FROM fields`).Scan(&rows); err != nil || rows != 3 {
		t.Errorf("%d rows of fields (%v), want 3", rows, err)
	}
}

// migratedBefore makes a database file with every migration (shared and
// SQLite's own) whose version is below version applied and recorded, as
// an older Shelfmark left it, and returns its path and a pool on it for
// the test to fill and close.
func migratedBefore(t *testing.T, version int64) (string, *sql.DB) {
	t.Helper()
	ctx := context.Background()
	// the FTS5 tokenizer and functions the older migrations name
	if err := registerRank(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "old.db")
	old := openPool("file:"+path+"?_journal_mode=WAL", "")
	if _, err := old.ExecContext(ctx, `CREATE TABLE schema_migrations (name TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	ms, err := sqlstore.Migrations(migrations)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version >= version {
			continue
		}
		if _, err := old.ExecContext(ctx, m.SQL); err != nil {
			t.Fatalf("%s: %v", m.Name, err)
		}
		if _, err := old.ExecContext(ctx, `INSERT INTO schema_migrations (name) VALUES (?)`, m.Name); err != nil {
			t.Fatal(err)
		}
	}
	return path, old
}

// fieldsEqual reports whether a and b hold the same fields in the same
// order.
func fieldsEqual(a, b []shelfmark.Field) bool {
	return slices.EqualFunc(a, b, func(x, y shelfmark.Field) bool {
		return x.Predicate == y.Predicate && slices.Equal(x.Objects, y.Objects)
	})
}
