package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	mrand "math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/shelfmark/shelfmark"
)

// Handler does one job and returns what it produced. An error marked
// Permanent fails the job at once; any other error retries it with
// backoff until the queue's last attempt. An ENOTFOUND or EGONE error
// (the file was deleted) finishes the job with nothing to store.
type Handler func(ctx context.Context, job *shelfmark.Job) (*shelfmark.JobResult, error)

// QueueConfig sets one queue's limits.
type QueueConfig struct {
	Name string
	// Concurrency is how many of the queue's jobs run at once.
	Concurrency int
	// Timeout is the wall-clock ceiling of one attempt; its child
	// processes are killed with it. Child processes are bounded by the
	// CPU time they use and by stalling (Tools.Limits), not by waiting
	// for a busy CPU, so it is a generous last resort; the job's lease
	// does not depend on it (Options.Renew).
	Timeout time.Duration
	// MaxAttempts is how many attempts a job gets before it fails.
	MaxAttempts int
	// Batch is how many jobs one claim takes (default Concurrency): quick
	// jobs claim many at once to spare round trips.
	Batch int
	// Deferrable jobs start only while Options.Gate (when set) does not
	// report the foreground busy: heavy work that can wait (OCR).
	Deferrable bool
	// Reserved is how many of the queue's jobs get a slot ahead of every
	// queue before it: a queue earlier in the order that always has work
	// (a long ingest keeps characterize busy) cannot take the last slots
	// from it, so it always makes progress. At most Concurrency, and the
	// queues' reserved slots together leave at least one of Options.Total
	// to the priority order (with --jobs 1 nothing is reserved); a
	// Deferrable queue's reserved jobs still wait for the gate.
	Reserved int
}

// DefaultQueues returns the pipeline's queues in priority order, with
// limits derived from the number of cores: identification (in process,
// at normal priority, 20 s a file at most) runs two jobs per core
// (half of it waits on the database);
// derivatives (single-threaded vips at nice 10, which yields to the
// foreground) one per core, so that once an ingest stops a book's tiles
// take the whole machine; text extraction and OCR (child processes at
// idle CPU priority) on half the cores each. One derivative job always
// has a slot (Reserved), so thumbnails keep appearing during a long
// ingest; OCR is Deferrable. The attempts of the queues that run child
// processes have wall-clock ceilings far above the work they do (their
// tools are bounded by CPU time, see DefaultCPULimit), so that a page
// waiting for a CPU held by ingest is not failed for it: derivatives and
// text 30 min, OCR an hour (a scanned PDF reads the pages that fit in
// it, the rest in the next job).
func DefaultQueues(cores int) []QueueConfig {
	half := max(1, cores/2)
	return []QueueConfig{
		{Name: shelfmark.QueueCharacterize, Concurrency: max(1, 2*cores), Timeout: 20 * time.Second, MaxAttempts: 3, Batch: 16},
		{Name: shelfmark.QueueDerive, Concurrency: max(1, cores), Timeout: 30 * time.Minute, MaxAttempts: 3, Reserved: 1},
		{Name: shelfmark.QueueText, Concurrency: half, Timeout: 30 * time.Minute, MaxAttempts: 3},
		{Name: shelfmark.QueueOCR, Concurrency: half, Timeout: time.Hour, MaxAttempts: 3, Deferrable: true},
	}
}

// Observer learns how each attempt ended: outcome is "done", "retry",
// "failed" or "lost" (the worker no longer held the job when it ended).
type Observer interface {
	ObserveJob(queue, outcome string, d time.Duration)
}

// Options configure a Runner. Zero values pick defaults.
type Options struct {
	// Worker names this runner in the jobs it holds (default
	// host:pid:random).
	Worker string
	// Queues to work, in priority order (default DefaultQueues(NumCPU)).
	// A queue without a handler is skipped.
	Queues []QueueConfig
	// Total caps the jobs running at once over all queues (default twice
	// NumCPU: identification waits on the database as much as it
	// computes, and the child processes run at idle CPU priority). When the
	// cap is reached, the queues' Reserved jobs are served first, then the
	// queues in the order of Queues.
	Total int
	// Poll is how often an idle queue is asked again (default 1 s; Notify
	// wakes the runner sooner).
	Poll time.Duration
	// Reap is how often jobs of dead workers are looked for (default 15 s,
	// or Grace when shorter).
	Reap time.Duration
	// Grace is added to a job's lease beyond the next renewal (default
	// 30 s).
	Grace time.Duration
	// Renew bounds a job's lease (default 1 min): a claim leases a job
	// of a queue for the lease term, the smaller of Renew and the queue's
	// Timeout, plus Grace, and the runner renews the leases of the jobs
	// it holds (running or claimed) to their term from then, every half
	// of the shortest term but Grace. So a job that runs long (its tools
	// waiting for a busy CPU) stays with its worker as long as the worker
	// lives, and one whose worker stopped is taken back within a term of
	// the last renewal.
	Renew time.Duration
	// Backoff is the wait before attempt n+1 after attempt n failed
	// (default 10 s × 4^(n-1), ±20%, at most 1 h).
	Backoff  func(attempt int) time.Duration
	Observer Observer
	Logger   *slog.Logger
	// Gate, when set, holds back deferrable queues while it reports the
	// foreground busy (see CPUGate).
	Gate interface{ Busy() bool }
	// Behind, when set, reports a queue over its backlog limit
	// (shelfmark.BacklogGate): such a deferrable queue runs one job at a
	// time even while Gate holds it back, since uploads wait for its
	// backlog to shrink and a busy foreground would otherwise keep it
	// from ever shrinking.
	Behind interface{ Over(queue string) bool }
}

// DefaultBackoff waits 10 s, 40 s, 160 s … (±20%, at most an hour).
func DefaultBackoff(attempt int) time.Duration {
	d := 10 * time.Second * time.Duration(math.Pow(4, float64(max(attempt, 1)-1)))
	d = min(d, time.Hour)
	return time.Duration(float64(d) * (0.8 + 0.4*mrand.Float64()))
}

// Runner claims and runs jobs until its context ends.
type Runner struct {
	repo     *shelfmark.Repository
	handlers map[string]Handler
	opts     Options
	queues   []*queueState
	wake     chan struct{}
	done     chan *queueState

	renewEvery time.Duration // how often leases are renewed

	mu      sync.Mutex
	running map[int64]*shelfmark.Job // the jobs started and not yet settled
}

type queueState struct {
	QueueConfig
	handler   Handler
	running   int
	buf       []*shelfmark.Job
	idleUntil time.Time
}

// NewRunner returns a runner of handlers (by queue name) over repo.
func NewRunner(repo *shelfmark.Repository, handlers map[string]Handler, opts Options) *Runner {
	cores := runtime.NumCPU()
	if opts.Worker == "" {
		opts.Worker = WorkerName()
	}
	if opts.Queues == nil {
		opts.Queues = DefaultQueues(cores)
	}
	if opts.Total <= 0 {
		opts.Total = 2 * cores
	}
	if opts.Poll <= 0 {
		opts.Poll = time.Second
	}
	if opts.Grace <= 0 {
		opts.Grace = 30 * time.Second
	}
	if opts.Renew <= 0 {
		opts.Renew = time.Minute
	}
	if opts.Reap <= 0 {
		opts.Reap = min(15*time.Second, opts.Grace)
	}
	if opts.Backoff == nil {
		opts.Backoff = DefaultBackoff
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Runner{repo: repo, handlers: handlers, opts: opts, wake: make(chan struct{}, 1), done: make(chan *queueState, 64),
		running: map[int64]*shelfmark.Job{}}
	for _, q := range opts.Queues {
		h := handlers[q.Name]
		if h == nil || q.Concurrency <= 0 {
			continue
		}
		if q.Batch <= 0 {
			q.Batch = q.Concurrency
		}
		if q.MaxAttempts <= 0 {
			q.MaxAttempts = 3
		}
		if q.Timeout <= 0 {
			q.Timeout = time.Minute
		}
		q.Reserved = min(max(q.Reserved, 0), q.Concurrency)
		r.queues = append(r.queues, &queueState{QueueConfig: q, handler: h})
	}
	r.renewEvery = opts.Renew
	for _, q := range r.queues {
		r.renewEvery = min(r.renewEvery, q.Timeout)
	}
	r.renewEvery = max(r.renewEvery/2, time.Millisecond)
	// the reserved slots leave at least one to the priority order
	budget := opts.Total - 1
	for _, q := range r.queues {
		q.Reserved = min(q.Reserved, budget)
		budget -= q.Reserved
	}
	return r
}

// WorkerName returns a name unique to this process: host:pid:random.
func WorkerName() string {
	host, _ := os.Hostname()
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b))
}

// Name returns the runner's worker name.
func (r *Runner) Name() string { return r.opts.Worker }

// Notify tells the runner that jobs may have been enqueued, so idle queues
// are asked at once rather than at the next poll.
func (r *Runner) Notify() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run works until ctx ends. Then it stops claiming, cancels the jobs it is
// running and puts them, with the jobs it had claimed but not started,
// back in their queues for any worker to take.
func (r *Runner) Run(ctx context.Context) error {
	if len(r.queues) == 0 {
		<-ctx.Done()
		return nil
	}
	jobCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJobs()
	var wg sync.WaitGroup
	settling := make(chan struct{}, maxSettling)
	total := 0
	poll := time.NewTimer(0)
	defer poll.Stop()
	reap := time.NewTicker(r.opts.Reap)
	defer reap.Stop()
	renew := time.NewTicker(r.renewEvery)
	defer renew.Stop()
	r.reap(ctx)
	for {
		now := time.Now()
		next := now.Add(r.opts.Poll)
		held := r.opts.Gate != nil && r.opts.Gate.Busy()
		// first the reserved slots, then the rest in priority order
		for _, reserved := range []bool{true, false} {
			for _, q := range r.queues {
				limit := q.Concurrency
				if reserved {
					limit = q.Reserved
				}
				free := min(limit-q.running, r.opts.Total-total)
				if free <= 0 {
					continue
				}
				if q.Deferrable && held {
					if !reserved && q.running == 0 && r.opts.Behind != nil && r.opts.Behind.Over(q.Name) {
						free = 1
					} else {
						// look again soon: the foreground may be done
						if soon := now.Add(100 * time.Millisecond); soon.Before(next) {
							next = soon
						}
						continue
					}
				}
				if r.fill(ctx, q, now, free) {
					if q.idleUntil.Before(next) && q.idleUntil.After(now) {
						next = q.idleUntil
					}
					continue
				}
				for free > 0 && len(q.buf) > 0 {
					job := q.buf[0]
					q.buf = q.buf[1:]
					q.running++
					total++
					free--
					wg.Add(1)
					r.hold(job, true)
					go func() {
						defer wg.Done()
						start := time.Now()
						res, err := r.call(jobCtx, q, job)
						// the slot is free once the work is done; the result is
						// stored meanwhile, batched with others by the group
						// committer, up to maxSettling at once
						settling <- struct{}{}
						r.done <- q
						r.settle(jobCtx, q, job, res, err, start)
						r.hold(job, false)
						<-settling
					}()
				}
			}
		}
		poll.Reset(time.Until(next))
		select {
		case <-ctx.Done():
			cancelJobs()
			go func() { wg.Wait(); close(r.done) }()
			for q := range r.done {
				q.running--
			}
			r.release()
			return nil
		case q := <-r.done:
			q.running--
			total--
		case <-r.wake:
			for _, q := range r.queues {
				q.idleUntil = time.Time{}
			}
		case <-reap.C:
			r.reap(ctx)
		case <-renew.C:
			r.renew(ctx)
		case <-poll.C:
		}
	}
}

// fill claims jobs for q's buffer when it is empty and the queue is not
// known to be idle, and reports whether the buffer is still empty.
func (r *Runner) fill(ctx context.Context, q *queueState, now time.Time, free int) (empty bool) {
	if len(q.buf) == 0 && !now.Before(q.idleUntil) {
		n := max(q.Batch, free)
		lease := now.Add(r.leaseTerm(q))
		jobs, err := r.repo.ClaimJobs(ctx, shelfmark.Claim{Queue: q.Name, Worker: r.opts.Worker, N: n, Now: now, Lease: lease})
		if err != nil && ctx.Err() == nil {
			r.opts.Logger.Error("claim jobs", "queue", q.Name, "err", err)
		}
		q.buf = jobs
		if len(jobs) == 0 {
			q.idleUntil = now.Add(r.opts.Poll)
		}
	}
	return len(q.buf) == 0
}

// release puts claimed jobs that never started back in their queues.
func (r *Runner) release() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, q := range r.queues {
		for _, job := range q.buf {
			if err := r.repo.RetryJobLater(ctx, job, time.Now(), errors.New("released: the worker stopped")); err != nil {
				r.opts.Logger.Warn("release job", "queue", q.Name, "job", job.ID, "err", err)
			}
		}
		q.buf = nil
	}
}

// hold records that a job started (held) or was settled (not held).
func (r *Runner) hold(job *shelfmark.Job, held bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if held {
		r.running[job.ID] = job
	} else {
		delete(r.running, job.ID)
	}
}

// leaseTerm is how long a claim or a renewal leases a job of q for.
func (r *Runner) leaseTerm(q *queueState) time.Duration {
	return min(q.Timeout, r.opts.Renew) + r.opts.Grace
}

// renew moves the leases of the jobs the runner holds (running, being
// settled, or claimed and waiting for a slot) to their lease term from
// now: one statement a queue. A job lost meanwhile is not renewed; its
// result will be refused.
func (r *Runner) renew(ctx context.Context) {
	byQueue := map[string][]*shelfmark.Job{}
	r.mu.Lock()
	for _, j := range r.running {
		byQueue[j.Queue] = append(byQueue[j.Queue], j)
	}
	r.mu.Unlock()
	now := time.Now()
	for _, q := range r.queues {
		jobs := append(byQueue[q.Name], q.buf...)
		if len(jobs) == 0 {
			continue
		}
		n, err := r.repo.RenewJobs(ctx, r.opts.Worker, jobs, now.Add(r.leaseTerm(q)))
		switch {
		case err != nil && ctx.Err() == nil:
			r.opts.Logger.Error("renew job leases", "queue", q.Name, "jobs", len(jobs), "err", err)
		case err == nil && n < int64(len(jobs)):
			// settled meanwhile, or lost: their leases had ended
			r.opts.Logger.Debug("job leases renewed", "queue", q.Name, "jobs", n, "held", len(jobs))
		}
	}
}

func (r *Runner) reap(ctx context.Context) {
	max := make(map[string]int, len(r.queues))
	for _, q := range r.queues {
		max[q.Name] = q.MaxAttempts
	}
	n, err := r.repo.ReapJobs(ctx, max)
	if err != nil && ctx.Err() == nil {
		r.opts.Logger.Error("reap jobs", "err", err)
	} else if n > 0 {
		r.opts.Logger.Warn("jobs of stopped workers returned to their queues", "jobs", n)
	}
}

// maxSettling bounds the results waiting to be stored.
const maxSettling = 256

// settle stores the outcome of an attempt: finished, retried later,
// failed, or (when the runner stops) released.
func (r *Runner) settle(ctx context.Context, q *queueState, job *shelfmark.Job, res *shelfmark.JobResult, err error, start time.Time) {
	settle, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	outcome := "done"
	switch {
	case ctx.Err() != nil:
		// the runner is stopping: hand the job back untouched
		outcome = "released"
		err = r.repo.RetryJobLater(settle, job, time.Now(), errors.New("released: the worker stopped"))
	case err != nil && (shelfmark.ErrorCode(err) == shelfmark.ENOTFOUND || shelfmark.ErrorCode(err) == shelfmark.EGONE):
		err = r.repo.FinishJob(settle, job, nil)
	case err != nil && (IsPermanent(err) || job.Attempt >= q.MaxAttempts):
		outcome = "failed"
		r.opts.Logger.Warn("job failed", "queue", q.Name, "job", job.ID, "resource", r.repo.IDs().Encode(job.Resource), "attempt", job.Attempt, "err", err)
		err = r.repo.FailJob(settle, job, err)
	case err != nil:
		outcome = "retry"
		r.opts.Logger.Info("job will be retried", "queue", q.Name, "job", job.ID, "attempt", job.Attempt, "err", err)
		err = r.repo.RetryJobLater(settle, job, time.Now().Add(r.opts.Backoff(job.Attempt)), err)
	default:
		err = r.repo.FinishJob(settle, job, res)
		if err != nil && shelfmark.ErrorCode(err) != shelfmark.ECONFLICT {
			// the result could not be stored: try again later
			outcome = "retry"
			err = r.repo.RetryJobLater(settle, job, time.Now().Add(r.opts.Backoff(job.Attempt)), err)
		}
	}
	if err != nil {
		if shelfmark.ErrorCode(err) == shelfmark.ECONFLICT {
			outcome = "lost"
		}
		r.opts.Logger.Error("settle job", "queue", q.Name, "job", job.ID, "err", err)
	}
	r.opts.Logger.Debug("job settled", "queue", q.Name, "job", job.ID, "resource", r.repo.IDs().Encode(job.Resource), "attempt", job.Attempt, "outcome", outcome)
	if r.opts.Observer != nil {
		r.opts.Observer.ObserveJob(q.Name, outcome, time.Since(start))
	}
}

// call runs the handler under the queue's time limit, turning a panic into
// an error.
func (r *Runner) call(ctx context.Context, q *queueState, job *shelfmark.Job) (res *shelfmark.JobResult, err error) {
	ctx, cancel := context.WithTimeout(ctx, q.Timeout)
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s job %d panicked: %v\n%s", q.Name, job.ID, p, debug.Stack())
		}
	}()
	res, err = q.handler(ctx, job)
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && !errors.Is(err, ErrTimeout) {
		err = fmt.Errorf("%w after %s: %w", ErrTimeout, q.Timeout, err)
	}
	return res, err
}
