package postgres

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// migrationFiles holds PostgreSQL's own migrations; sqlstore.Migrations
// merges them with the shared ones.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrations returns the migrations to apply, by version.
func migrations() ([]sqlstore.Migration, error) { return sqlstore.Migrations(migrationFiles) }

// migrate applies the embedded migrations that schema_migrations does not
// list, each in its own transaction, in the schema first on the connection's
// search_path. It holds a session advisory lock on that schema throughout,
// so processes that open it at the same moment take turns: the first
// applies the migrations, the others find them applied.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := migrations()
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: connect: %w", err)
	}
	defer conn.Release()
	r := db.run(conn)
	if _, err := r.exec(ctx, lockSQL("pg_advisory_lock", migrateLockKey, migrateLockClass)); err != nil {
		return fmt.Errorf("postgres: wait for the migration lock: %w", err)
	}
	defer func() {
		// Unlock even if ctx is done; if that fails, close the connection
		// (which releases the lock) rather than pool it still locked.
		uctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := r.exec(uctx, lockSQL("pg_advisory_unlock", migrateLockKey, migrateLockClass)); err != nil {
			_ = conn.Conn().Close(uctx)
		}
	}()

	if _, err := r.exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
    version bigint PRIMARY KEY,
    name    text   NOT NULL,
    applied bigint NOT NULL -- Unix microseconds
)`); err != nil {
		return fmt.Errorf("postgres: create schema_migrations: %w", err)
	}
	applied := map[int64]bool{}
	if _, err := r.query(ctx, `SELECT version FROM schema_migrations`, nil, func(rows pgx.Rows) error {
		var v int64
		err := rows.Scan(&v)
		applied[v] = true
		return err
	}); err != nil {
		return fmt.Errorf("postgres: read schema_migrations: %w", err)
	}
	return sqlstore.Migrate(ctx, ms,
		func(_ context.Context, m sqlstore.Migration) (bool, error) { return applied[m.Version], nil },
		func(ctx context.Context, m sqlstore.Migration) error { return db.applyMigration(ctx, conn.Conn(), m) })
}

// applyMigration runs m and records its version and name in one
// transaction on conn.
func (db *DB) applyMigration(ctx context.Context, conn *pgx.Conn, m sqlstore.Migration) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: migration %s: begin: %w", m.Name, err)
	}
	defer rollback(tx)
	r := db.run(tx)
	// No arguments: pgx sends the file with the simple protocol, which
	// allows several statements in one string.
	if _, err := r.exec(ctx, m.SQL); err != nil {
		return fmt.Errorf("postgres: migration %s: %w", m.Name, err)
	}
	if _, err := r.exec(ctx, `INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, $3)`,
		m.Version, m.Name, time.Now().UnixMicro()); err != nil {
		return fmt.Errorf("postgres: migration %s: record it: %w", m.Name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: migration %s: commit: %w", m.Name, err)
	}
	return nil
}
