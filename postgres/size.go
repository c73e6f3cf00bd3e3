package postgres

import (
	"context"
	"fmt"
)

// DatabaseBytes returns the size of the database on disk, as
// pg_database_size reports it (the web interface's dashboard shows it).
func (db *DB) DatabaseBytes(ctx context.Context) (int64, error) {
	var n int64
	if err := db.pool.QueryRow(ctx, "SELECT pg_database_size(current_database())").Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: database size: %w", err)
	}
	return n, nil
}
