package sqlstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/shelfmark/shelfmark"
)

// Jobs is a dialect's statements of the job methods of Tx and WriteTx.
// Their arguments are those named, in that order.
type Jobs struct {
	// ClaimJobs takes the oldest ready jobs of an unpaused queue and
	// returns their JobCols: queue, now, n, lease, worker.
	ClaimJobs  string
	RequeueJob string // id, run_at, error
	FailJob    string // id, error
	// QueueCounts counts the jobs of each queue and state, and those
	// ready at now: now.
	QueueCounts string
	// SetQueuePaused pauses or resumes a queue: name, paused.
	SetQueuePaused string
}

// JobCols are the columns ScanJob reads, from jobs.
const JobCols = `id, queue, resource, state, attempt, run_at, lease, worker, error, created`

// ScanJob reads a row of JobCols.
func ScanJob(r Scanner) (*shelfmark.Job, error) {
	var j shelfmark.Job
	var state string
	var runAt, lease, created int64
	if err := r.Scan(&j.ID, &j.Queue, &j.Resource, &state, &j.Attempt, &runAt, &lease, &j.Worker, &j.Error, &created); err != nil {
		return nil, err
	}
	j.State = shelfmark.JobState(state)
	j.RunAt, j.Created = FromMicros(runAt), FromMicros(created)
	if lease != 0 {
		j.Lease = FromMicros(lease)
	}
	return &j, nil
}

// ClaimJobs takes up to c.N ready jobs of c.Queue for c.Worker, unless the
// queue is paused, in one statement, and returns them by (run_at, id).
func (w *WriteTx) ClaimJobs(ctx context.Context, c shelfmark.Claim) ([]*shelfmark.Job, error) {
	out, err := Collect(ctx, w.q, w.d.ClaimJobs, []any{c.Queue, c.Now.UnixMicro(), c.N, c.Lease.UnixMicro(), c.Worker}, ScanJob)
	if err != nil {
		return nil, fmt.Errorf("%sclaim %s jobs: %w", w.d.Prefix, c.Queue, err)
	}
	slices.SortFunc(out, func(a, b *shelfmark.Job) int {
		if c := a.RunAt.Compare(b.RunAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return out, nil
}

// RequeueJob puts a job back, ready at runAt, with its error.
func (w *WriteTx) RequeueJob(ctx context.Context, id int64, runAt time.Time, msg string) error {
	if _, err := w.q.Exec(ctx, w.d.RequeueJob, id, runAt.UnixMicro(), msg); err != nil {
		return fmt.Errorf("%srequeue job %d: %w", w.d.Prefix, id, err)
	}
	return nil
}

// FailJob marks a job failed.
func (w *WriteTx) FailJob(ctx context.Context, id int64, msg string) error {
	if _, err := w.q.Exec(ctx, w.d.FailJob, id, msg); err != nil {
		return fmt.Errorf("%sfail job %d: %w", w.d.Prefix, id, err)
	}
	return nil
}

// QueueCounts counts jobs per queue and state, with the queues' pauses:
// two statements.
func (t *Tx) QueueCounts(ctx context.Context, now time.Time) ([]shelfmark.QueueCount, error) {
	counts := shelfmark.QueueCounter{}
	err := t.q.EachRow(ctx, t.d.QueueCounts, []any{now.UnixMicro()}, func(r Scanner) error {
		var q, state string
		var n, ready int64
		err := r.Scan(&q, &state, &n, &ready)
		counts.Add(q, shelfmark.JobState(state), n, ready)
		return err
	})
	if err == nil {
		err = t.q.EachRow(ctx, `SELECT name, paused FROM job_queues`, nil, func(r Scanner) error {
			var q string
			var p bool
			err := r.Scan(&q, &p)
			counts.Paused(q, p)
			return err
		})
	}
	if err != nil {
		return nil, fmt.Errorf("%scount jobs: %w", t.d.Prefix, err)
	}
	return counts.Counts(), nil
}

// SetQueuePaused pauses or resumes a queue: one upsert of its job_queues
// row.
func (w *WriteTx) SetQueuePaused(ctx context.Context, queue string, paused bool) error {
	if _, err := w.q.Exec(ctx, w.d.SetQueuePaused, queue, paused); err != nil {
		return fmt.Errorf("%spause queue %s: %w", w.d.Prefix, queue, err)
	}
	return nil
}
