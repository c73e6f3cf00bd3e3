package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

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

// Jobs lists jobs by id.
func (t *readTx) Jobs(ctx context.Context, f shelfmark.JobFilter) ([]*shelfmark.Job, error) {
	var out []*shelfmark.Job
	_, err := t.r.query(ctx, `SELECT `+sqlstore.JobCols+` FROM jobs WHERE id > $1 AND ($2 = '' OR queue = $2) AND ($3 = '' OR state = $3)
ORDER BY id LIMIT $4`, []any{f.After, f.Queue, string(f.State), f.Limit}, func(rows pgx.Rows) error {
		j, err := sqlstore.ScanJob(rows)
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
