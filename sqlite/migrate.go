package sqlite

import (
	"context"
	"embed"
	"fmt"
	"sort"
)

//go:embed migrations/*.sql
var migrations embed.FS

// migrate applies the embedded migrations not yet recorded.
func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY)`); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	names, err := migrations.ReadDir("migrations")
	if err != nil {
		return fmt.Errorf("read migrations: %w", err)
	}
	sort.Slice(names, func(i, j int) bool { return names[i].Name() < names[j].Name() })
	for _, e := range names {
		var n int
		if err := db.write.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations WHERE name = ?`, e.Name()).Scan(&n); err != nil {
			return fmt.Errorf("check migration %s: %w", e.Name(), err)
		} else if n > 0 {
			continue
		}
		body, err := migrations.ReadFile("migrations/" + e.Name())
		if err != nil {
			return fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		t, err := db.write.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("begin migration %s: %w", e.Name(), err)
		}
		if _, err := t.ExecContext(ctx, string(body)); err != nil {
			t.Rollback()
			return fmt.Errorf("apply migration %s: %w", e.Name(), err)
		}
		if _, err := t.ExecContext(ctx, `INSERT INTO schema_migrations (name) VALUES (?)`, e.Name()); err != nil {
			t.Rollback()
			return fmt.Errorf("record migration %s: %w", e.Name(), err)
		}
		if err := t.Commit(); err != nil {
			return fmt.Errorf("commit migration %s: %w", e.Name(), err)
		}
	}
	return nil
}
