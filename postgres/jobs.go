package postgres

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
)

// jobCols are the columns scanJob reads, in its order.
const jobCols = `id, queue, resource, state, attempt, run_at, lease, worker, error, created`

func scanJob(rows pgx.Rows) (*shelfmark.Job, error) {
	var j shelfmark.Job
	var state string
	var runAt, lease, created int64
	if err := rows.Scan(&j.ID, &j.Queue, &j.Resource, &state, &j.Attempt, &runAt, &lease, &j.Worker, &j.Error, &created); err != nil {
		return nil, err
	}
	j.State = shelfmark.JobState(state)
	j.RunAt, j.Created = fromMicros(runAt), fromMicros(created)
	if lease != 0 {
		j.Lease = fromMicros(lease)
	}
	return &j, nil
}

// EnqueueJobs adds queued jobs in one statement; a (queue, resource) that
// has one already is skipped by the unique index.
func (t *writeTx) EnqueueJobs(ctx context.Context, jobs []shelfmark.NewJob, now time.Time) error {
	if len(jobs) == 0 {
		return nil
	}
	queues, res := make([]string, len(jobs)), make([]int64, len(jobs))
	for i, j := range jobs {
		queues[i], res[i] = j.Queue, j.Resource
	}
	if _, err := t.r.exec(ctx, `INSERT INTO jobs (queue, resource, state, run_at, created)
SELECT q, r, 'queued', $3, $3 FROM unnest($1::text[], $2::bigint[]) AS u(q, r)
ON CONFLICT (queue, resource) DO NOTHING`, queues, res, micros(now)); err != nil {
		return fmt.Errorf("postgres: enqueue %d jobs: %w", len(jobs), err)
	}
	return nil
}

// claimSQL takes the oldest ready jobs of an unpaused queue. FOR UPDATE
// SKIP LOCKED lets workers on several machines claim at once: each skips
// the rows another is taking, so no job is handed out twice. The rows are
// picked once, in a MATERIALIZED CTE: as a subquery joined by UPDATE …
// FROM, the planner may run the pick again, and rows locked by a run whose
// result is not used stay queued but hidden from other claimers until the
// transaction ends.
const claimSQL = `WITH c AS MATERIALIZED (
    SELECT id FROM jobs
    WHERE queue = $1 AND state = 'queued' AND run_at <= $2
      AND NOT EXISTS (SELECT 1 FROM job_queues WHERE name = $1 AND paused)
    ORDER BY run_at, id LIMIT $3
    FOR UPDATE SKIP LOCKED)
UPDATE jobs j SET state = 'running', attempt = j.attempt + 1, lease = $4, worker = $5
FROM c WHERE j.id = c.id
RETURNING j.id, j.queue, j.resource, j.state, j.attempt, j.run_at, j.lease, j.worker, j.error, j.created`

// ClaimJobs takes up to c.N ready jobs for c.Worker.
func (t *writeTx) ClaimJobs(ctx context.Context, c shelfmark.Claim) ([]*shelfmark.Job, error) {
	var out []*shelfmark.Job
	_, err := t.r.query(ctx, claimSQL, []any{c.Queue, micros(c.Now), c.N, micros(c.Lease), c.Worker}, func(rows pgx.Rows) error {
		j, err := scanJob(rows)
		out = append(out, j)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: claim %s jobs: %w", c.Queue, err)
	}
	sort.Slice(out, func(i, k int) bool {
		if !out[i].RunAt.Equal(out[k].RunAt) {
			return out[i].RunAt.Before(out[k].RunAt)
		}
		return out[i].ID < out[k].ID
	})
	return out, nil
}

// DeleteJobs removes finished jobs.
func (t *writeTx) DeleteJobs(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := t.r.exec(ctx, `DELETE FROM jobs WHERE id = ANY($1::bigint[])`, ids); err != nil {
		return fmt.Errorf("postgres: delete %d jobs: %w", len(ids), err)
	}
	return nil
}

// RequeueJob puts a job back, ready at runAt, with its error.
func (t *writeTx) RequeueJob(ctx context.Context, id int64, runAt time.Time, msg string) error {
	if _, err := t.r.exec(ctx, `UPDATE jobs SET state = 'queued', run_at = $2, lease = 0, error = $3 WHERE id = $1`,
		id, micros(runAt), msg); err != nil {
		return fmt.Errorf("postgres: requeue job %d: %w", id, err)
	}
	return nil
}

// FailJob marks a job failed.
func (t *writeTx) FailJob(ctx context.Context, id int64, msg string) error {
	if _, err := t.r.exec(ctx, `UPDATE jobs SET state = 'failed', lease = 0, error = $2 WHERE id = $1`, id, msg); err != nil {
		return fmt.Errorf("postgres: fail job %d: %w", id, err)
	}
	return nil
}

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

// RetryJobs puts failed jobs back with their attempts reset.
func (t *writeTx) RetryJobs(ctx context.Context, queue string, ids []int64, now time.Time) (int64, error) {
	n, err := t.r.exec(ctx, `UPDATE jobs SET state = 'queued', attempt = 0, run_at = $1, lease = 0
WHERE state = 'failed' AND ($2 = '' OR queue = $2) AND (cardinality($3::bigint[]) = 0 OR id = ANY($3::bigint[]))`,
		micros(now), queue, nonNil(ids))
	if err != nil {
		return 0, fmt.Errorf("postgres: retry failed jobs: %w", err)
	}
	return n, nil
}

func nonNil(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// SetQueuePaused pauses or resumes a queue.
func (t *writeTx) SetQueuePaused(ctx context.Context, queue string, paused bool) error {
	if _, err := t.r.exec(ctx, `INSERT INTO job_queues (name, paused) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET paused = excluded.paused`, queue, paused); err != nil {
		return fmt.Errorf("postgres: pause queue %s: %w", queue, err)
	}
	return nil
}

// QueueCounts counts jobs per queue and state.
func (t *readTx) QueueCounts(ctx context.Context, now time.Time) ([]shelfmark.QueueCount, error) {
	counts := shelfmark.QueueCounter{}
	_, err := t.r.query(ctx, `SELECT queue, state, count(*), count(*) FILTER (WHERE run_at <= $1) FROM jobs GROUP BY queue, state`,
		[]any{micros(now)}, func(rows pgx.Rows) error {
			var q, state string
			var n, ready int64
			err := rows.Scan(&q, &state, &n, &ready)
			counts.Add(q, shelfmark.JobState(state), n, ready)
			return err
		})
	if err == nil {
		_, err = t.r.query(ctx, `SELECT name, paused FROM job_queues`, nil, func(rows pgx.Rows) error {
			var q string
			var p bool
			err := rows.Scan(&q, &p)
			counts.Paused(q, p)
			return err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: count jobs: %w", err)
	}
	return counts.Counts(), nil
}

// Jobs lists jobs by id.
func (t *readTx) Jobs(ctx context.Context, f shelfmark.JobFilter) ([]*shelfmark.Job, error) {
	var out []*shelfmark.Job
	_, err := t.r.query(ctx, `SELECT `+jobCols+` FROM jobs WHERE id > $1 AND ($2 = '' OR queue = $2) AND ($3 = '' OR state = $3)
ORDER BY id LIMIT $4`, []any{f.After, f.Queue, string(f.State), f.Limit}, func(rows pgx.Rows) error {
		j, err := scanJob(rows)
		out = append(out, j)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: list jobs: %w", err)
	}
	return out, nil
}

// JobHeld reports whether worker still holds the job at attempt.
func (t *readTx) JobHeld(ctx context.Context, id int64, worker string, attempt int) (bool, error) {
	var held bool
	if err := t.r.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM jobs WHERE id = $1 AND state = 'running' AND worker = $2 AND attempt = $3)`,
		[]any{id, worker, attempt}, &held); err != nil {
		return false, fmt.Errorf("postgres: check job %d: %w", id, err)
	}
	return held, nil
}

// SetFileFormats records characterization results in one statement.
func (t *writeTx) SetFileFormats(ctx context.Context, keys []int64, formats []*shelfmark.Format) error {
	if len(keys) == 0 {
		return nil
	}
	n := len(keys)
	ids, names, versions, mimes, notes := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	ws, hs, ps := make([]int32, n), make([]int32, n), make([]int32, n)
	for i, f := range formats {
		ids[i], names[i], versions[i], mimes[i], notes[i] = f.PRONOM, f.Name, f.Version, f.MediaType, f.Note
		ws[i], hs[i], ps[i] = int32(f.Width), int32(f.Height), int32(f.Pages)
	}
	if _, err := t.r.exec(ctx, `UPDATE files f SET format_id = u.id, format_name = u.name, format_version = u.version,
  format_mime = u.mime, width = u.w, height = u.h, pages = u.p, format_note = u.note
FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::int[], $8::int[], $9::text[])
  AS u(key, id, name, version, mime, w, h, p, note)
WHERE f.resource = u.key`, keys, ids, names, versions, mimes, ws, hs, ps, notes); err != nil {
		return fmt.Errorf("postgres: set format of %d files: %w", n, err)
	}
	return nil
}

// JobHeld, in a write transaction, also locks the job's row until the
// transaction ends, so that a reaper (which skips locked rows) cannot hand
// the job to another worker while its result is being stored.
func (t *writeTx) JobHeld(ctx context.Context, id int64, worker string, attempt int) (bool, error) {
	n, err := t.r.query(ctx, `SELECT 1 FROM jobs WHERE id = $1 AND state = 'running' AND worker = $2 AND attempt = $3 FOR UPDATE`,
		[]any{id, worker, attempt}, func(pgx.Rows) error { return nil })
	if err != nil {
		return false, fmt.Errorf("postgres: check job %d: %w", id, err)
	}
	return n > 0, nil
}
