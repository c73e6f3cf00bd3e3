package storagetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// jobsOf lists every job, in id order.
func jobsOf(t *testing.T, e *env, f shelfmark.JobFilter) []*shelfmark.Job {
	t.Helper()
	f.Limit = 1000
	jobs, err := e.repo.ListJobs(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// page creates a work with one file set holding one file, and returns the
// file set and the file.
func page(t *testing.T, e *env, f *shelfmark.File) (work, fs, file *shelfmark.Resource) {
	t.Helper()
	ctx := context.Background()
	work = rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	fs = rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work.ID}))
	file = rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID, File: f}))
	return work, fs, file
}

func sha(i int) string { return fmt.Sprintf("%064x", i) }

// testJobsEnqueued: storing an original file enqueues its characterize
// job in the same transaction; derivatives, external files and failed
// creates enqueue nothing; a group enqueues one job per page.
func testJobsEnqueued(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	_, fs, file := page(t, e, &shelfmark.File{Name: "a.tif", MediaType: "image/tiff", Size: 1, SHA256: sha(1), Use: "original"})
	jobs := jobsOf(t, e, shelfmark.JobFilter{})
	if len(jobs) != 1 {
		t.Fatalf("%d jobs after one file, want 1", len(jobs))
	}
	key, _ := e.repo.IDs().Key(file.ID)
	if j := jobs[0]; j.Queue != shelfmark.QueueCharacterize || j.Resource != key || j.State != shelfmark.JobQueued || j.Attempt != 0 {
		t.Fatalf("job %+v", j)
	}
	// a derivative and an external file get no job
	rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
		File: &shelfmark.File{Name: "a.jpg", MediaType: "image/jpeg", Size: 1, SHA256: sha(2), Use: shelfmark.UseThumbnail}}))
	rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
		File: &shelfmark.File{Name: "b.jp2", MediaType: "image/jp2", Size: -1, Use: "original", ExternalURL: "https://example.org/b.jp2"}}))
	// a file whose create fails (its parent is not a file set) leaves no job
	if _, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: file.ID,
		File: &shelfmark.File{Name: "c.tif", MediaType: "image/tiff", Size: 1, SHA256: sha(3), Use: "original"}}); err == nil {
		t.Fatal("a file under a file was stored")
	}
	if n := len(jobsOf(t, e, shelfmark.JobFilter{})); n != 1 {
		t.Fatalf("%d jobs, want still 1", n)
	}
	// a group of 7 pages: 7 jobs, written with the group
	_, errs := e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{book(t, e, "dir:jobs/a", 7, "")})
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	if n := len(jobsOf(t, e, shelfmark.JobFilter{Queue: shelfmark.QueueCharacterize})); n != 8 {
		t.Fatalf("%d characterize jobs, want 8", n)
	}
	counts, err := e.repo.QueueCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(counts) != len(shelfmark.Queues) || counts[0].Queue != shelfmark.QueueCharacterize || counts[0].Queued != 8 || counts[0].Ready != 8 || counts[3].Queued != 0 {
		t.Fatalf("counts %+v", counts)
	}
}

func claim(t *testing.T, e *env, queue, worker string, n int, now time.Time) []*shelfmark.Job {
	t.Helper()
	jobs, err := e.repo.ClaimJobs(context.Background(), shelfmark.Claim{Queue: queue, Worker: worker, N: n, Now: now, Lease: now.Add(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// stillEnv opens an env whose engine clock stands still, and returns the
// time at which every job it enqueues is ready. A job is ready from the
// engine's time when it was enqueued; a test that claims "one second after
// the test began" misses the jobs enqueued later than that, which on a
// loaded machine (120 pages on PostgreSQL under CPU contention) is most of
// them.
func stillEnv(t *testing.T, open Opener) (*env, time.Time) {
	base := time.Now()
	e := newEnv(t, open, shelfmark.RepositoryOptions{Now: func() time.Time { return base }})
	return e, base.Add(time.Second)
}

// testJobsClaim: claims take the oldest ready jobs, never the same job
// twice (also under concurrent claims), and nothing from a paused queue.
func testJobsClaim(t *testing.T, open Opener) {
	e, now := stillEnv(t, open)
	ctx := context.Background()
	var want []int64
	for i := 0; i < 5; i++ {
		_, _, f := page(t, e, &shelfmark.File{Name: "p.png", MediaType: "image/png", Size: 1, SHA256: sha(i), Use: "original"})
		k, _ := e.repo.IDs().Key(f.ID)
		want = append(want, k)
	}
	a := claim(t, e, shelfmark.QueueCharacterize, "w1", 3, now)
	b := claim(t, e, shelfmark.QueueCharacterize, "w2", 3, now)
	if len(a) != 3 || len(b) != 2 {
		t.Fatalf("claimed %d and %d of 5", len(a), len(b))
	}
	for i, j := range append(a, b...) {
		if j.Resource != want[i] || j.State != shelfmark.JobRunning || j.Attempt != 1 || j.Lease.IsZero() {
			t.Fatalf("claim %d: %+v, want resource %d", i, j, want[i])
		}
	}
	if a[0].Worker != "w1" || b[0].Worker != "w2" {
		t.Fatal("workers not recorded")
	}
	if more := claim(t, e, shelfmark.QueueCharacterize, "w3", 10, now); len(more) != 0 {
		t.Fatalf("claimed %d running jobs again", len(more))
	}
	// pause: nothing is claimed, counts say paused; resume: claims again
	for i := 10; i < 14; i++ {
		page(t, e, &shelfmark.File{Name: "p.png", MediaType: "image/png", Size: 1, SHA256: sha(i), Use: "original"})
	}
	if err := e.repo.PauseQueue(ctx, shelfmark.QueueCharacterize, true); err != nil {
		t.Fatal(err)
	}
	if err := e.repo.PauseQueue(ctx, "nosuch", true); shelfmark.ErrorCode(err) != shelfmark.EINVALID {
		t.Fatalf("pausing an unknown queue: %v", err)
	}
	if got := claim(t, e, shelfmark.QueueCharacterize, "w1", 10, now); len(got) != 0 {
		t.Fatalf("claimed %d from a paused queue", len(got))
	}
	counts, _ := e.repo.QueueCounts(ctx)
	if c := counts[0]; !c.Paused || c.Queued != 4 || c.Running != 5 {
		t.Fatalf("counts while paused %+v", c)
	}
	if err := e.repo.PauseQueue(ctx, shelfmark.QueueCharacterize, false); err != nil {
		t.Fatal(err)
	}
	if got := claim(t, e, shelfmark.QueueCharacterize, "w1", 10, now); len(got) != 4 {
		t.Fatalf("claimed %d after resume, want 4", len(got))
	}

	// concurrent claims by 4 workers over 120 jobs: each job exactly once
	for i := 100; i < 220; i++ {
		page(t, e, &shelfmark.File{Name: "p.png", MediaType: "image/png", Size: 1, SHA256: sha(i), Use: "original"})
	}
	var mu sync.Mutex
	seen := map[int64]string{}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(name string) {
			defer wg.Done()
			for {
				jobs, err := e.repo.ClaimJobs(ctx, shelfmark.Claim{Queue: shelfmark.QueueCharacterize, Worker: name, N: 7, Now: now, Lease: now.Add(time.Minute)})
				if err != nil {
					errs <- err
					return
				}
				if len(jobs) == 0 {
					return
				}
				mu.Lock()
				for _, j := range jobs {
					if other, dup := seen[j.ID]; dup {
						errs <- fmt.Errorf("job %d claimed by %s and %s", j.ID, other, name)
					}
					seen[j.ID] = name
				}
				mu.Unlock()
			}
		}(fmt.Sprint("c", w))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(seen) != 120 {
		left := jobsOf(t, e, shelfmark.JobFilter{State: shelfmark.JobQueued})
		ready := 0
		for _, j := range left {
			if !j.RunAt.After(now) {
				ready++
			}
		}
		t.Fatalf("claimed %d of 120; %d left queued, %d of them ready at the claims' time", len(seen), len(left), ready)
	}
}

// testJobsFinish: a result is stored with the job's removal in one
// transaction: the format, derivative files under the same file set, and
// the next jobs; a worker whose lease was lost stores nothing.
func testJobsFinish(t *testing.T, open Opener) {
	e, now := stillEnv(t, open)
	ctx := context.Background()
	_, fs, file := page(t, e, &shelfmark.File{Name: "scan.tif", MediaType: "image/tiff", Size: 1, SHA256: sha(1), Use: "original"})
	jobs := claim(t, e, shelfmark.QueueCharacterize, "w1", 1, now)
	if len(jobs) != 1 {
		t.Fatal("no job")
	}
	format := &shelfmark.Format{PRONOM: "fmt/353", Name: "Tagged Image File Format", MediaType: "image/tiff", Width: 2480, Height: 3508, Note: "byte match"}
	thumb := &shelfmark.File{Name: "scan.thumbnail.jpg", MediaType: "image/jpeg", Size: 10, SHA256: sha(2), Use: shelfmark.UseThumbnail}
	// another worker holding a stale claim stores nothing
	stale := *jobs[0]
	stale.Worker = "w0"
	if err := e.repo.FinishJob(ctx, &stale, &shelfmark.JobResult{Format: format}); shelfmark.ErrorCode(err) != shelfmark.ECONFLICT {
		t.Fatalf("finishing a job not held: %v", err)
	}
	if got := rs(t)(e.repo.FindResource(ctx, file.ID)); got.File.Format != nil {
		t.Fatal("a stale worker's result was stored")
	}
	res := &shelfmark.JobResult{Format: format, Derivatives: []*shelfmark.File{thumb}, Next: []string{shelfmark.QueueDerive, shelfmark.QueueOCR}}
	if err := e.repo.FinishJob(ctx, jobs[0], res); err != nil {
		t.Fatal(err)
	}
	got := rs(t)(e.repo.FindResource(ctx, file.ID))
	if got.File.Format == nil || *got.File.Format != *format {
		t.Fatalf("format %+v, want %+v", got.File.Format, format)
	}
	kids := listAllChildren(t, e, fs.ID, 10)
	if len(kids) != 2 {
		t.Fatalf("%d files in the file set, want the original and its thumbnail", len(kids))
	}
	d := rs(t)(e.repo.FindResource(ctx, kids[1].ID))
	if d.File.Use != shelfmark.UseThumbnail || d.File.SHA256 != thumb.SHA256 {
		t.Fatalf("derivative %+v", d.File)
	}
	left := jobsOf(t, e, shelfmark.JobFilter{})
	if len(left) != 2 || left[0].Queue != shelfmark.QueueDerive || left[1].Queue != shelfmark.QueueOCR || left[0].Resource != jobs[0].Resource {
		t.Fatalf("jobs after finishing %+v", left)
	}
	// enqueueing a job that exists is a no-op
	if err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.EnqueueJobs(ctx, []shelfmark.NewJob{{Queue: shelfmark.QueueOCR, Resource: jobs[0].Resource}}, now)
	}); err != nil {
		t.Fatal(err)
	}
	if n := len(jobsOf(t, e, shelfmark.JobFilter{})); n != 2 {
		t.Fatalf("%d jobs after a duplicate enqueue", n)
	}
}

// testJobsRetry: a failed attempt waits for its backoff; a failed job is
// listed with its error until retried; lost jobs of dead workers return to
// the queue, or fail after their last attempt.
func testJobsRetry(t *testing.T, open Opener) {
	e, now := stillEnv(t, open)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		page(t, e, &shelfmark.File{Name: "p.png", MediaType: "image/png", Size: 1, SHA256: sha(i), Use: "original"})
	}
	jobs := claim(t, e, shelfmark.QueueCharacterize, "w1", 3, now)
	if err := e.repo.RetryJobLater(ctx, jobs[0], now.Add(time.Hour), fmt.Errorf("tool crashed")); err != nil {
		t.Fatal(err)
	}
	if err := e.repo.FailJob(ctx, jobs[1], fmt.Errorf("corrupt input")); err != nil {
		t.Fatal(err)
	}
	if got := claim(t, e, shelfmark.QueueCharacterize, "w1", 3, now); len(got) != 0 {
		t.Fatalf("claimed %d before the backoff ended", len(got))
	}
	later := claim(t, e, shelfmark.QueueCharacterize, "w1", 3, now.Add(2*time.Hour))
	if len(later) != 1 || later[0].ID != jobs[0].ID || later[0].Attempt != 2 || later[0].Error != "tool crashed" {
		t.Fatalf("after backoff %+v", *later[0])
	}
	failed := jobsOf(t, e, shelfmark.JobFilter{State: shelfmark.JobFailed})
	if len(failed) != 1 || failed[0].ID != jobs[1].ID || failed[0].Error != "corrupt input" {
		t.Fatalf("failed jobs %+v", failed)
	}
	counts, _ := e.repo.QueueCounts(ctx)
	if c := counts[0]; c.Failed != 1 || c.Running != 2 || c.Queued != 0 {
		t.Fatalf("counts %+v", c)
	}
	if n, err := e.repo.RetryFailedJobs(ctx, shelfmark.QueueCharacterize, nil); err != nil || n != 1 {
		t.Fatalf("retry failed: %d %v", n, err)
	}
	again := claim(t, e, shelfmark.QueueCharacterize, "w2", 3, now)
	if len(again) != 1 || again[0].ID != jobs[1].ID || again[0].Attempt != 1 {
		t.Fatalf("retried job %+v", again)
	}

	// reaping: a worker that died holding jobs (their lease ended)
	// (the engine's clock is moved past the dead workers' leases)
	base := time.Now()
	var clock atomic.Int64
	clock.Store(base.UnixMicro())
	e2 := newEnv(t, open, shelfmark.RepositoryOptions{Now: func() time.Time { return time.UnixMicro(clock.Load()) }})
	for i := 0; i < 2; i++ {
		page(t, e2, &shelfmark.File{Name: "p.png", MediaType: "image/png", Size: 1, SHA256: sha(i), Use: "original"})
	}
	dead := claim(t, e2, shelfmark.QueueCharacterize, "dead", 2, base)
	clock.Store(base.Add(time.Hour).UnixMicro())
	if len(dead) != 2 {
		t.Fatalf("claimed %d, want 2", len(dead))
	}
	if n, err := e2.repo.ReapJobs(ctx, map[string]int{shelfmark.QueueCharacterize: 2}); err != nil || n != 2 {
		t.Fatalf("reaped %d, %v", n, err)
	}
	back := jobsOf(t, e2, shelfmark.JobFilter{State: shelfmark.JobQueued})
	if len(back) != 2 || back[0].Error == "" {
		t.Fatalf("reaped jobs %+v", back)
	}
	// the dead worker's late result is refused
	if err := e2.repo.FinishJob(ctx, dead[0], &shelfmark.JobResult{}); shelfmark.ErrorCode(err) != shelfmark.ECONFLICT {
		t.Fatalf("late result: %v", err)
	}
	// second attempt, lost again: out of attempts, failed
	if got := claim(t, e2, shelfmark.QueueCharacterize, "dead2", 2, base.Add(time.Hour)); len(got) != 2 {
		t.Fatalf("claimed %d reaped jobs, want 2", len(got))
	}
	clock.Store(base.Add(2 * time.Hour).UnixMicro())
	if n, err := e2.repo.ReapJobs(ctx, map[string]int{shelfmark.QueueCharacterize: 2}); err != nil || n != 2 {
		t.Fatalf("reaped %d, %v", n, err)
	}
	if f := jobsOf(t, e2, shelfmark.JobFilter{State: shelfmark.JobFailed}); len(f) != 2 {
		t.Fatalf("%d failed after the last attempt was lost, want 2", len(f))
	}
}

// testJobsRenew: a worker moves the lease of the jobs it still holds (and
// only those), so that a reap past the first lease leaves them running;
// once renewals stop, the reaper takes them back.
func testJobsRenew(t *testing.T, open Opener) {
	ctx := context.Background()
	base := time.Now()
	var clock atomic.Int64
	clock.Store(base.UnixMicro())
	e := newEnv(t, open, shelfmark.RepositoryOptions{Now: func() time.Time { return time.UnixMicro(clock.Load()) }})
	for i := 0; i < 3; i++ {
		page(t, e, &shelfmark.File{Name: "p.png", MediaType: "image/png", Size: 1, SHA256: sha(i), Use: "original"})
	}
	jobs := claim(t, e, shelfmark.QueueCharacterize, "w1", 3, base) // leased for a minute
	if len(jobs) != 3 {
		t.Fatalf("claimed %d, want 3", len(jobs))
	}
	// one is given up before the renewal: it is not renewed
	if err := e.repo.RetryJobLater(ctx, jobs[2], base.Add(10*time.Hour), fmt.Errorf("tool crashed")); err != nil {
		t.Fatal(err)
	}
	lease := base.Add(2 * time.Hour)
	if n, err := e.repo.RenewJobs(ctx, "w1", jobs, lease); err != nil || n != 2 {
		t.Fatalf("renewed %d, %v; want 2", n, err)
	}
	// another worker cannot move them
	if n, err := e.repo.RenewJobs(ctx, "w2", jobs, base.Add(100*time.Hour)); err != nil || n != 0 {
		t.Fatalf("another worker renewed %d, %v; want 0", n, err)
	}
	if n, err := e.repo.RenewJobs(ctx, "w1", nil, lease); err != nil || n != 0 {
		t.Fatalf("renewing none: %d, %v", n, err)
	}
	// an hour on, past the first lease: nothing to reap
	clock.Store(base.Add(time.Hour).UnixMicro())
	if n, err := e.repo.ReapJobs(ctx, map[string]int{shelfmark.QueueCharacterize: 3}); err != nil || n != 0 {
		t.Fatalf("reaped %d renewed jobs, %v", n, err)
	}
	running := jobsOf(t, e, shelfmark.JobFilter{State: shelfmark.JobRunning})
	if len(running) != 2 {
		t.Fatalf("%d running after the reap, want 2", len(running))
	}
	for _, j := range running {
		if !j.Lease.Equal(lease.Truncate(time.Microsecond)) || j.Worker != "w1" || j.Attempt != 1 {
			t.Fatalf("renewed job %+v, want lease %v", *j, lease)
		}
	}
	// the worker still holds them: its result is stored
	if err := e.repo.FinishJob(ctx, jobs[0], &shelfmark.JobResult{}); err != nil {
		t.Fatalf("result of a renewed job: %v", err)
	}
	// renewals stopped (the worker died): past the renewed lease, reaped
	clock.Store(base.Add(3 * time.Hour).UnixMicro())
	if n, err := e.repo.ReapJobs(ctx, map[string]int{shelfmark.QueueCharacterize: 3}); err != nil || n != 1 {
		t.Fatalf("reaped %d, %v; want 1", n, err)
	}
	if err := e.repo.FinishJob(ctx, jobs[1], &shelfmark.JobResult{}); shelfmark.ErrorCode(err) != shelfmark.ECONFLICT {
		t.Fatalf("late result after the renewed lease ended: %v", err)
	}
}
