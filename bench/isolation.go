package bench

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench/gen"
	"github.com/shelfmark/shelfmark/ingest"
	"github.com/shelfmark/shelfmark/worker"
)

// IsolationConfig configures the isolation scenario (docs/design.md, rule R5):
// ingest with an idle queue and while OCRJobs OCR jobs run, at the same
// size of the repository.
type IsolationConfig struct {
	Works   int // works ingested with the OCR jobs running, and as many without (default 100,000 each)
	OCRJobs int // OCR jobs queued (default 10,000)
	// Rounds is how many times the scenario switches between idle and busy
	// (default 10), so both see the repository at the same sizes.
	Rounds int
	Seed   uint64
	// PauseOCR keeps the OCR queue paused in the busy segments too: a
	// control run that shows the noise of the measure (and that jobs merely
	// queued cost ingest nothing).
	PauseOCR bool
	// BusyCores is the runner's CPU gate (serve's --busy-cores; 0 runs OCR
	// whatever the load).
	BusyCores float64
	// Pipeline runs the jobs; its Repo and Blobs must be the scenario's.
	Pipeline *worker.Pipeline
	// Progress, when set, is told the stage and the count done.
	Progress func(stage string, done, total int)
}

// IsolationResult holds the scenario's own figures beside its report.
type IsolationResult struct {
	Report *Report
	// IdlePerS and BusyPerS are the ingest rates without and with OCR
	// running, over all segments of each kind.
	IdlePerS, BusyPerS float64
	// OCRDone is how many OCR jobs finished during the busy segments, and
	// OCRAfter how many were still outstanding at the end.
	OCRDone, OCRAfter int64
	// OCRQuiet is how many OCR jobs finished in the 10 s after the ingest
	// and the jobs it made were done.
	OCRQuiet int64
}

// RunIsolation runs the job runner of serve (every queue, the default
// limits for this machine) throughout. It queues c.OCRJobs OCR jobs on
// scanned page images, then ingests patents (the patents scenario without
// PDFs and TIFFs: metadata and a 4 KB XML file each, so each work also
// makes a characterize and a text job) in 2 × c.Rounds segments of equal
// size, alternating idle (the OCR queue paused: nothing of it runs) and
// busy (OCR running), idle first in even rounds and busy first in odd
// ones, so that both kinds meet the repository at the same sizes. The
// report's rate is the busy ingest's, its raw limit the idle ingest's, so
// fraction_of_limit is the ratio the target asks for (≥ 0.9).
func RunIsolation(ctx context.Context, repo *shelfmark.Repository, blobs shelfmark.BlobStore, c IsolationConfig) (*IsolationResult, error) {
	if c.Works <= 0 {
		c.Works = 100000
	}
	if c.OCRJobs <= 0 {
		c.OCRJobs = 10000
	}
	if c.Rounds <= 0 {
		c.Rounds = 10
	}
	progress := func(stage string, done, total int) {
		if c.Progress != nil {
			c.Progress(stage, done, total)
		}
	}
	var ocrDone atomic.Int64
	gate := worker.NewCPUGate(c.BusyCores)
	opts := worker.Options{Observer: observerFunc(func(queue, outcome string, d time.Duration) {
		if queue == shelfmark.QueueOCR && outcome == "done" {
			ocrDone.Add(1)
		}
	})}
	if c.BusyCores > 0 {
		opts.Gate = gate
	}
	r := worker.NewRunner(repo, c.Pipeline.Handlers(), opts)
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { _ = gate.Run(rctx) }()
	go func() { done <- r.Run(rctx) }()
	defer func() { stop(); <-done }()

	// the OCR backlog: c.OCRJobs page images (one scanned page, stored
	// once), each the file of a work, queued straight for OCR
	if err := repo.PauseQueue(ctx, shelfmark.QueueOCR, true); err != nil {
		return nil, err
	}
	page := gen.PageImage(c.Seed, 0, []string{"SHELFMARK", "HARBOUR", "COMPASS", "LIGHTHOUSE"})
	b, err := blobs.Put(ctx, bytes.NewReader(page), shelfmark.PutOptions{})
	if err != nil {
		return nil, err
	}
	if err := repo.PauseQueue(ctx, shelfmark.QueueCharacterize, true); err != nil {
		return nil, err
	}
	fileKeys, err := storePages(ctx, repo, blobs, fmt.Sprintf("bench:isolation:%d", c.Seed), c.OCRJobs, func(i int) (*shelfmark.File, error) {
		return &shelfmark.File{Name: fmt.Sprintf("page%d.png", i), MediaType: "image/png", Size: b.Size, SHA256: b.Digests[shelfmark.SHA256], Use: shelfmark.UseOriginal}, nil
	}, func(done int) { progress("queue OCR jobs", done, c.OCRJobs) })
	if err != nil {
		return nil, err
	}
	// they skip identification (we know what they are): their characterize
	// jobs are replaced by OCR jobs in one transaction
	err = repo.Storage().Update(ctx, func(tx shelfmark.WriteTx) error {
		var ids []int64
		var after int64
		for {
			jobs, err := tx.Jobs(ctx, shelfmark.JobFilter{Queue: shelfmark.QueueCharacterize, After: after, Limit: 10000})
			if err != nil {
				return err
			}
			for _, j := range jobs {
				ids = append(ids, j.ID)
				after = j.ID
			}
			if len(jobs) < 10000 {
				break
			}
		}
		if err := tx.DeleteJobs(ctx, ids); err != nil {
			return err
		}
		jobs := make([]shelfmark.NewJob, len(fileKeys))
		for i, k := range fileKeys {
			jobs[i] = shelfmark.NewJob{Queue: shelfmark.QueueOCR, Resource: k}
		}
		return tx.EnqueueJobs(ctx, jobs, time.Now())
	})
	if err != nil {
		return nil, err
	}
	if err := repo.PauseQueue(ctx, shelfmark.QueueCharacterize, false); err != nil {
		return nil, err
	}

	rep := &Report{Scenario: "isolation", Backend: repo.Storage().Backend(), Started: time.Now().UTC()}
	per := c.Works / c.Rounds
	var idleItems, busyItems int64
	var idleSecs, busySecs float64
	var kinds []string
	next := 0
	res := &IsolationResult{}
	for round := 0; round < c.Rounds; round++ {
		order := []bool{false, true} // busy?
		if round%2 == 1 {
			order = []bool{true, false}
		}
		for _, busy := range order {
			if err := repo.PauseQueue(ctx, shelfmark.QueueOCR, !busy || c.PauseOCR); err != nil {
				return nil, err
			}
			before := ocrDone.Load()
			if busy && !c.PauseOCR {
				r.Notify()
				// meet OCR running, not starting
				for i := 0; i < 100; i++ {
					counts, err := repo.QueueCounts(ctx)
					if err != nil {
						return nil, err
					}
					if counts[3].Running > 0 {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
			kind := "idle"
			if busy {
				kind = "busy"
			}
			seg, err := RunPatents(ctx, repo, blobs, PatentsConfig{Works: per, First: next, NoMedia: true, Seed: c.Seed,
				Progress: func(s ingest.Stats) {
					progress(fmt.Sprintf("round %d/%d, %s", round+1, c.Rounds, kind), int(s.Stored), per)
				}})
			if err != nil {
				return nil, err
			}
			next += per
			rep.Steps = append(rep.Steps, Step{Items: seg.Items, Seconds: seg.Seconds, RatePerS: seg.RatePerS, Errors: seg.Errors})
			kinds = append(kinds, kind)
			rep.Errors += seg.Errors
			if busy {
				busyItems, busySecs = busyItems+seg.Items, busySecs+seg.Seconds
				res.OCRDone += ocrDone.Load() - before
			} else {
				idleItems, idleSecs = idleItems+seg.Items, idleSecs+seg.Seconds
			}
		}
	}
	// once ingest and the jobs it made are done, OCR runs: count what it
	// does in 10 s
	if err := repo.PauseQueue(ctx, shelfmark.QueueOCR, false); err != nil {
		return nil, err
	}
	if err := waitQueues(ctx, repo, progress, []string{shelfmark.QueueCharacterize, shelfmark.QueueDerive, shelfmark.QueueText}); err != nil {
		return nil, err
	}
	r.Notify()
	before := ocrDone.Load()
	time.Sleep(10 * time.Second)
	res.OCRQuiet = ocrDone.Load() - before
	counts, err := repo.QueueCounts(ctx)
	if err != nil {
		return nil, err
	}
	res.OCRAfter = counts[3].Queued + counts[3].Running
	res.IdlePerS, res.BusyPerS = float64(idleItems)/idleSecs, float64(busyItems)/busySecs
	rep.Items, rep.Seconds, rep.RatePerS = busyItems, busySecs, res.BusyPerS
	rep.RawLimitPerS = res.IdlePerS
	rep.RawLimitWhat = "the same ingest with nothing of the OCR queue running, in alternating segments of the same run"
	rep.FractionLimit = res.BusyPerS / res.IdlePerS
	rep.Flatness = flatness(rep.Steps)
	rep.Params = map[string]any{"works_per_kind": c.Works, "ocr_jobs": c.OCRJobs, "rounds": c.Rounds, "cores": runtime.NumCPU(),
		"idle_rate_per_s": res.IdlePerS, "busy_rate_per_s": res.BusyPerS, "ocr_done_during_busy_ingest": res.OCRDone,
		"ocr_outstanding_after": res.OCRAfter, "ocr_done_in_10s_after_ingest": res.OCRQuiet, "ocr_paused": c.PauseOCR, "busy_cores": c.BusyCores, "segment_kinds": kinds}
	res.Report = rep
	return res, nil
}

// waitQueues waits until the named queues have no queued or running jobs.
func waitQueues(ctx context.Context, repo *shelfmark.Repository, progress func(string, int, int), names []string) error {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	for {
		counts, err := repo.QueueCounts(ctx)
		if err != nil {
			return err
		}
		var left int64
		for _, qc := range counts {
			if want[qc.Queue] {
				left += qc.Queued + qc.Running
			}
		}
		if left == 0 {
			return nil
		}
		progress("jobs left by the ingest", 0, int(left))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
