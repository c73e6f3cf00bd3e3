package shelfmark

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// JobResult is what a job produced. FinishJob stores it and removes the job
// in one transaction, so a job's effects are kept exactly once: a crash
// before the commit leaves the job to run again, and after it leaves
// nothing to redo.
type JobResult struct {
	// Format is what characterization found about the job's file.
	Format *Format
	// Derivatives are new files (their bytes already in the blob store)
	// for the file set that holds the job's file.
	Derivatives []*File
	// Docs are search documents to write (the text of a page).
	Docs []SearchDoc
	// Next lists queues in which to enqueue a job for the same file.
	Next []string
}

// ClaimJobs takes up to c.N ready jobs of c.Queue for c.Worker.
func (r *Repository) ClaimJobs(ctx context.Context, c Claim) ([]*Job, error) {
	if err := requireAdmin(ctx, "manage the job queues"); err != nil {
		return nil, err
	}
	var jobs []*Job
	err := r.store.UpdateQueue(ctx, func(tx WriteTx) error {
		var err error
		jobs, err = tx.ClaimJobs(ctx, c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim %s jobs: %w", c.Queue, err)
	}
	return jobs, nil
}

// FinishJob stores a job's result and removes the job, through the group
// committer (so the results of many quick jobs share one transaction). It
// fails with ECONFLICT, writing nothing, when the job is no longer held
// by its worker at its attempt: its lease ran out and it was handed on.
func (r *Repository) FinishJob(ctx context.Context, job *Job, res *JobResult) error {
	if err := requireAdmin(ctx, "manage the job queues"); err != nil {
		return err
	}
	if res == nil {
		res = &JobResult{}
	}
	var parent int64
	var subs []*op
	var derived []*AuditEntry // the audit entries of the derivatives
	if len(res.Derivatives) > 0 {
		keys, err := r.minter.Mint(ctx, len(res.Derivatives))
		if err != nil {
			return err
		}
		subs = make([]*op, len(res.Derivatives))
		for i, f := range res.Derivatives {
			subs[i] = &op{apply: func(tx WriteTx, seq int64, now time.Time) error {
				if parent == 0 {
					return Errorf(ENOTFOUND, "The file %s has no file set.", r.ids.Encode(job.Resource))
				}
				c, err := r.newCreation(&NewResource{Kind: KindFile, Visibility: Public, File: f, source: job.Resource}, keys[i], parent, 0)
				if err != nil {
					return err
				}
				o := c.op()
				// a derivative is made by the system; it is as visible as
				// the file set that holds it and the file it was made from
				o.ctx = WithCaller(ctx, SystemCaller("worker"))
				if err := o.apply(tx, seq, now); err != nil {
					return err
				}
				derived = append(derived, o.audit...)
				return nil
			}}
		}
	}
	o := &op{}
	*o = op{
		check: func(tx WriteTx) error {
			ctx := context.Background()
			held, err := tx.JobHeld(ctx, job.ID, job.Worker, job.Attempt)
			if err != nil {
				return err
			}
			if !held {
				return Errorf(ECONFLICT, "The %s job %d is no longer held by %s (attempt %d): its lease ended.", job.Queue, job.ID, job.Worker, job.Attempt)
			}
			if len(subs) > 0 {
				row, err := r.live(ctx, tx, job.Resource)
				if err != nil {
					return err
				}
				parent = row.Parent
			}
			return nil
		},
		apply: func(tx WriteTx, seq int64, now time.Time) error {
			ctx := context.Background()
			if res.Format != nil {
				if err := tx.SetFileFormats(ctx, []int64{job.Resource}, []*Format{res.Format}); err != nil {
					return err
				}
			}
			// the derivatives share the op's sequence number: they are
			// one change, made by one job
			derived = derived[:0]
			for _, s := range subs {
				if err := s.apply(tx, seq, now); err != nil {
					return err
				}
			}
			o.audit = append(o.audit, derived...)
			if len(res.Docs) > 0 {
				// the text of a page shows while the file it was made
				// from is in public view (SearchDoc.Access)
				docs := make([]SearchDoc, len(res.Docs))
				for i, d := range res.Docs {
					if d.Access == 0 && d.Key != d.Work {
						d.Access = job.Resource
					}
					docs[i] = d
				}
				if err := tx.PutSearchDocs(ctx, docs); err != nil {
					return err
				}
			}
			if len(res.Next) > 0 {
				next := make([]NewJob, len(res.Next))
				for i, q := range res.Next {
					next[i] = NewJob{Queue: q, Resource: job.Resource}
				}
				if err := tx.EnqueueJobs(ctx, next, now); err != nil {
					return err
				}
			}
			return tx.DeleteJobs(ctx, []int64{job.ID})
		},
	}
	if err := r.commit.run(ctx, o); err != nil {
		return fmt.Errorf("finish %s job %d: %w", job.Queue, job.ID, err)
	}
	return nil
}

// RetryJobLater puts a job that failed back in its queue, ready at runAt,
// unless its worker no longer holds it.
func (r *Repository) RetryJobLater(ctx context.Context, job *Job, runAt time.Time, cause error) error {
	return r.settleJob(ctx, job, func(tx WriteTx) error { return tx.RequeueJob(ctx, job.ID, runAt, jobError(cause)) })
}

// FailJob marks a job failed with its error, unless its worker no longer
// holds it. A failed job stays until it is retried (RetryFailedJobs).
func (r *Repository) FailJob(ctx context.Context, job *Job, cause error) error {
	return r.settleJob(ctx, job, func(tx WriteTx) error { return tx.FailJob(ctx, job.ID, jobError(cause)) })
}

// jobError is the message kept with a job: the whole error, for the
// operator, bounded.
func jobError(err error) string {
	msg := err.Error()
	if len(msg) > 4000 {
		msg = msg[:4000] + "…"
	}
	return strings.ToValidUTF8(msg, "?")
}

func (r *Repository) settleJob(ctx context.Context, job *Job, fn func(WriteTx) error) error {
	err := r.store.UpdateQueue(ctx, func(tx WriteTx) error {
		held, err := tx.JobHeld(ctx, job.ID, job.Worker, job.Attempt)
		if err != nil || !held {
			return err
		}
		return fn(tx)
	})
	if err != nil {
		return fmt.Errorf("settle %s job %d: %w", job.Queue, job.ID, err)
	}
	return nil
}

// RenewJobs moves the lease of the jobs worker holds among jobs to lease,
// so that a job that runs long (a tool waiting for a busy CPU) is not
// taken for lost, and returns how many it moved (those given up
// meanwhile are not). One statement, however many jobs the queues hold.
func (r *Repository) RenewJobs(ctx context.Context, worker string, jobs []*Job, lease time.Time) (int64, error) {
	if err := requireAdmin(ctx, "manage the job queues"); err != nil {
		return 0, err
	}
	if len(jobs) == 0 {
		return 0, nil
	}
	ids := make([]int64, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	var n int64
	err := r.store.UpdateQueue(ctx, func(tx WriteTx) error {
		var err error
		n, err = tx.RenewJobs(ctx, worker, ids, lease)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("renew the leases of %d jobs of %s: %w", len(jobs), worker, err)
	}
	return n, nil
}

// ReapJobs returns the jobs of workers that died (lease ended) to their
// queues, failing those that used their last attempt.
func (r *Repository) ReapJobs(ctx context.Context, maxAttempts map[string]int) (int64, error) {
	if err := requireAdmin(ctx, "manage the job queues"); err != nil {
		return 0, err
	}
	var n int64
	err := r.store.UpdateQueue(ctx, func(tx WriteTx) error {
		var err error
		n, err = tx.ReapJobs(ctx, r.now(), maxAttempts)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("reap jobs: %w", err)
	}
	return n, nil
}

// PauseQueue pauses (or, with paused false, resumes) a queue for every
// worker of the database.
func (r *Repository) PauseQueue(ctx context.Context, queue string, paused bool) error {
	if err := requireAdmin(ctx, "manage the job queues"); err != nil {
		return err
	}
	if !ValidQueue(queue) {
		return Errorf(EINVALID, "There is no queue %q; the queues are %v.", queue, Queues)
	}
	return r.store.Update(ctx, func(tx WriteTx) error { return tx.SetQueuePaused(ctx, queue, paused) })
}

// RetryFailedJobs puts failed jobs of queue (every queue when empty; only
// ids when given) back in their queues and returns how many.
func (r *Repository) RetryFailedJobs(ctx context.Context, queue string, ids []int64) (int64, error) {
	if err := requireAdmin(ctx, "manage the job queues"); err != nil {
		return 0, err
	}
	if queue != "" && !ValidQueue(queue) {
		return 0, Errorf(EINVALID, "There is no queue %q; the queues are %v.", queue, Queues)
	}
	var n int64
	err := r.store.Update(ctx, func(tx WriteTx) error {
		var err error
		n, err = tx.RetryJobs(ctx, queue, ids, r.now())
		return err
	})
	return n, err
}

// QueueCounts returns the state of every pipeline queue (including empty
// ones), in priority order.
func (r *Repository) QueueCounts(ctx context.Context) ([]QueueCount, error) {
	if err := requireAdmin(ctx, "manage the job queues"); err != nil {
		return nil, err
	}
	var counts []QueueCount
	err := r.store.View(ctx, func(tx ReadTx) error {
		var err error
		counts, err = tx.QueueCounts(ctx, r.now())
		return err
	})
	if err != nil {
		return nil, err
	}
	byName := map[string]QueueCount{}
	for _, c := range counts {
		byName[c.Queue] = c
	}
	out := make([]QueueCount, 0, len(Queues))
	for _, q := range Queues {
		c := byName[q]
		c.Queue = q
		out = append(out, c)
	}
	return out, nil
}

// ListJobs lists jobs (for example the failed ones of a queue).
func (r *Repository) ListJobs(ctx context.Context, f JobFilter) ([]*Job, error) {
	if err := requireAdmin(ctx, "manage the job queues"); err != nil {
		return nil, err
	}
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 100
	}
	var jobs []*Job
	err := r.store.View(ctx, func(tx ReadTx) error {
		var err error
		jobs, err = tx.Jobs(ctx, f)
		return err
	})
	return jobs, err
}

var _ JobQueue = (*Repository)(nil)

// FindFile returns the description of a live file and the key of the file
// set that holds it, in two reads (the pipeline's per-job lookup).
func (r *Repository) FindFile(ctx context.Context, key int64) (*File, int64, error) {
	var f *File
	var parent int64
	err := r.store.View(ctx, func(tx ReadTx) error {
		row, err := r.live(ctx, tx, key)
		if err != nil {
			return err
		}
		if row.Kind != KindFile {
			return Errorf(EINVALID, "%s is a %s, not a file.", r.ids.Encode(key), row.Kind)
		}
		parent = row.Parent
		f, err = tx.File(ctx, key)
		if err == nil && f == nil {
			err = Errorf(ENOTFOUND, "The file %s has no description.", r.ids.Encode(key))
		}
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("find file %s: %w", r.ids.Encode(key), err)
	}
	return f, parent, nil
}

// Parent returns the key of the parent of a live resource (0 for none).
func (r *Repository) Parent(ctx context.Context, key int64) (int64, error) {
	var parent int64
	err := r.store.View(ctx, func(tx ReadTx) error {
		row, err := r.live(ctx, tx, key)
		if err == nil {
			parent = row.Parent
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("find %s: %w", r.ids.Encode(key), err)
	}
	return parent, nil
}
