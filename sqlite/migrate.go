package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"

	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// migrations holds SQLite's own migrations; sqlstore.Migrations merges them
// with the shared ones.
//
//go:embed migrations/*.sql
var migrations embed.FS

// migrate applies the migrations (sqlstore.Migrations) whose file names
// schema_migrations does not list, each in its own transaction.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	ms, err := sqlstore.Migrations(migrations)
	if err != nil {
		return fmt.Errorf("read migrations: %w", err)
	}
	return sqlstore.Migrate(ctx, ms, db.migrated, db.applyMigration)
}

// migrated reports whether schema_migrations lists m's file name.
func (db *DB) migrated(ctx context.Context, m sqlstore.Migration) (bool, error) {
	var n int
	if err := db.write.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE name = ?`, m.Name).Scan(&n); err != nil {
		return false, fmt.Errorf("check migration %s: %w", m.Name, err)
	}
	return n > 0, nil
}

// applyMigration runs m and records its file name in one transaction.
func (db *DB) applyMigration(ctx context.Context, m sqlstore.Migration) error {
	t, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin migration %s: %w", m.Name, err)
	}
	if err := applyIn(ctx, t, m); err != nil {
		t.Rollback()
		return err
	}
	if err := t.Commit(); err != nil {
		return fmt.Errorf("commit migration %s: %w", m.Name, err)
	}
	return nil
}

func applyIn(ctx context.Context, t *sql.Tx, m sqlstore.Migration) error {
	if _, err := t.ExecContext(ctx, m.SQL); err != nil {
		return fmt.Errorf("apply migration %s: %w", m.Name, err)
	}
	if _, err := t.ExecContext(ctx, `INSERT INTO schema_migrations (name) VALUES (?)`, m.Name); err != nil {
		return fmt.Errorf("record migration %s: %w", m.Name, err)
	}
	return nil
}
