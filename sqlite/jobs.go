package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// EnqueueJobs adds queued jobs; a (queue, resource) that has one already is
// skipped by the unique index.
func (t *writeTx) EnqueueJobs(ctx context.Context, jobs []shelfmark.NewJob, now time.Time) error {
	const width = 5
	at := now.UnixMicro()
	err := chunked(len(jobs), func(lo, hi int) error {
		args := make([]any, 0, (hi-lo)*width)
		for _, j := range jobs[lo:hi] {
			args = append(args, j.Queue, j.Resource, "queued", at, at)
		}
		_, err := t.exec(ctx, `INSERT INTO jobs (queue, resource, state, run_at, created) VALUES `+
			placeholders(hi-lo, width)+` ON CONFLICT (queue, resource) DO NOTHING`, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("enqueue %d jobs: %w", len(jobs), err)
	}
	return nil
}

// DeleteJobs removes finished jobs.
func (t *writeTx) DeleteJobs(ctx context.Context, ids []int64) error {
	err := chunked(len(ids), func(lo, hi int) error {
		args := make([]any, hi-lo)
		for i, id := range ids[lo:hi] {
			args[i] = id
		}
		_, err := t.exec(ctx, `DELETE FROM jobs WHERE id IN `+placeholders(1, hi-lo), args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("delete %d jobs: %w", len(ids), err)
	}
	return nil
}

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
		[]any{now.UnixMicro()}, func(r *sql.Rows) error {
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

// RetryJobs puts failed jobs back with their attempts reset.
func (t *writeTx) RetryJobs(ctx context.Context, queue string, ids []int64, now time.Time) (int64, error) {
	q := `UPDATE jobs SET state = 'queued', attempt = 0, run_at = ?, lease = 0 WHERE state = 'failed'`
	args := []any{now.UnixMicro()}
	if queue != "" {
		q += ` AND queue = ?`
		args = append(args, queue)
	}
	if len(ids) > 0 {
		q += ` AND id IN ` + placeholders(1, len(ids))
		for _, id := range ids {
			args = append(args, id)
		}
	}
	n, err := t.exec(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("retry failed jobs: %w", err)
	}
	return n, nil
}

// Jobs lists jobs by id.
func (t *readTx) Jobs(ctx context.Context, f shelfmark.JobFilter) ([]*shelfmark.Job, error) {
	q := `SELECT ` + sqlstore.JobCols + ` FROM jobs WHERE id > ?`
	args := []any{f.After}
	if f.Queue != "" {
		q += ` AND queue = ?`
		args = append(args, f.Queue)
	}
	if f.State != "" {
		q += ` AND state = ?`
		args = append(args, string(f.State))
	}
	q += ` ORDER BY id LIMIT ?`
	args = append(args, f.Limit)
	var out []*shelfmark.Job
	err := t.query(ctx, q, args, func(r *sql.Rows) error {
		j, err := sqlstore.ScanJob(r)
		out = append(out, j)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list jobs: %w", err)
	}
	return out, nil
}

// JobHeld reports whether worker still holds the job at attempt.
func (t *readTx) JobHeld(ctx context.Context, id int64, worker string, attempt int) (bool, error) {
	var n int
	err := t.queryRow(ctx, `SELECT count(*) FROM jobs WHERE id = ? AND state = 'running' AND worker = ? AND attempt = ?`,
		[]any{id, worker, attempt}, &n)
	if err != nil {
		return false, fmt.Errorf("check job %d: %w", id, err)
	}
	return n > 0, nil
}

// SetFileFormats records characterization results.
func (t *writeTx) SetFileFormats(ctx context.Context, keys []int64, formats []*shelfmark.Format) error {
	for i, f := range formats {
		if _, err := t.exec(ctx, `UPDATE files SET format_id = ?, format_name = ?, format_version = ?, format_mime = ?,
  width = ?, height = ?, pages = ?, format_note = ? WHERE resource = ?`,
			f.PRONOM, f.Name, f.Version, f.MediaType, f.Width, f.Height, f.Pages, f.Note, keys[i]); err != nil {
			return fmt.Errorf("set format of file %d: %w", keys[i], err)
		}
	}
	return nil
}
