package sqlite

import (
	"context"
	"fmt"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
	"time"
)

// ReapJobs returns the jobs of dead workers to their queues, or fails those
// out of attempts. It reads the few running jobs with an ended lease through
// the partial index jobs_lease.
func (t *writeTx) ReapJobs(ctx context.Context, now time.Time, maxAttempts map[string]int) (int64, error) {
	type lost struct {
		id      int64
		queue   string
		attempt int
		worker  string
	}
	var ls []lost
	err := t.query(ctx, `SELECT id, queue, attempt, worker FROM jobs WHERE state = 'running' AND lease < ? LIMIT 1000`,
		[]any{now.UnixMicro()}, func(r sqlstore.Scanner) error {
			var l lost
			err := r.Scan(&l.id, &l.queue, &l.attempt, &l.worker)
			ls = append(ls, l)
			return err
		})
	if err != nil {
		return 0, fmt.Errorf("reap jobs: %w", err)
	}
	for _, l := range ls {
		msg := fmt.Sprintf("lost: worker %s stopped before the job finished (attempt %d)", l.worker, l.attempt)
		if max := maxAttempts[l.queue]; max > 0 && l.attempt >= max {
			err = t.FailJob(ctx, l.id, msg)
		} else {
			err = t.RequeueJob(ctx, l.id, now, msg)
		}
		if err != nil {
			return 0, err
		}
	}
	return int64(len(ls)), nil
}
