package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migration is one embedded SQL file, NNNN_name.sql.
type migration struct {
	version int64
	name    string
	sql     string
}

// migrations returns the embedded migrations by version.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	seen := map[int64]string{}
	for _, path := range names {
		name := strings.TrimPrefix(path, "migrations/")
		digits, _, ok := strings.Cut(name, "_")
		v, err := strconv.ParseInt(digits, 10, 64)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: name must start with a version number and an underscore", name)
		}
		if other, dup := seen[v]; dup {
			return nil, fmt.Errorf("migrations %s and %s have the same version", other, name)
		}
		seen[v] = name
		b, err := migrationFiles.ReadFile(path)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: name, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

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
	for _, m := range ms {
		if applied[m.version] {
			continue
		}
		if err := db.applyMigration(ctx, conn.Conn(), m); err != nil {
			return err
		}
	}
	return nil
}

func (db *DB) applyMigration(ctx context.Context, conn *pgx.Conn, m migration) error {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("postgres: migration %s: begin: %w", m.name, err)
	}
	defer rollback(tx)
	r := db.run(tx)
	// No arguments: pgx sends the file with the simple protocol, which
	// allows several statements in one string.
	if _, err := r.exec(ctx, m.sql); err != nil {
		return fmt.Errorf("postgres: migration %s: %w", m.name, err)
	}
	if _, err := r.exec(ctx, `INSERT INTO schema_migrations (version, name, applied) VALUES ($1, $2, $3)`,
		m.version, m.name, time.Now().UnixMicro()); err != nil {
		return fmt.Errorf("postgres: migration %s: record it: %w", m.name, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("postgres: migration %s: commit: %w", m.name, err)
	}
	return nil
}
