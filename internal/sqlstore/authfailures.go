package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/shelfmark/shelfmark"
)

// AuthFailureSQL is a dialect's statements of AuthFailures. Their
// arguments are those named, in that order.
type AuthFailureSQL struct {
	// AddAuthFailure counts a failure, restarting the count after a
	// quiet time, and returns the count: key, now, now - forget.
	AddAuthFailure    string
	BlockAuthKey      string // key, until
	BlockedAuthKeys   string // now, limit: key, failures, last_failure, blocked_until
	ClearAuthFailures string // key, now
	PruneAuthFailures string // before, now
}

// AuthFailures implements shelfmark.AuthFailures once for both backends,
// each statement run by the backend's own rule (a write transaction of its
// own in SQLite, a pooled connection in PostgreSQL). Both DB types embed
// it.
type AuthFailures struct {
	d    *Dialect
	with func(ctx context.Context, write bool, fn func(Execer) error) error
}

// NewAuthFailures returns the AuthFailures that runs d's statements on
// what with passes to fn (write tells whether fn writes).
func NewAuthFailures(d *Dialect, with func(ctx context.Context, write bool, fn func(Execer) error) error) AuthFailures {
	return AuthFailures{d: d, with: with}
}

// AddAuthFailure implements shelfmark.AuthFailures in one statement.
func (a *AuthFailures) AddAuthFailure(ctx context.Context, key string, now time.Time, forget time.Duration) (int, error) {
	var n int64
	err := a.with(ctx, true, func(q Execer) error {
		return Row(ctx, q, a.d.AddAuthFailure, []any{key, now.UnixMicro(), now.Add(-forget).UnixMicro()}, &n)
	})
	if err != nil {
		return 0, fmt.Errorf("%srecord a failed authentication: %w", a.d.Prefix, err)
	}
	return int(n), nil
}

// BlockAuthKey implements shelfmark.AuthFailures in one statement.
func (a *AuthFailures) BlockAuthKey(ctx context.Context, key string, until time.Time) error {
	err := a.with(ctx, true, func(q Execer) error {
		_, err := q.Exec(ctx, a.d.BlockAuthKey, key, until.UnixMicro())
		return err
	})
	if err != nil {
		return fmt.Errorf("%sblock a key: %w", a.d.Prefix, err)
	}
	return nil
}

// BlockedAuthKeys implements shelfmark.AuthFailures: up to limit keys
// blocked after now, the latest block first.
func (a *AuthFailures) BlockedAuthKeys(ctx context.Context, now time.Time, limit int) ([]shelfmark.AuthFailure, error) {
	var out []shelfmark.AuthFailure
	err := a.with(ctx, false, func(q Execer) (err error) {
		out, err = Collect(ctx, q, a.d.BlockedAuthKeys, []any{now.UnixMicro(), limit}, func(r Scanner) (shelfmark.AuthFailure, error) {
			var f shelfmark.AuthFailure
			var n, last, until int64
			err := r.Scan(&f.Key, &n, &last, &until)
			f.Count, f.Last, f.Until = int(n), FromMicros(last), FromMicros(until)
			return f, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%sread the blocked keys: %w", a.d.Prefix, err)
	}
	return out, nil
}

// ClearAuthFailures implements shelfmark.AuthFailures in one statement.
func (a *AuthFailures) ClearAuthFailures(ctx context.Context, key string, now time.Time) error {
	err := a.with(ctx, true, func(q Execer) error {
		_, err := q.Exec(ctx, a.d.ClearAuthFailures, key, now.UnixMicro())
		return err
	})
	if err != nil {
		return fmt.Errorf("%sforget failed authentications: %w", a.d.Prefix, err)
	}
	return nil
}

// PruneAuthFailures implements shelfmark.AuthFailures in one statement.
func (a *AuthFailures) PruneAuthFailures(ctx context.Context, before, now time.Time) (int, error) {
	var n int64
	err := a.with(ctx, true, func(q Execer) (err error) {
		n, err = q.Exec(ctx, a.d.PruneAuthFailures, before.UnixMicro(), now.UnixMicro())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("%sprune failed authentications: %w", a.d.Prefix, err)
	}
	return int(n), nil
}
