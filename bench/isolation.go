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

// IsolationConfig configures the isolation scenario (brief §5, rule R5):
// ingest with an idle queue, then the same ingest while OCRJobs OCR jobs
// are queued and running.
type IsolationConfig struct {
	Works   int // works ingested in each phase (default 100,000)
	OCRJobs int // OCR jobs queued before the second phase (default 10,000)
	Seed    uint64
	// PauseOCR keeps the OCR queue paused during the busy phase: a control
	// run that separates the cost of jobs merely queued from that of OCR
	// running.
	PauseOCR bool
	// Pipeline runs the jobs; its Repo and Blobs must be the scenario's.
	Pipeline *worker.Pipeline
	// Progress, when set, is told the stage and the count done.
	Progress func(stage string, done, total int)
}

// IsolationResult holds the scenario's own figures beside its report.
type IsolationResult struct {
	Report *Report
	// Idle and Busy are the ingest runs with an idle queue and with the
	// OCR backlog.
	Idle, Busy *Report
	// OCRDone is how many OCR jobs finished during the busy ingest, and
	// OCRAfter how many were still outstanding when it ended.
	OCRDone, OCRAfter int64
}

// RunIsolation runs the job runner of serve (every queue, the default
// limits for this machine) throughout, and ingests c.Works patents (the
// patents scenario without PDFs and TIFFs: metadata and a 4 KB XML file
// each, so each work also makes a characterize and a text job) twice:
// first with an otherwise idle queue, then after c.OCRJobs OCR jobs on
// scanned page images were queued. The report's rate is the busy ingest's,
// its raw limit the idle ingest's, so fraction_of_limit is the ratio the
// brief asks for (≥ 0.9).
func RunIsolation(ctx context.Context, repo *shelfmark.Repository, blobs shelfmark.BlobStore, c IsolationConfig) (*IsolationResult, error) {
	if c.Works <= 0 {
		c.Works = 100000
	}
	if c.OCRJobs <= 0 {
		c.OCRJobs = 10000
	}
	progress := func(stage string, done, total int) {
		if c.Progress != nil {
			c.Progress(stage, done, total)
		}
	}
	var ocrDone atomic.Int64
	r := worker.NewRunner(repo, c.Pipeline.Handlers(), worker.Options{Observer: observerFunc(func(queue, outcome string, d time.Duration) {
		if queue == shelfmark.QueueOCR && outcome == "done" {
			ocrDone.Add(1)
		}
	})})
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan error, 1)
	go func() { done <- r.Run(rctx) }()
	defer func() { stop(); <-done }()

	ingestPhase := func(stage string, first int) (*Report, error) {
		return RunPatents(ctx, repo, blobs, PatentsConfig{Works: c.Works, First: first, NoMedia: true, Seed: c.Seed,
			Progress: func(s ingest.Stats) { progress(stage, int(s.Stored), c.Works) }})
	}
	idle, err := ingestPhase("ingest, idle queue", 0)
	if err != nil {
		return nil, err
	}
	// let the first phase's own jobs finish, so both phases start alike
	if err := waitQueues(ctx, repo, func(string, int, int) {}, nil); err != nil {
		return nil, err
	}

	// the OCR backlog: c.OCRJobs page images (one scanned page, stored
	// once), each the file of a work, queued straight for OCR
	page := gen.PageImage(c.Seed, 0, []string{"SHELFMARK", "HARBOUR", "COMPASS", "LIGHTHOUSE"})
	b, err := blobs.Put(ctx, bytes.NewReader(page), shelfmark.PutOptions{})
	if err != nil {
		return nil, err
	}
	if err := repo.PauseQueue(ctx, shelfmark.QueueCharacterize, true); err != nil {
		return nil, err
	}
	var fileKeys []int64
	const perWork = 100
	for lo := 0; lo < c.OCRJobs; lo += perWork {
		hi := min(lo+perWork, c.OCRJobs)
		ids, err := repo.MintIDs(ctx, 1+2*(hi-lo))
		if err != nil {
			return nil, err
		}
		g := &shelfmark.NewGroup{SourceKey: fmt.Sprintf("bench:isolation:%d:%d", c.Seed, lo)}
		g.Resources = append(g.Resources, &shelfmark.NewResource{ID: ids[0], Kind: shelfmark.KindWork})
		for i := lo; i < hi; i++ {
			fs, f := ids[1+2*(i-lo)], ids[2+2*(i-lo)]
			g.Resources = append(g.Resources,
				&shelfmark.NewResource{ID: fs, Kind: shelfmark.KindFileSet, Parent: ids[0]},
				&shelfmark.NewResource{ID: f, Kind: shelfmark.KindFile, Parent: fs,
					File: &shelfmark.File{Name: fmt.Sprintf("page%d.png", i), MediaType: "image/png", Size: b.Size, SHA256: b.Digests[shelfmark.SHA256], Use: shelfmark.UseOriginal}})
			k, _ := f.Key()
			fileKeys = append(fileKeys, k)
		}
		if _, errs := repo.CreateGroups(ctx, []*shelfmark.NewGroup{g}); errs[0] != nil {
			return nil, errs[0]
		}
		progress("queue OCR jobs", hi, c.OCRJobs)
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
	if c.PauseOCR {
		if err := repo.PauseQueue(ctx, shelfmark.QueueOCR, true); err != nil {
			return nil, err
		}
	}
	r.Notify()
	// wait until OCR is running, so the busy phase meets it at full speed
	for i := 0; i < 100 && ocrDone.Load() == 0 && !c.PauseOCR; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	before := ocrDone.Load()
	busy, err := ingestPhase("ingest, 10,000 OCR jobs queued", c.Works)
	if err != nil {
		return nil, err
	}
	res := &IsolationResult{Idle: idle, Busy: busy, OCRDone: ocrDone.Load() - before}
	counts, err := repo.QueueCounts(ctx)
	if err != nil {
		return nil, err
	}
	for _, qc := range counts {
		if qc.Queue == shelfmark.QueueOCR {
			res.OCRAfter = qc.Queued + qc.Running
		}
	}
	rep := *busy
	rep.Scenario = "isolation"
	rep.RawLimitPerS = idle.RatePerS
	rep.RawLimitWhat = "the same ingest with an idle queue, in the same run"
	rep.FractionLimit = busy.RatePerS / idle.RatePerS
	rep.Params = map[string]any{"works_per_phase": c.Works, "ocr_jobs": c.OCRJobs, "cores": runtime.NumCPU(),
		"idle_rate_per_s": idle.RatePerS, "busy_rate_per_s": busy.RatePerS, "ocr_done_during_busy_ingest": res.OCRDone,
		"ocr_outstanding_after": res.OCRAfter, "ocr_paused": c.PauseOCR, "idle_flatness": idle.Flatness, "busy_flatness": busy.Flatness}
	res.Report = &rep
	return res, nil
}

// waitQueues waits until the queues (all when names is nil) have no queued
// or running jobs.
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
			if names == nil || want[qc.Queue] {
				left += qc.Queued + qc.Running
			}
		}
		if left == 0 {
			return nil
		}
		progress("jobs", 0, int(left))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
