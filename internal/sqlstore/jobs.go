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
	// RenewJobs moves the lease of running jobs of a worker: a list of
	// ids, worker, lease.
	RenewJobs string
	// QueueCounts counts the jobs of each queue and state, and those
	// ready at now: now.
	QueueCounts string
	// SetQueuePaused pauses or resumes a queue: name, paused.
	SetQueuePaused string
	// ListJobs lists JobCols by id: after, queue or "", state or "", limit.
	ListJobs string
	// JobHeld reads a row if the worker holds the job at the attempt:
	// id, worker, attempt. JobHeldLocked is the same in a write
	// transaction, where it also locks the row.
	JobHeld, JobHeldLocked string
	// RetryJobs requeues failed jobs: now, queue or "", a list of ids,
	// the number of ids (0: any).
	RetryJobs  string
	DeleteJobs string // a list of ids
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

// RenewJobs moves the lease of the jobs among ids that worker holds, in
// one statement.
func (w *WriteTx) RenewJobs(ctx context.Context, worker string, ids []int64, lease time.Time) (int64, error) {
	if len(ids) == 0 {
		return 0, nil
	}
	n, err := w.q.Exec(ctx, w.d.RenewJobs, w.d.Int64s(ids), worker, lease.UnixMicro())
	if err != nil {
		return 0, fmt.Errorf("%srenew the leases of %d jobs: %w", w.d.Prefix, len(ids), err)
	}
	return n, nil
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

// EnqueueJobs adds queued jobs, ready at now, in one bulk write; a
// (queue, resource) that has one already is skipped by the unique index.
func (w *WriteTx) EnqueueJobs(ctx context.Context, jobs []shelfmark.NewJob, now time.Time) error {
	at := now.UnixMicro()
	return w.insert(ctx, "enqueue %d jobs", "jobs", Rows{
		Cols: []Col{{"queue", Text}, {"resource", Int64}, {"state", Text}, {"run_at", Int64}, {"created", Int64}},
		N:    len(jobs),
		Row:  func(i int, v []any) { v[0], v[1], v[2], v[3], v[4] = jobs[i].Queue, jobs[i].Resource, "queued", at, at },
	}, "ON CONFLICT (queue, resource) DO NOTHING")
}

// DeleteJobs removes finished jobs in one statement.
func (w *WriteTx) DeleteJobs(ctx context.Context, ids []int64) error {
	if len(ids) == 0 {
		return nil
	}
	if _, err := w.q.Exec(ctx, w.d.DeleteJobs, w.d.Int64s(ids)); err != nil {
		return fmt.Errorf("%sdelete %d jobs: %w", w.d.Prefix, len(ids), err)
	}
	return nil
}

// RetryJobs puts failed jobs back, ready at now, with their attempts
// reset: those of queue (any, if ""), among ids (any, if none). One
// statement.
func (w *WriteTx) RetryJobs(ctx context.Context, queue string, ids []int64, now time.Time) (int64, error) {
	if ids == nil {
		ids = []int64{}
	}
	n, err := w.q.Exec(ctx, w.d.RetryJobs, now.UnixMicro(), queue, w.d.Int64s(ids), len(ids))
	if err != nil {
		return 0, fmt.Errorf("%sretry failed jobs: %w", w.d.Prefix, err)
	}
	return n, nil
}

// Jobs lists jobs by id, after f.After, of f.Queue and f.State when set:
// one range of the primary key.
func (t *Tx) Jobs(ctx context.Context, f shelfmark.JobFilter) ([]*shelfmark.Job, error) {
	out, err := Collect(ctx, t.q, t.d.ListJobs, []any{f.After, f.Queue, string(f.State), f.Limit}, ScanJob)
	if err != nil {
		return nil, fmt.Errorf("%slist jobs: %w", t.d.Prefix, err)
	}
	return out, nil
}

// JobHeld reports whether worker still holds the job at attempt.
func (t *Tx) JobHeld(ctx context.Context, id int64, worker string, attempt int) (bool, error) {
	return jobHeld(ctx, t.q, t.d, t.d.JobHeld, id, worker, attempt)
}

// JobHeld, in a write transaction, also locks the job's row until the
// transaction ends (where the dialect can), so that a reaper (which skips
// locked rows) cannot hand the job to another worker while its result is
// being stored.
func (w *WriteTx) JobHeld(ctx context.Context, id int64, worker string, attempt int) (bool, error) {
	return jobHeld(ctx, w.q, w.d, w.d.JobHeldLocked, id, worker, attempt)
}

func jobHeld(ctx context.Context, q Querier, d *Dialect, stmt string, id int64, worker string, attempt int) (bool, error) {
	held := false
	if err := q.EachRow(ctx, stmt, []any{id, worker, attempt}, func(Scanner) error { held = true; return nil }); err != nil {
		return false, fmt.Errorf("%scheck job %d: %w", d.Prefix, id, err)
	}
	return held, nil
}
