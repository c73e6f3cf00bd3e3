package storagetest

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

func testSequence(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	var last int64
	w := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	last = w.Seq
	for i := 0; i < 5; i++ {
		got := rs(t)(e.repo.UpdateResource(ctx, w.ID, shelfmark.ResourceUpdate{Add: []shelfmark.Statement{title(string(rune('a' + i)))}}))
		if got.Seq <= last {
			t.Fatalf("seq did not increase: %d after %d", got.Seq, last)
		}
		last = got.Seq
	}
	// concurrent creates get distinct sequence numbers
	var mu sync.Mutex
	seqs := map[int64]bool{}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				r, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seqs[r.Seq] || r.Seq <= last {
					t.Errorf("seq %d repeated or not after %d", r.Seq, last)
				}
				seqs[r.Seq] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
}

// testConcurrentMint: 8 goroutines, each with its own minter (as separate
// processes would have), mint 10,000 keys each in small blocks: no key is
// handed out twice.
func testConcurrentMint(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	const goroutines, each = 8, 10000
	results := make([][]int64, goroutines)
	var wg sync.WaitGroup
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			m := shelfmark.NewMinter(e.store, 97) // odd block size: many allocations
			for len(results[g]) < each {
				keys, err := m.Mint(ctx, 1+len(results[g])%5)
				if err != nil {
					t.Error(err)
					return
				}
				results[g] = append(results[g], keys...)
			}
		}(g)
	}
	wg.Wait()
	seen := make(map[shelfmark.ID]bool, goroutines*each)
	for _, keys := range results {
		for _, k := range keys {
			id := e.repo.IDs().Encode(k)
			if seen[id] {
				t.Fatalf("id %s minted twice", id)
			}
			seen[id] = true
		}
	}
	if len(seen) < goroutines*each {
		t.Fatalf("minted %d ids, want at least %d", len(seen), goroutines*each)
	}
}

type batchObserver struct {
	commits, ops, maxOps atomic.Int64
}

func (b *batchObserver) ObserveCommit(ops int, _ time.Duration, _ error) {
	b.commits.Add(1)
	b.ops.Add(int64(ops))
	for {
		cur := b.maxOps.Load()
		if int64(ops) <= cur || b.maxOps.CompareAndSwap(cur, int64(ops)) {
			return
		}
	}
}

// jobsObserver counts commits, and those that enqueued jobs.
type jobsObserver struct {
	commits, jobs atomic.Int64
}

func (o *jobsObserver) ObserveCommit(_ int, _ time.Duration, err error) {
	if err == nil {
		o.commits.Add(1)
	}
}

func (o *jobsObserver) ObserveJobs() { o.jobs.Add(1) }

// testCommitJobsObserved: a commit observer that is a JobsObserver is told
// of the commits that enqueued jobs and of no other: a work's metadata or a
// thumbnail (a derivative, processed by no job) enqueues none, an original
// its identification; a batch whose op enqueued a job and another failed
// counts once, for the commit that stored it.
func testCommitJobsObserved(t *testing.T, open Opener) {
	obs := &jobsObserver{}
	e := newEnv(t, open, shelfmark.RepositoryOptions{Observer: obs})
	ctx := context.Background()
	step := func(what string, wantJobs int64, f func()) {
		t.Helper()
		c, j := obs.commits.Load(), obs.jobs.Load()
		f()
		if dc, dj := obs.commits.Load()-c, obs.jobs.Load()-j; dc == 0 || dj != wantJobs {
			t.Fatalf("%s: %d commits, %d told of jobs, want %d", what, dc, dj, wantJobs)
		}
	}
	var w, fs *shelfmark.Resource
	step("a work", 0, func() {
		w = rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{title("observed")}}))
		fs = rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}))
	})
	file := func(use string) *shelfmark.NewResource {
		return &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID, File: &shelfmark.File{
			Name: "p." + use, MediaType: "image/jpeg", Size: 1, SHA256: strings.Repeat("c", 64), Use: use}}
	}
	step("a thumbnail", 0, func() { rs(t)(e.repo.CreateResource(ctx, file(shelfmark.UseThumbnail))) })
	step("an original", 1, func() { rs(t)(e.repo.CreateResource(ctx, file(shelfmark.UseOriginal))) })
	step("an original beside a failing create", 1, func() {
		_, errs := e.repo.CreateResources(ctx, []*shelfmark.NewResource{file(shelfmark.UseOriginal),
			{Kind: shelfmark.KindFile, Parent: "nosuchid", File: &shelfmark.File{Name: "x", MediaType: "text/plain", SHA256: strings.Repeat("d", 64), Use: shelfmark.UseOriginal}}})
		if errs[0] != nil || errs[1] == nil {
			t.Fatalf("errors %v", errs)
		}
	})
}

// testGroupCommit: many concurrent writers are acknowledged through fewer
// transactions than writes, and every acknowledged write is readable.
func testGroupCommit(t *testing.T, open Opener) {
	obs := &batchObserver{}
	e := newEnv(t, open, shelfmark.RepositoryOptions{Observer: obs})
	ctx := context.Background()
	const clients, each = 32, 20
	ids := make(chan shelfmark.ID, clients*each)
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				r, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: sampleMetadata(54)})
				if err != nil {
					t.Error(err)
					return
				}
				ids <- r.ID
			}
		}()
	}
	wg.Wait()
	close(ids)
	n := 0
	for id := range ids {
		n++
		if got := rs(t)(e.repo.FindResource(ctx, id)); len(got.Metadata) != 54 {
			t.Fatalf("%s has %d statements", id, len(got.Metadata))
		}
	}
	if n != clients*each {
		t.Fatalf("%d acknowledged", n)
	}
	if obs.ops.Load() != clients*each || obs.commits.Load() >= clients*each || obs.maxOps.Load() < 2 {
		t.Fatalf("%d ops in %d commits (largest %d): writes were not grouped", obs.ops.Load(), obs.commits.Load(), obs.maxOps.Load())
	}
	t.Logf("%d writes in %d commits, largest batch %d", obs.ops.Load(), obs.commits.Load(), obs.maxOps.Load())
	// a cancelled client's queued write is not performed
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err := e.repo.CreateResource(cctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
	if err == nil {
		t.Fatal("write with a cancelled context succeeded")
	}
}
