package shelfmark

import (
	"context"
	"time"
)

// DefaultCoalesce is how long a loop that follows the change sequence
// (the search indexer, the OAI-PMH projector) waits, once a commit woke
// it, before it reads the changes: the commits of those few milliseconds
// are then read and written in one step, and one commit of the loop's
// own, rather than a step and a commit each. Under a trickle of single
// writes (one client creating one work at a time) a step per commit put
// three commits on the store's one writer for every work: the work's, the
// index's and the projection's, each waiting for the others. The cost is
// as much more lag of the index and the OAI-PMH view behind a write.
const DefaultCoalesce = 25 * time.Millisecond

// Coalesce waits d after a notification woke a loop that follows the
// change sequence (DefaultCoalesce), so that the next commits join the
// same step; it returns ctx's error if ctx ends first. A d of 0 or less
// does not wait.
func Coalesce(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	return Sleep(ctx, d)
}

// Sleep waits d, or until ctx ends (then it returns ctx's error).
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
