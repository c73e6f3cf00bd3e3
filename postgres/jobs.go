package postgres

import (
	"context"
	"fmt"
	"time"
)

// ReapJobs returns the jobs of dead workers to their queues (or fails those
// out of attempts) in one statement, through the partial index jobs_lease.
func (t *writeTx) ReapJobs(ctx context.Context, now time.Time, maxAttempts map[string]int) (int64, error) {
	queues, maxes := make([]string, 0, len(maxAttempts)), make([]int32, 0, len(maxAttempts))
	for q, m := range maxAttempts {
		queues, maxes = append(queues, q), append(maxes, int32(m))
	}
	n, err := t.r.exec(ctx, `WITH lost AS (
    SELECT j.id, j.attempt >= coalesce(m.max, 0) AND coalesce(m.max, 0) > 0 AS spent
    FROM jobs j LEFT JOIN unnest($2::text[], $3::int[]) AS m(queue, max) ON m.queue = j.queue
    WHERE j.state = 'running' AND j.lease < $1
    LIMIT 1000 FOR UPDATE OF j SKIP LOCKED)
UPDATE jobs j SET state = CASE WHEN l.spent THEN 'failed' ELSE 'queued' END, run_at = $1, lease = 0,
    error = 'lost: worker ' || j.worker || ' stopped before the job finished (attempt ' || j.attempt || ')'
FROM lost l WHERE j.id = l.id`, micros(now), queues, maxes)
	if err != nil {
		return 0, fmt.Errorf("postgres: reap jobs: %w", err)
	}
	return n, nil
}
