package sqlstore

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"
)

// sharedMigrations holds the migrations both dialects run as written.
//
//go:embed migrations/*.sql
var sharedMigrations embed.FS

// Migration is one schema change: an embedded file NNNN_name.sql, applied
// once per database in its own transaction.
type Migration struct {
	// Version is the file's number, NNNN; versions are applied in order.
	Version int64
	// Name is the file's name, NNNN_name.sql. SQLite records it in
	// schema_migrations; PostgreSQL records Version and Name.
	Name string
	// SQL is the file's text, possibly several statements.
	SQL string
}

// Migrations returns a backend's migrations by version: the shared ones
// (internal/sqlstore/migrations) merged with own's migrations/*.sql, where a
// backend file of the same number replaces the shared one. It reads only
// embedded files.
func Migrations(own fs.FS) ([]Migration, error) {
	byVersion := map[int64]Migration{}
	// the backend's own are read last, so that they replace shared ones
	for _, src := range []fs.FS{sharedMigrations, own} {
		names, err := fs.Glob(src, "migrations/*.sql")
		if err != nil {
			return nil, err
		}
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
			b, err := fs.ReadFile(src, path)
			if err != nil {
				return nil, err
			}
			byVersion[v] = Migration{Version: v, Name: name, SQL: string(b)}
		}
	}
	ms := make([]Migration, 0, len(byVersion))
	for _, m := range byVersion {
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Version < ms[j].Version })
	return ms, nil
}

// Migrate applies, in version order, each of ms that applied does not
// report as recorded, calling apply (which runs it and records it in one
// transaction) for each. It stops at the first error. It costs one call of
// applied per migration and one apply per pending one.
func Migrate(ctx context.Context, ms []Migration, applied func(context.Context, Migration) (bool, error),
	apply func(context.Context, Migration) error) error {
	for _, m := range ms {
		done, err := applied(ctx, m)
		if err != nil {
			return err
		}
		if done {
			continue
		}
		if err := apply(ctx, m); err != nil {
			return err
		}
	}
	return nil
}
