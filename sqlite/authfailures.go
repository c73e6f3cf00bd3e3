package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/shelfmark/shelfmark"
)

var _ shelfmark.AuthFailures = (*DB)(nil)

// limiterWrite runs statements of the brute-force limiter in a write
// transaction of their own.
func (db *DB) limiterWrite(ctx context.Context, fn func(t *tx) error) error {
	return db.Update(ctx, func(wtx shelfmark.WriteTx) error { return fn(wtx.(*tx)) })
}

// AddAuthFailure implements shelfmark.AuthFailures.
func (db *DB) AddAuthFailure(ctx context.Context, key string, now time.Time, forget time.Duration) (int, error) {
	var n int64
	err := db.limiterWrite(ctx, func(t *tx) error {
		return t.queryRow(ctx, `INSERT INTO auth_failures (key, failures, last_failure) VALUES (?1, 1, ?2)
		ON CONFLICT (key) DO UPDATE SET
		failures = CASE WHEN auth_failures.last_failure < ?3 THEN 1 ELSE auth_failures.failures + 1 END,
		last_failure = max(auth_failures.last_failure, ?2)
		RETURNING failures`, []any{key, now.UnixMicro(), now.Add(-forget).UnixMicro()}, &n)
	})
	if err != nil {
		return 0, fmt.Errorf("record a failed authentication: %w", err)
	}
	return int(n), nil
}

// BlockAuthKey implements shelfmark.AuthFailures.
func (db *DB) BlockAuthKey(ctx context.Context, key string, until time.Time) error {
	err := db.limiterWrite(ctx, func(t *tx) error {
		_, err := t.exec(ctx, `UPDATE auth_failures SET blocked_until = max(blocked_until, ?2) WHERE key = ?1`, key, until.UnixMicro())
		return err
	})
	if err != nil {
		return fmt.Errorf("block a key: %w", err)
	}
	return nil
}

// BlockedAuthKeys implements shelfmark.AuthFailures.
func (db *DB) BlockedAuthKeys(ctx context.Context, now time.Time, limit int) ([]shelfmark.AuthFailure, error) {
	var out []shelfmark.AuthFailure
	err := db.View(ctx, func(rtx shelfmark.ReadTx) error {
		return rtx.(*tx).query(ctx, `SELECT key, failures, last_failure, blocked_until FROM auth_failures
		WHERE blocked_until > ? ORDER BY blocked_until DESC LIMIT ?`, []any{now.UnixMicro(), limit}, func(rows *sql.Rows) error {
			var f shelfmark.AuthFailure
			var n, last, until int64
			if err := rows.Scan(&f.Key, &n, &last, &until); err != nil {
				return err
			}
			f.Count, f.Last, f.Until = int(n), time.UnixMicro(last).UTC(), time.UnixMicro(until).UTC()
			out = append(out, f)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read the blocked keys: %w", err)
	}
	return out, nil
}

// ClearAuthFailures implements shelfmark.AuthFailures.
func (db *DB) ClearAuthFailures(ctx context.Context, key string, now time.Time) error {
	err := db.limiterWrite(ctx, func(t *tx) error {
		_, err := t.exec(ctx, `DELETE FROM auth_failures WHERE key = ? AND blocked_until <= ?`, key, now.UnixMicro())
		return err
	})
	if err != nil {
		return fmt.Errorf("forget failed authentications: %w", err)
	}
	return nil
}

// PruneAuthFailures implements shelfmark.AuthFailures.
func (db *DB) PruneAuthFailures(ctx context.Context, before, now time.Time) (int, error) {
	var n int64
	err := db.limiterWrite(ctx, func(t *tx) error {
		var err error
		n, err = t.exec(ctx, `DELETE FROM auth_failures WHERE last_failure < ? AND blocked_until <= ?`, before.UnixMicro(), now.UnixMicro())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune failed authentications: %w", err)
	}
	return int(n), nil
}
