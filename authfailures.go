package shelfmark

import (
	"context"
	"time"
)

// AuthFailure is what the database holds of one key's failed
// authentications (a key names a client address or a user name).
type AuthFailure struct {
	Key string
	// Count is the number of failures since the key was last forgotten.
	Count int
	// Last is the time of the last failure.
	Last time.Time
	// Until is the time before which the key may not try again; the zero
	// time when it need not wait.
	Until time.Time
}

// AuthFailures keeps the failed authentications of the brute-force
// limiter in the database, so that the servers sharing one database share
// one limit: a client that fails on one server waits on all of them.
// Servers keep the failures in memory too and write each one through;
// they read the keys that must wait every few seconds, so an
// authentication with no failure on record costs no query. The backends'
// DBs implement it, outside the engine's write transactions (no sequence
// number, no writer lock on PostgreSQL).
type AuthFailures interface {
	// AddAuthFailure counts a failure of key at now and returns the
	// key's count; a key whose last failure is older than now-forget
	// starts again at 1.
	AddAuthFailure(ctx context.Context, key string, now time.Time, forget time.Duration) (int, error)
	// BlockAuthKey makes key wait until the given time; a later time
	// already recorded stays.
	BlockAuthKey(ctx context.Context, key string, until time.Time) error
	// BlockedAuthKeys returns at most limit keys that must still wait at
	// now, those that wait longest first.
	BlockedAuthKeys(ctx context.Context, now time.Time, limit int) ([]AuthFailure, error)
	// ClearAuthFailures forgets the failures of key, and of no other
	// key, unless it must still wait at now. The limiter calls it for the
	// key of a principal that authenticated (a user name), never for a
	// client address's: one success from an address does not forgive the
	// address's other failures.
	ClearAuthFailures(ctx context.Context, key string, now time.Time) error
	// PruneAuthFailures forgets the keys whose last failure is older than
	// before and that need not wait at now, and returns how many it
	// forgot.
	PruneAuthFailures(ctx context.Context, before, now time.Time) (int, error)
}
