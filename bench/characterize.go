package bench

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench/gen"
	"github.com/shelfmark/shelfmark/worker"
)

// CharacterizeConfig configures the characterize scenario (docs/design.md):
// Files mixed PDF/TIFF/JPEG/PNG/XML/text files identified by the job
// pipeline.
type CharacterizeConfig struct {
	Files int // default 20,000
	// Concurrency of the characterize queue (default: the pipeline's
	// default for this machine).
	Concurrency int
	Seed        uint64
	// Identify is the format identifier (package siegfried).
	Identify worker.Identifier
	// Progress, when set, is told the stage and the files done.
	Progress func(stage string, done, total int)
}

// mixedFile returns file i of the mix: six kinds in turn, each file's
// bytes unique.
func mixedFile(seed uint64, i int) (name, mediaType string, data []byte) {
	switch i % 6 {
	case 0:
		return fmt.Sprintf("f%d.pdf", i), "application/pdf", gen.PDF(seed, i, fmt.Sprintf("Document %d: a report on shelves and marks.", i))
	case 1:
		return fmt.Sprintf("f%d.tif", i), "image/tiff", gen.TIFF(seed, i, 120, 160)
	case 2:
		return fmt.Sprintf("f%d.jpg", i), "image/jpeg", gen.JPEG(seed, i, 160, 120)
	case 3:
		return fmt.Sprintf("f%d.png", i), "image/png", gen.PNG(seed, i, 160, 120)
	case 4:
		return fmt.Sprintf("f%d.xml", i), "application/xml", gen.PatentXML(seed, i)
	}
	return fmt.Sprintf("f%d.txt", i), "text/plain", fmt.Appendf(nil, "Note %d about the catalogue of a library, written in plain text.\n", i)
}

// RunCharacterize stores c.Files generated files of six formats (one work
// of 100 pages per 100 files), measures the raw limit (the same blobs
// identified in process by the same identifier on every core, without
// the queue or the database), then starts a runner that works only the
// characterize queue and reports the files identified per second until
// the queue is empty, by time bucket.
func RunCharacterize(ctx context.Context, repo *shelfmark.Repository, blobs shelfmark.BlobStore, c CharacterizeConfig) (*Report, error) {
	if c.Files <= 0 {
		c.Files = 20000
	}
	rep := &Report{Scenario: "characterize", Backend: repo.Storage().Backend(), Started: time.Now().UTC(),
		Params: map[string]any{"files": c.Files}}
	progress := func(stage string, done, total int) {
		if c.Progress != nil {
			c.Progress(stage, done, total)
		}
	}
	type stored struct {
		name string
		sha  string
		size int64
	}
	files := make([]stored, 0, c.Files)
	_, err := storePages(ctx, repo, blobs, fmt.Sprintf("bench:characterize:%d", c.Seed), c.Files, func(i int) (*shelfmark.File, error) {
		name, mt, data := mixedFile(c.Seed, i)
		b, err := blobs.Put(ctx, bytes.NewReader(data), shelfmark.PutOptions{Deferred: true})
		if err != nil {
			return nil, err
		}
		sha := b.Digests[shelfmark.SHA256]
		files = append(files, stored{name, sha, b.Size})
		return &shelfmark.File{Name: name, MediaType: mt, Size: b.Size, SHA256: sha, Use: shelfmark.UseOriginal}, nil
	}, func(done int) { progress("store files", done, c.Files) })
	if err != nil {
		return nil, err
	}

	// raw limit: the identifier alone over the same blobs, on every core
	cores := runtime.NumCPU()
	var next atomic.Int64
	var failed atomic.Int64
	var wg sync.WaitGroup
	rawStart := time.Now()
	for w := 0; w < cores; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(files) {
					return
				}
				rc, err := blobs.Open(ctx, files[i].sha)
				if err == nil {
					_, err = c.Identify.Identify(ctx, rc, files[i].name, files[i].size)
					rc.Close()
				}
				if err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	rep.RawLimitPerS = float64(len(files)) / time.Since(rawStart).Seconds()
	rep.RawLimitWhat = fmt.Sprintf("the same blobs identified in process on %d goroutines, without the queue or the database", cores)
	if failed.Load() > 0 {
		return nil, fmt.Errorf("raw identification failed for %d files", failed.Load())
	}

	// the pipeline: only the characterize queue is worked
	q := worker.DefaultQueues(cores)[0]
	if c.Concurrency > 0 {
		q.Concurrency = c.Concurrency
	}
	rep.Params["concurrency"], rep.Params["batch"] = q.Concurrency, q.Batch
	p := &worker.Pipeline{Repo: repo, Blobs: blobs, Identify: c.Identify}
	var outcomes sync.Map
	r := worker.NewRunner(repo, p.Handlers(), worker.Options{Queues: []worker.QueueConfig{q}, Total: q.Concurrency,
		Poll: 20 * time.Millisecond, Observer: observerFunc(func(queue, outcome string, d time.Duration) {
			v, _ := outcomes.LoadOrStore(outcome, new(atomic.Int64))
			v.(*atomic.Int64).Add(1)
		})})
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- r.Run(rctx) }()
	samples := []progressSample{{}}
	var left int64 = int64(c.Files)
	for left > 0 {
		select {
		case <-ctx.Done():
			stop()
			<-done
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		counts, err := repo.QueueCounts(ctx)
		if err != nil {
			stop()
			<-done
			return nil, err
		}
		left = counts[0].Queued + counts[0].Running
		samples = append(samples, progressSample{time.Since(start), int64(c.Files) - left})
		progress("identify", c.Files-int(left), c.Files)
	}
	elapsed := time.Since(start)
	stop()
	if err := <-done; err != nil {
		return nil, err
	}
	rep.Items, rep.Seconds = int64(c.Files), elapsed.Seconds()
	rep.RatePerS = float64(c.Files) / rep.Seconds
	rep.FractionLimit = rep.RatePerS / rep.RawLimitPerS
	rep.Steps = bucketSteps(samples, elapsed, 20)
	rep.Flatness = flatness(rep.Steps)
	outcomes.Range(func(k, v any) bool {
		rep.Params["jobs_"+k.(string)] = v.(*atomic.Int64).Load()
		if k.(string) != "done" {
			rep.Errors += v.(*atomic.Int64).Load()
		}
		return true
	})
	// what the identified files enqueued next (derive, text, ocr)
	counts, err := repo.QueueCounts(ctx)
	if err != nil {
		return nil, err
	}
	for _, qc := range counts[1:] {
		rep.Params["enqueued_"+qc.Queue] = qc.Queued
	}
	return rep, nil
}

// observerFunc adapts a function to worker.Observer.
type observerFunc func(queue, outcome string, d time.Duration)

// ObserveJob implements worker.Observer.
func (f observerFunc) ObserveJob(queue, outcome string, d time.Duration) { f(queue, outcome, d) }
