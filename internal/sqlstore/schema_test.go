package sqlstore_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/mattn/go-sqlite3"

	"github.com/shelfmark/shelfmark/postgres"
	"github.com/shelfmark/shelfmark/sqlite"
)

// schema is what TestSchemasAgree compares: each table's columns with
// their types (in the kinds of columnKind), and the names of the indexes
// the migrations create.
type schema struct {
	columns map[string]map[string]string // table → column → kind
	indexes map[string]bool
}

// columnKind maps a declared column type of either backend to the kind
// of value it holds, so that compatible types compare equal.
func columnKind(decl string) string {
	d := strings.ToLower(strings.TrimSpace(decl))
	switch {
	case d == "integer" || d == "int" || d == "bigint" || d == "smallint" || d == "boolean":
		return "integer"
	case d == "text" || strings.HasPrefix(d, "character varying") || d == "":
		return "text"
	case d == "blob" || d == "bytea":
		return "blob"
	case d == "real" || d == "double precision":
		return "real"
	}
	return d
}

// The differences the dialects require, each with its reason. Anything
// else that differs fails the test.
var (
	// sqliteOnlyTables: SQLite's full-text index is an FTS5 table (and its
	// shadow tables) over search_text, which holds the documents' text;
	// PostgreSQL keeps the text and its tsvector in search_docs.
	sqliteOnlyTables = []string{"search_fts", "search_fts_config", "search_fts_content", "search_fts_data", "search_fts_docsize", "search_fts_idx", "search_text"}
	// pgOnlyTables: small blobs are stored in the database only on
	// PostgreSQL (0011_small_blobs.sql).
	pgOnlyTables = []string{"small_blobs"}
	// pgOnlyColumns: the text of search documents, its language and its
	// vector (see sqliteOnlyTables); the version and time PostgreSQL records of each
	// migration, which SQLite records by name alone.
	pgOnlyColumns = []string{"search_docs.body", "search_docs.creator", "search_docs.dates", "search_docs.lang", "search_docs.subject", "search_docs.title", "search_docs.tsv",
		"schema_migrations.applied", "schema_migrations.version"}
	// sqliteOnlyIndexes and pgOnlyIndexes: the index of documents by work
	// is (work) in SQLite, whose rowid is the key, and (work, key) in
	// PostgreSQL; the tsvector's GIN index; SQLite keeps fields in a rowid
	// table, so that a long field stays in its page, keyed by this unique
	// index, where PostgreSQL's primary key is (resource, predicate).
	sqliteOnlyIndexes = []string{"search_docs_work", "fields_key"}
	pgOnlyIndexes     = []string{"search_docs_work_key", "search_docs_tsv"}
)

func sqliteSchema(t *testing.T) schema {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shelfmark.db")
	db, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	conn, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	s := schema{columns: map[string]map[string]string{}, indexes: map[string]bool{}}
	rows, err := conn.QueryContext(ctx, `SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' AND type IN ('table', 'index')`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var typ, name string
		if err := rows.Scan(&typ, &name); err != nil {
			t.Fatal(err)
		}
		if typ == "index" {
			s.indexes[name] = true
		} else {
			tables = append(tables, name)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	for _, table := range tables {
		cols := map[string]string{}
		rows, err := conn.QueryContext(ctx, `SELECT name, type FROM pragma_table_info(?)`, table)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var name, typ string
			if err := rows.Scan(&name, &typ); err != nil {
				t.Fatal(err)
			}
			cols[name] = columnKind(typ)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		s.columns[table] = cols
	}
	return s
}

func postgresSchema(t *testing.T) schema {
	t.Helper()
	dsn := os.Getenv("SHELFMARK_TEST_DATABASE_URL")
	if dsn == "" {
		t.Skip("SHELFMARK_TEST_DATABASE_URL is not set: run scripts/postgres.sh start")
	}
	ctx := context.Background()
	admin, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	name := fmt.Sprintf("schemas_agree_%d_%d", os.Getpid(), rand.IntN(1e6))
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+name); err != nil {
		t.Fatalf("create schema (is PostgreSQL running? scripts/postgres.sh start): %v", err)
	}
	defer admin.Exec(context.Background(), "DROP SCHEMA "+name+" CASCADE")
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	db, err := postgres.Open(ctx, u.String(), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	s := schema{columns: map[string]map[string]string{}, indexes: map[string]bool{}}
	rows, err := admin.Query(ctx, `SELECT c.table_name, c.column_name, c.data_type FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = $1 AND t.table_type = 'BASE TABLE'`, name)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var table, col, typ string
		if err := rows.Scan(&table, &col, &typ); err != nil {
			t.Fatal(err)
		}
		if s.columns[table] == nil {
			s.columns[table] = map[string]string{}
		}
		s.columns[table][col] = columnKind(typ)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// the indexes the migrations name: not those behind a primary key or
	// unique constraint, which SQLite leaves unnamed
	rows, err = admin.Query(ctx, `SELECT i.indexname FROM pg_indexes i WHERE i.schemaname = $1
		AND NOT EXISTS (SELECT 1 FROM pg_constraint k JOIN pg_namespace n ON n.oid = k.connamespace
			WHERE n.nspname = $1 AND k.conname = i.indexname)`, name)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var idx string
		if err := rows.Scan(&idx); err != nil {
			t.Fatal(err)
		}
		s.indexes[idx] = true
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSchemasAgree migrates a fresh database of each kind and compares
// their schemas: the same tables, the same columns with compatible types,
// and the same indexes by name, but for the differences listed above.
func TestSchemasAgree(t *testing.T) {
	sq, pg := sqliteSchema(t), postgresSchema(t)
	for _, table := range sqliteOnlyTables {
		delete(sq.columns, table)
	}
	for _, table := range pgOnlyTables {
		delete(pg.columns, table)
	}
	for _, idx := range sqliteOnlyIndexes {
		delete(sq.indexes, idx)
	}
	for _, idx := range pgOnlyIndexes {
		delete(pg.indexes, idx)
	}
	for _, c := range pgOnlyColumns {
		table, col, _ := strings.Cut(c, ".")
		delete(pg.columns[table], col)
	}
	var diffs []string
	for table, cols := range sq.columns {
		pcols, ok := pg.columns[table]
		if !ok {
			diffs = append(diffs, "table "+table+" only in SQLite")
			continue
		}
		for col, kind := range cols {
			switch pkind, ok := pcols[col]; {
			case !ok:
				diffs = append(diffs, fmt.Sprintf("column %s.%s only in SQLite", table, col))
			case pkind != kind:
				diffs = append(diffs, fmt.Sprintf("column %s.%s is %s in SQLite, %s in PostgreSQL", table, col, kind, pkind))
			}
		}
		for col := range pcols {
			if _, ok := cols[col]; !ok {
				diffs = append(diffs, fmt.Sprintf("column %s.%s only in PostgreSQL", table, col))
			}
		}
	}
	for table := range pg.columns {
		if _, ok := sq.columns[table]; !ok {
			diffs = append(diffs, "table "+table+" only in PostgreSQL")
		}
	}
	for idx := range sq.indexes {
		if !pg.indexes[idx] {
			diffs = append(diffs, "index "+idx+" only in SQLite")
		}
	}
	for idx := range pg.indexes {
		if !sq.indexes[idx] {
			diffs = append(diffs, "index "+idx+" only in PostgreSQL")
		}
	}
	slices.Sort(diffs)
	for _, d := range diffs {
		t.Error(d)
	}
}
