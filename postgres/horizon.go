package postgres

import (
	"context"
	"slices"
	"time"

	"github.com/shelfmark/shelfmark"
)

// beginShared starts a write transaction that takes the writer lock in
// shared mode: it runs beside other shared ones, never beside an Update.
var (
	beginShared        = []string{beginReadCommitted, lockSQL("pg_advisory_xact_lock_shared", writerLockKey, writerLockClass)}
	beginSharedRelaxed = slices.Concat(beginShared, []string{beginNoFlushWait})
)

// UpdateParallel implements shelfmark.ParallelStorage: fn runs in a write
// transaction that holds the writer lock in shared mode, so any number of
// them run and commit at once, while an Update (which holds it alone)
// waits for them and they wait for it. Their change numbers are claims
// (see the package documentation); a reader of the change feed sees a
// change once every transaction that took a lower number has ended.
//
// Nothing orders two shared transactions' reads and writes beyond READ
// COMMITTED and the tables' constraints: the caller runs here only writes
// that cannot contradict each other (new rows under keys of their own)
// and runs again under Update whatever fails here.
func (db *DB) UpdateParallel(ctx context.Context, fn func(shelfmark.WriteTx) error) error {
	begin := beginShared
	if db.relaxed {
		begin = beginSharedRelaxed
	}
	return db.write(ctx, begin, fn)
}

var _ shelfmark.ParallelStorage = (*DB)(nil)

// advanceTimeout bounds one advance of the horizon; a failed one is made
// good by the next (the ticker's at the latest).
const advanceTimeout = 5 * time.Second

// advanceSQL raises seq_horizon without waiting for the flush of its
// commit: the horizon is a cache of what the claims say, and a crash that
// loses it only makes readers wait for the next advance.
const advanceSQL = "SELECT set_config('synchronous_commit', 'off', true), shelfmark_advance_horizon()"

// advanceHorizon raises the change horizon after a transaction that took
// change numbers has ended (committed or not), in a statement of its own
// on the pool. Its error is dropped: the transaction's outcome stands, and
// the horizon ticker advances it again within horizonEvery.
func (db *DB) advanceHorizon() { advance(context.Background(), db.run(db.pool)) }

// tickHorizon is the ticker's advance: as advanceHorizon, but not
// reported to the tracer, since it belongs to no caller's request, and
// ended with ctx (when the DB closes).
func (db *DB) tickHorizon(ctx context.Context) { advance(ctx, runner{q: db.pool}) }

// advance runs advanceSQL on r within advanceTimeout (or until parent
// ends), dropping its error.
func advance(parent context.Context, r runner) {
	ctx, cancel := context.WithTimeout(parent, advanceTimeout)
	defer cancel()
	_, _ = r.exec(ctx, advanceSQL)
}

// horizonEvery is how often each process advances the horizon on its own,
// for claims whose transactions ended without an advance (a process that
// died with a transaction open, an advance that failed). An advance that
// finds nothing to move writes nothing.
const horizonEvery = time.Second
