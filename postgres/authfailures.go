package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
)

var _ shelfmark.AuthFailures = (*DB)(nil)

// AddAuthFailure implements shelfmark.AuthFailures in one statement of
// its own (no writer lock: it takes no sequence number).
func (db *DB) AddAuthFailure(ctx context.Context, key string, now time.Time, forget time.Duration) (int, error) {
	var n int64
	err := db.run(db.pool).queryRow(ctx, `INSERT INTO auth_failures (key, failures, last_failure) VALUES ($1, 1, $2)
		ON CONFLICT (key) DO UPDATE SET
		failures = CASE WHEN auth_failures.last_failure < $3 THEN 1 ELSE auth_failures.failures + 1 END,
		last_failure = greatest(auth_failures.last_failure, $2)
		RETURNING failures`, []any{key, micros(now), micros(now.Add(-forget))}, &n)
	if err != nil {
		return 0, fmt.Errorf("postgres: record a failed authentication: %w", err)
	}
	return int(n), nil
}

// BlockAuthKey implements shelfmark.AuthFailures.
func (db *DB) BlockAuthKey(ctx context.Context, key string, until time.Time) error {
	if _, err := db.run(db.pool).exec(ctx, `UPDATE auth_failures SET blocked_until = greatest(blocked_until, $2) WHERE key = $1`, key, micros(until)); err != nil {
		return fmt.Errorf("postgres: block a key: %w", err)
	}
	return nil
}

// BlockedAuthKeys implements shelfmark.AuthFailures.
func (db *DB) BlockedAuthKeys(ctx context.Context, now time.Time, limit int) ([]shelfmark.AuthFailure, error) {
	var out []shelfmark.AuthFailure
	_, err := db.run(db.pool).query(ctx, `SELECT key, failures, last_failure, blocked_until FROM auth_failures
		WHERE blocked_until > $1 ORDER BY blocked_until DESC LIMIT $2`, []any{micros(now), limit}, func(rows pgx.Rows) error {
		var f shelfmark.AuthFailure
		var n, last, until int64
		if err := rows.Scan(&f.Key, &n, &last, &until); err != nil {
			return err
		}
		f.Count, f.Last, f.Until = int(n), fromMicros(last), fromMicros(until)
		out = append(out, f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: read the blocked keys: %w", err)
	}
	return out, nil
}

// ClearAuthFailures implements shelfmark.AuthFailures.
func (db *DB) ClearAuthFailures(ctx context.Context, key string, now time.Time) error {
	if _, err := db.run(db.pool).exec(ctx, `DELETE FROM auth_failures WHERE key = $1 AND blocked_until <= $2`, key, micros(now)); err != nil {
		return fmt.Errorf("postgres: forget failed authentications: %w", err)
	}
	return nil
}

// PruneAuthFailures implements shelfmark.AuthFailures.
func (db *DB) PruneAuthFailures(ctx context.Context, before, now time.Time) (int, error) {
	n, err := db.run(db.pool).exec(ctx, `DELETE FROM auth_failures WHERE last_failure < $1 AND blocked_until <= $2`, micros(before), micros(now))
	if err != nil {
		return 0, fmt.Errorf("postgres: prune failed authentications: %w", err)
	}
	return int(n), nil
}
