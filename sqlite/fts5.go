package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// noFTS5 is the message of a binary whose SQLite lacks full-text search.
// mattn/go-sqlite3 compiles FTS5 in only with the sqlite_fts5 build tag; a
// binary built without it would open a store and then fail every search.
const noFTS5 = "this shelfmark was built without SQLite full-text search (FTS5): " +
	"rebuild it with make (or go build -tags sqlite_fts5 ./cmd/shelfmark)"

// requireFTS5 refuses a SQLite library compiled without FTS5, before the
// store is opened or migrated.
func requireFTS5(ctx context.Context, db *sql.DB) error {
	var used int
	if err := db.QueryRowContext(ctx, `SELECT sqlite_compileoption_used('ENABLE_FTS5')`).Scan(&used); err != nil {
		return fmt.Errorf("sqlite: check for FTS5: %w", err)
	}
	if used != 1 {
		return fmt.Errorf("sqlite: %s", noFTS5)
	}
	return nil
}
