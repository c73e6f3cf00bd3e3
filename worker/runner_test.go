package worker

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// busyGate is a gate that always reports the foreground busy.
type busyGate struct{}

func (busyGate) Busy() bool { return true }

// TestRunnerReservedSlot: with characterize and text always holding more
// work than the slots can take and the gate reporting busy, derive jobs
// still run in their reserved slot, a steady share of the claims, while
// OCR stays deferred.
func TestRunnerReservedSlot(t *testing.T) {
	backends(t, func(t *testing.T, s *stack) {
		ctx := context.Background()
		const (
			fed     = 3000 // characterize and text jobs queued: more than the test lets run
			within  = 1000 // characterize jobs the test lets start …
			atLeast = 20   // … within which at least this many derive jobs must start
		)
		var jobs []shelfmark.NewJob
		for i := range int64(fed) {
			jobs = append(jobs, shelfmark.NewJob{Queue: shelfmark.QueueCharacterize, Resource: 1 + i},
				shelfmark.NewJob{Queue: shelfmark.QueueText, Resource: 1 + i})
		}
		for i := range int64(2 * atLeast) {
			jobs = append(jobs, shelfmark.NewJob{Queue: shelfmark.QueueDerive, Resource: 1 + i},
				shelfmark.NewJob{Queue: shelfmark.QueueOCR, Resource: 1 + i})
		}
		if err := s.store.Update(ctx, func(tx shelfmark.WriteTx) error {
			return tx.EnqueueJobs(ctx, jobs, time.Now())
		}); err != nil {
			t.Fatal(err)
		}
		var started [4]atomic.Int64
		count := func(i int) Handler {
			return func(context.Context, *shelfmark.Job) (*shelfmark.JobResult, error) {
				started[i].Add(1)
				return nil, nil
			}
		}
		handlers := map[string]Handler{
			shelfmark.QueueCharacterize: count(0),
			shelfmark.QueueDerive:       count(1),
			shelfmark.QueueText:         count(2),
			shelfmark.QueueOCR:          count(3),
		}
		// two cores' defaults, two slots in all: characterize alone could
		// take both
		r := NewRunner(s.repo, handlers, Options{Queues: DefaultQueues(2), Total: 2, Poll: 20 * time.Millisecond, Gate: busyGate{}})
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- r.Run(rctx) }()
		deadline := time.Now().Add(5 * time.Minute)
		for started[0].Load() < within && started[1].Load() < atLeast {
			if time.Now().After(deadline) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		c, d, x, o := started[0].Load(), started[1].Load(), started[2].Load(), started[3].Load()
		t.Logf("started: characterize %d, derive %d, text %d, ocr %d", c, d, x, o)
		if d < atLeast {
			t.Errorf("%d derive jobs started beside %d characterize jobs, want at least %d: derive starved", d, c, atLeast)
		}
		if c == 0 {
			t.Error("no characterize job started: the reserved slot starved the queue before it")
		}
		if c >= fed {
			t.Errorf("%d characterize jobs started: the queue ran dry, the test proves nothing", c)
		}
		if o != 0 {
			t.Errorf("%d OCR jobs started while the gate reported busy", o)
		}
	})
}

// TestRunnerReservedBudget: reserved slots never take every slot, so a
// runner with one slot keeps strict priority.
func TestRunnerReservedBudget(t *testing.T) {
	nop := func(context.Context, *shelfmark.Job) (*shelfmark.JobResult, error) { return nil, nil }
	handlers := map[string]Handler{shelfmark.QueueCharacterize: nop, shelfmark.QueueDerive: nop, shelfmark.QueueText: nop}
	queues := DefaultQueues(4)
	queues[2].Reserved = 2 // text
	for _, c := range []struct{ total, derive, text int }{{1, 0, 0}, {2, 1, 0}, {3, 1, 1}, {8, 1, 2}} {
		r := NewRunner(nil, handlers, Options{Queues: queues, Total: c.total})
		got := map[string]int{}
		for _, q := range r.queues {
			got[q.Name] = q.Reserved
		}
		if got[shelfmark.QueueDerive] != c.derive || got[shelfmark.QueueText] != c.text || got[shelfmark.QueueCharacterize] != 0 {
			t.Errorf("total %d: reserved %v, want derive %d, text %d", c.total, got, c.derive, c.text)
		}
	}
}

// outcomeLog records how each attempt ended.
type outcomeLog struct {
	mu       sync.Mutex
	outcomes []string
}

func (o *outcomeLog) ObserveJob(queue, outcome string, d time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.outcomes = append(o.outcomes, outcome)
}

func (o *outcomeLog) list() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.outcomes)
}

// TestRunnerRenewsLease: a job that runs several times as long as its
// lease (a tool waiting for a busy CPU) keeps it, renewed while it runs,
// though the runner reaps lapsed leases meanwhile; its result is stored.
// Without the renewals the reaper would hand it back and its result be
// refused ("lost").
func TestRunnerRenewsLease(t *testing.T) {
	backends(t, func(t *testing.T, s *stack) {
		ctx := context.Background()
		if err := s.store.Update(ctx, func(tx shelfmark.WriteTx) error {
			return tx.EnqueueJobs(ctx, []shelfmark.NewJob{{Queue: shelfmark.QueueDerive, Resource: 1}}, time.Now())
		}); err != nil {
			t.Fatal(err)
		}
		const renew, grace = 100 * time.Millisecond, time.Second
		var ran atomic.Int64
		handlers := map[string]Handler{shelfmark.QueueDerive: func(ctx context.Context, _ *shelfmark.Job) (*shelfmark.JobResult, error) {
			ran.Add(1)
			select { // three leases' worth of waiting
			case <-time.After(3 * (renew + grace)):
				return nil, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}}
		obs := &outcomeLog{}
		r := NewRunner(s.repo, handlers, Options{
			Queues: []QueueConfig{{Name: shelfmark.QueueDerive, Concurrency: 1, Timeout: 5 * time.Minute, MaxAttempts: 3}},
			Poll:   20 * time.Millisecond, Renew: renew, Grace: grace, Observer: obs,
		})
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- r.Run(rctx) }()
		deadline := time.Now().Add(2 * time.Minute)
		for len(obs.list()) == 0 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := obs.list(); len(got) != 1 || got[0] != "done" || ran.Load() != 1 {
			t.Fatalf("outcomes %v after %d attempts, want one attempt, done", got, ran.Load())
		}
		left, err := s.repo.ListJobs(ctx, shelfmark.JobFilter{Limit: 10})
		if err != nil || len(left) != 0 {
			t.Fatalf("jobs left %v, %v", left, err)
		}
	})
}

// alwaysBehind reports every queue over its backlog limit.
type alwaysBehind struct{}

func (alwaysBehind) Over(string) bool { return true }

// TestRunnerBehind: OCR whose queue is over its backlog limit runs past a
// gate that reports the foreground busy, one job at a time though the
// queue has two slots, until its jobs are done.
func TestRunnerBehind(t *testing.T) {
	backends(t, func(t *testing.T, s *stack) {
		ctx := context.Background()
		const n = 6
		var jobs []shelfmark.NewJob
		for i := range int64(n) {
			jobs = append(jobs, shelfmark.NewJob{Queue: shelfmark.QueueOCR, Resource: 1 + i})
		}
		if err := s.store.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.EnqueueJobs(ctx, jobs, time.Now()) }); err != nil {
			t.Fatal(err)
		}
		var running, most, done atomic.Int64
		ocr := func(context.Context, *shelfmark.Job) (*shelfmark.JobResult, error) {
			now := running.Add(1)
			for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
			}
			time.Sleep(20 * time.Millisecond)
			running.Add(-1)
			done.Add(1)
			return nil, nil
		}
		queues := DefaultQueues(4) // OCR: two at once
		r := NewRunner(s.repo, map[string]Handler{shelfmark.QueueOCR: ocr}, Options{Queues: queues, Total: 4, Poll: 10 * time.Millisecond, Gate: busyGate{}, Behind: alwaysBehind{}})
		rctx, stop := context.WithCancel(ctx)
		exited := make(chan error, 1)
		go func() { exited <- r.Run(rctx) }()
		deadline := time.Now().Add(2 * time.Minute)
		for done.Load() < n && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		stop()
		if err := <-exited; err != nil {
			t.Fatal(err)
		}
		if done.Load() != n || most.Load() != 1 {
			t.Errorf("%d of %d OCR jobs done past the busy gate, at most %d at once; want all, one at a time", done.Load(), n, most.Load())
		}
	})
}
