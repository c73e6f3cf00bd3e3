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

// CatchUpSteps runs step, one step of a follower of the change sequence
// (it returns how many changes it read), until a step reads nothing; when
// trickle is set (the follower's run loop), it stops after the first step
// that did not stop at its limit (backlog), so that the loop waits for the
// next notification and Coalesce before it steps again. Under a steady
// stream of single writes a follower then takes a step, and one commit of
// its own, every Coalesce, rather than one after every commit it finds,
// each costing the database as much as the create it follows. Stopping
// early never loses a change: a commit after a step's read leaves its
// notification pending. progress, when not nil, is told the total every
// 10 s of a long catch-up. It returns the total read and the first error.
func CatchUpSteps(ctx context.Context, batch int, trickle bool, step func(context.Context) (int, error), progress func(total int)) (int, error) {
	total := 0
	logged := time.Now()
	for {
		n, err := step(ctx)
		total += n
		if err != nil || n == 0 || trickle && !backlog(n, batch) {
			return total, err
		}
		if progress != nil && time.Since(logged) > 10*time.Second {
			progress(total)
			logged = time.Now()
		}
	}
}

// backlog reports whether a follower's step that read n changes, with a
// batch of batch, stopped at its limit rather than at the end of the feed.
// A step that reaches its limit cuts back to the last change boundary (the
// rows of one commit are read together), which leaves at least half a
// batch unless one commit holds more than half; so a step that read at
// least half a batch is taken to have stopped at its limit, and one that
// read less to have reached the end. A wrong guess costs one Coalesce of
// lag.
func backlog(n, batch int) bool { return n >= max(1, batch/2) }

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
