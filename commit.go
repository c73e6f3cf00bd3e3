package shelfmark

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// CommitObserver learns of every group commit: how many operations it
// carried, how long the transaction took and whether it failed. The http
// adapter feeds these into metrics.
type CommitObserver interface {
	ObserveCommit(ops int, d time.Duration, err error)
}

// JobsObserver is a CommitObserver that is also told, after a successful
// group commit, that the commit enqueued jobs (ObserveJobs), so that a
// job runner is woken for jobs, not for every commit: most commits (a
// work's metadata, a job's result without a next job) enqueue none, and a
// runner woken by each would claim from its queues, a write transaction,
// after each.
type JobsObserver interface {
	ObserveJobs()
}

// jobWatch is the write transaction the ops of a batch see: it notes
// whether any of them enqueued jobs.
type jobWatch struct {
	WriteTx
	jobs bool
}

// EnqueueJobs implements WriteTx.
func (w *jobWatch) EnqueueJobs(ctx context.Context, jobs []NewJob, now time.Time) error {
	if len(jobs) > 0 {
		w.jobs = true
	}
	return w.WriteTx.EnqueueJobs(ctx, jobs, now)
}

// op is one write operation waiting for a group commit. check reads and
// validates without writing; apply writes. They run back to back inside
// the batch's transaction, so an op sees the writes of the ops before it.
type op struct {
	ctx   context.Context
	check func(tx WriteTx) error
	apply func(tx WriteTx, seq int64, now time.Time) error
	err   error
	done  chan struct{}
	// audit holds the audit trail entries of the op's writes, appended by
	// apply and written with the batch.
	audit []*AuditEntry
	// group, for an op that creates one resource of an ingest group, holds
	// the keys the group creates: a parent among them was authorised by
	// the group's root.
	group map[int64]bool
	// uploads are the digests of the caller's own uploads the op names in
	// files (set by its check): their records go when it is applied, by
	// the op itself or, in a group, by the group once every member is.
	uploads []string
	// parallel marks an op that only creates rows under keys of its own
	// (a create, an ingest group): a batch of such ops alone may commit
	// beside others on a ParallelStorage.
	parallel bool
}

// errApply marks a batch that must be retried without the op whose apply
// failed (its writes may be partial, so the whole transaction rolls back).
var errApply = errors.New("apply failed")

// errNothing rolls back a batch in which no op got past its check.
var errNothing = errors.New("nothing to commit")

// committer batches ops into transactions: while one transaction commits,
// new ops queue up, and the next transaction takes all of them (up to
// maxBatch). One fsync then acknowledges many writes (group commit, R10), so
// throughput rises with concurrent clients while every acknowledgement
// still means "on disk".
type committer struct {
	store    Storage
	par      ParallelStorage // store, when its transactions may commit at once
	queue    chan []*op      // chunks of ops, each at most maxBatch
	queued   atomic.Int64    // ops in queue
	maxBatch int
	observer CommitObserver
	now      func() time.Time

	mu     sync.RWMutex
	closed bool
	wg     sync.WaitGroup
}

func newCommitter(store Storage, workers, maxBatch int, observer CommitObserver, now func() time.Time) *committer {
	c := &committer{store: store, queue: make(chan []*op, maxBatch*4), maxBatch: maxBatch, observer: observer, now: now}
	c.par, _ = store.(ParallelStorage)
	for i := 0; i < workers; i++ {
		c.wg.Add(1)
		go c.loop()
	}
	return c
}

// submit queues ops and waits until each is committed or failed. It returns
// early with the context's error if ctx ends while the ops are still queued;
// once a transaction has taken them they run to completion. The ops go in
// chunks of at most maxBatch, and a committer takes a chunk whole: the ops
// of one call commit together unless there are more than maxBatch of
// them, rather than spread over the committers at work.
func (c *committer) submit(ctx context.Context, ops ...*op) error {
	c.mu.RLock()
	if c.closed {
		c.mu.RUnlock()
		return Errorf(EUNAVAILABLE, "The repository is shutting down.")
	}
	for _, o := range ops {
		o.ctx = ctx
		o.done = make(chan struct{})
	}
	for chunk := range slices.Chunk(ops, c.maxBatch) {
		c.queued.Add(int64(len(chunk)))
		select {
		case c.queue <- chunk:
		case <-ctx.Done():
			c.queued.Add(-int64(len(chunk)))
			c.mu.RUnlock()
			return ctx.Err()
		}
	}
	c.mu.RUnlock()
	for _, o := range ops {
		<-o.done
	}
	return nil
}

// run submits one op and returns its outcome: the queueing error, or the
// op's own error.
func (c *committer) run(ctx context.Context, o *op) error {
	if err := c.submit(ctx, o); err != nil {
		return err
	}
	return o.err
}

// close stops accepting ops, commits what is queued and waits.
func (c *committer) close() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		close(c.queue)
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// gatherWait bounds how long a committer waits for a batch to fill once
// writes are arriving concurrently (as PostgreSQL's commit_delay does).
const gatherWait = 500 * time.Microsecond

func (c *committer) loop() {
	defer c.wg.Done()
	batch := make([]*op, 0, c.maxBatch)
	var held []*op // a chunk that did not fit in the previous batch
	last := 1      // size of the previous batch: more than 1 means concurrent writers
	for {
		first := held
		held = nil
		if first == nil {
			var ok bool
			if first, ok = <-c.queue; !ok {
				return
			}
			c.queued.Add(-int64(len(first)))
		}
		batch = append(batch[:0], first...)
		var deadline <-chan time.Time
		var timer *time.Timer
		if last > 1 {
			// Writers are concurrent: wait a little for the batch to reach
			// twice the last size, since every commit costs an fsync and
			// the committer is the one serial stage. A lone writer never
			// waits.
			timer = time.NewTimer(gatherWait)
			deadline = timer.C
		}
		want := min(c.maxBatch, max(2*last, 2))
		// add takes a chunk into the batch, or holds it for the next one
		// when it does not fit; it reports whether the batch is full
		add := func(chunk []*op) bool {
			c.queued.Add(-int64(len(chunk)))
			if len(batch)+len(chunk) > c.maxBatch {
				held = chunk
				return true
			}
			batch = append(batch, chunk...)
			return false
		}
	drain:
		for len(batch) < c.maxBatch {
			select {
			case chunk, ok := <-c.queue:
				if !ok || add(chunk) {
					break drain
				}
				continue
			default:
			}
			if deadline == nil || len(batch) >= want {
				break
			}
			select {
			case chunk, ok := <-c.queue:
				if !ok || add(chunk) {
					break drain
				}
			case <-deadline:
				break drain
			}
		}
		if timer != nil {
			timer.Stop()
		}
		last = len(batch)
		c.commit(batch)
	}
}

// commit runs a batch in one transaction, retrying without any op whose
// apply failed, and then releases every op.
func (c *committer) commit(batch []*op) {
	pending := make([]*op, 0, len(batch))
	for _, o := range batch {
		if err := o.ctx.Err(); err != nil {
			o.err = err // the client left before its op started
			close(o.done)
			continue
		}
		pending = append(pending, o)
	}
	// Writes are buffered across the batch (buffer.go). If a flush fails
	// (the final one, or one that an op's read ran first), no single op can
	// be blamed, so the batch runs again unbuffered, where a failing op is
	// found and dropped.
	buffered := true
	// a batch of creates alone first runs beside the other committers'
	// (see ParallelStorage); whatever fails there runs again alone, where
	// the failing op is found as below
	shared := c.par != nil && allParallel(pending)
	watch := &jobWatch{}
	for len(pending) > 0 {
		start := c.now()
		failed := -1
		flushFailed := false
		update := c.store.Update
		if shared {
			update = c.par.UpdateParallel
		}
		err := update(context.Background(), func(wtx WriteTx) error {
			ctx := context.Background()
			// the sequence numbers are taken when the first op passes its
			// check: a batch in which every op fails writes nothing and
			// rolls back, with no commit and no gap in the sequence
			var seq int64
			var tx WriteTx = wtx
			var buf *bufferedTx
			if buffered {
				buf = newBufferedTx(wtx)
				tx = buf
			}
			watch.jobs = false // a retried batch starts over
			watch.WriteTx = tx
			tx = watch
			now := c.now()
			// a flush of the buffer may fail inside any op's check or
			// apply (most reads flush first); its error is the batch's,
			// not the op's
			bufFailed := func() bool {
				if buf != nil && buf.failed {
					flushFailed = true
					return true
				}
				return false
			}
			for i, o := range pending {
				o.err, o.audit = nil, nil
				if err := o.check(tx); err != nil {
					if bufFailed() {
						return err
					}
					o.err = err // nothing written: the batch goes on
					continue
				}
				if seq == 0 {
					var err error
					if seq, err = wtx.NextSeq(ctx, len(pending)); err != nil {
						return err
					}
				}
				if err := o.apply(tx, seq+int64(i), now); err != nil {
					if bufFailed() {
						return err
					}
					o.err, failed = err, i
					return errApply
				}
			}
			if seq == 0 {
				return errNothing
			}
			if buf == nil {
				return writeAudit(ctx, tx, pending, now)
			}
			// the buffered writes and the audit trail go to the server
			// together; a failure among them is the batch's
			if err := pipeline(ctx, wtx, func() error {
				if err := buf.flush(ctx); err != nil {
					return err
				}
				return writeAudit(ctx, tx, pending, now)
			}); err != nil {
				flushFailed = true
				return err
			}
			return nil
		})
		if shared && err != nil && !errors.Is(err, errNothing) {
			shared = false
			continue
		}
		if flushFailed && len(pending) > 1 {
			if c.observer != nil {
				c.observer.ObserveCommit(len(pending), c.now().Sub(start), err)
			}
			buffered = false
			continue
		}
		if errors.Is(err, errNothing) {
			err = nil // every op failed its check; each carries its error
		} else if c.observer != nil {
			c.observer.ObserveCommit(len(pending), c.now().Sub(start), err)
			if jo, ok := c.observer.(JobsObserver); ok && err == nil && watch.jobs {
				jo.ObserveJobs()
			}
		}
		if errors.Is(err, errApply) {
			close(pending[failed].done)
			pending = append(pending[:failed], pending[failed+1:]...)
			continue
		}
		for _, o := range pending {
			if err != nil && o.err == nil {
				o.err = err
			}
			close(o.done)
		}
		return
	}
}

// allParallel reports whether every op of a batch may commit beside other
// batches (op.parallel).
func allParallel(ops []*op) bool {
	for _, o := range ops {
		if !o.parallel {
			return false
		}
	}
	return true
}

// writeAudit appends the audit entries of a batch's ops in one call, so the
// trail costs the batch the same statements however many ops it holds.
func writeAudit(ctx context.Context, tx WriteTx, ops []*op, now time.Time) error {
	var entries []*AuditEntry
	for _, o := range ops {
		if o.err == nil {
			entries = append(entries, o.audit...)
		}
	}
	if len(entries) == 0 {
		return nil
	}
	stampAudit(entries, now)
	return tx.InsertAudit(ctx, entries)
}
