package setup

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/siegfried"
	"github.com/shelfmark/shelfmark/worker"
)

// WorkerConfig holds the job settings shared by serve and worker.
type WorkerConfig struct {
	queues      []string
	concurrency map[string]int
	timeouts    map[string]string
	total       int
	grace       time.Duration
	busyCores   float64
	maxPixels   int64
	maxBytes    int64
	backlog     map[string]int64
}

// Register adds the job flags (--queues, --concurrency, --job-timeout,
// --jobs, --busy-cores, --max-image-*, --lease-grace) to f.
func (c *WorkerConfig) Register(f *pflag.FlagSet) {
	f.StringSliceVar(&c.queues, "queues", shelfmark.Queues, "job queues this process works, in priority order ("+strings.Join(shelfmark.Queues, ",")+"); other machines may work the rest")
	f.StringToIntVar(&c.concurrency, "concurrency", nil, "jobs of a queue run at once, for example ocr=2,derive=1 (default: characterize=2×cores, derive=cores, the others cores/2)")
	f.StringToStringVar(&c.timeouts, "job-timeout", nil, "wall-clock ceiling of one attempt of a job of a queue, for example ocr=20m (defaults: characterize 20s, derive 30m, text 30m, ocr 1h; the tools a job runs are limited by the CPU time they use, not by waiting for a CPU)")
	f.IntVar(&c.total, "jobs", 0, "jobs run at once over all queues (0: twice the number of cores; OCR runs at idle CPU priority)")
	f.Float64Var(&c.busyCores, "busy-cores", worker.DefaultBusyCores, "OCR starts no new job while this process uses more CPU than this many cores (ingest, API, identification); 0 never holds it back")
	f.Int64Var(&c.maxPixels, "max-image-pixels", worker.DefaultMaxPixels, "derivatives and OCR refuse a file holding an image (any page or frame) of more pixels (width × height, read from its headers) as a possible decompression bomb")
	f.Int64Var(&c.maxBytes, "max-image-bytes", 0, fmt.Sprintf("derivatives and OCR refuse a file holding an image (any page or frame) that would take more bytes decoded (pixels × channels × bytes a sample, read from its headers) as a possible decompression bomb (0: %d bytes for each pixel --max-image-pixels allows, %d by default)", worker.DefaultBytesPerPixel, worker.DefaultBytesPerPixel*worker.DefaultMaxPixels))
	f.StringToInt64Var(&c.backlog, "backlog-limit", nil, fmt.Sprintf("the most jobs a queue may hold (queued and running, for every server and worker of the database), as queue=N,...: past it the API's uploads and the deposit form are refused with 503 and Retry-After, and OCR runs a job even while the process is busy, until the queue is back within it; 0 lifts a queue's limit, and a paused queue never counts (default %d per core for each queue)", shelfmark.DefaultBacklogPerCore))
	f.DurationVar(&c.grace, "lease-grace", 30*time.Second, "a job held by a worker that stopped (killed, machine lost) is taken back this long after its time limit")
}

// DefaultWorkerConfig is the job settings of flags left at their
// defaults, with concurrency (jobs of a queue at once) set for the queues
// it names; the benchmarks run the job runner with it.
func DefaultWorkerConfig(concurrency map[string]int) WorkerConfig {
	return WorkerConfig{concurrency: concurrency, grace: 30 * time.Second,
		busyCores: worker.DefaultBusyCores, maxPixels: worker.DefaultMaxPixels}
}

// Queues returns the queues --queues names (nil: all of them).
func (c *WorkerConfig) Queues() []string { return c.queues }

// queueConfigs turns the flags into the runner's queues.
func (c *WorkerConfig) queueConfigs() ([]worker.QueueConfig, error) {
	defaults := map[string]worker.QueueConfig{}
	for _, q := range worker.DefaultQueues(runtime.NumCPU()) {
		defaults[q.Name] = q
	}
	for q := range c.concurrency {
		if !shelfmark.ValidQueue(q) {
			return nil, fmt.Errorf("--concurrency: there is no queue %q", q)
		}
	}
	for q := range c.timeouts {
		if !shelfmark.ValidQueue(q) {
			return nil, fmt.Errorf("--job-timeout: there is no queue %q", q)
		}
	}
	names := c.queues
	if names == nil {
		names = shelfmark.Queues
	}
	var out []worker.QueueConfig
	for _, name := range names {
		q, ok := defaults[name]
		if !ok {
			return nil, fmt.Errorf("--queues: there is no queue %q (the queues are %s)", name, strings.Join(shelfmark.Queues, ", "))
		}
		if n, ok := c.concurrency[name]; ok {
			if n < 0 {
				return nil, fmt.Errorf("--concurrency %s=%d: must be 0 or more", name, n)
			}
			q.Concurrency = n
		}
		if v, ok := c.timeouts[name]; ok {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("--job-timeout %s=%s: not a duration such as 90s or 10m", name, v)
			}
			q.Timeout = d
		}
		out = append(out, q)
	}
	// priority follows the pipeline's order, whatever order was given
	prio := map[string]int{}
	for i, q := range shelfmark.Queues {
		prio[q] = i
	}
	sort.SliceStable(out, func(i, j int) bool { return prio[out[i].Name] < prio[out[j].Name] })
	return out, nil
}

// imageLimits sets the image limits of the flags on tools (0 leaves a
// limit at its default), refusing a negative one.
func (c *WorkerConfig) imageLimits(tools worker.Tools) (worker.Tools, error) {
	if c.maxPixels < 0 {
		return tools, fmt.Errorf("--max-image-pixels %d: must be 0 (the default) or more", c.maxPixels)
	}
	if c.maxBytes < 0 {
		return tools, fmt.Errorf("--max-image-bytes %d: must be 0 (the default) or more", c.maxBytes)
	}
	tools.MaxPixels, tools.MaxImageBytes = c.maxPixels, c.maxBytes
	return tools, nil
}

// NoBacklogLimits is the --backlog-limit value that lifts the limit of
// every queue (each queue=0), for a server that runs no jobs and that no
// worker joins (a benchmark's or a test's): its queues are never worked,
// so under the default limits its uploads would be refused once a queue
// held its limit.
func NoBacklogLimits() string {
	qs := make([]string, len(shelfmark.Queues))
	for i, q := range shelfmark.Queues {
		qs[i] = q + "=0"
	}
	return strings.Join(qs, ",")
}

// BacklogGate returns the gate of the --backlog-limit flags over repo's
// job counts (the default limit for the queues they leave out), shared by
// a server's uploads and its job runner.
func (c *WorkerConfig) BacklogGate(repo *shelfmark.Repository) (*shelfmark.BacklogGate, error) {
	limits := map[string]int64{}
	for _, q := range shelfmark.Queues {
		limits[q] = int64(shelfmark.DefaultBacklogPerCore * runtime.NumCPU())
	}
	for q, n := range c.backlog {
		if !shelfmark.ValidQueue(q) {
			return nil, fmt.Errorf("--backlog-limit: there is no queue %q; the queues are %s", q, strings.Join(shelfmark.Queues, ", "))
		}
		if n < 0 {
			return nil, fmt.Errorf("--backlog-limit %s=%d: a limit is 0 (none) or more", q, n)
		}
		limits[q] = n
	}
	return &shelfmark.BacklogGate{Limits: limits, Count: func(ctx context.Context) ([]shelfmark.QueueCount, error) {
		return repo.QueueCounts(shelfmark.WithCaller(ctx, shelfmark.SystemCaller("backlog")))
	}}, nil
}

// JobRunner is the job runner of a process with the CPU gate that holds
// OCR back while the process is busy.
type JobRunner struct {
	*worker.Runner
	gate *worker.CPUGate
}

// Run runs the gate and the runner until ctx ends.
func (j JobRunner) Run(ctx context.Context) error {
	if j.gate != nil {
		go func() { _ = j.gate.Run(ctx) }()
	}
	return j.Runner.Run(ctx)
}

// NewRunner builds the job runner of a process; backlog, when set, lets
// OCR run past the CPU gate while its queue is over its limit.
func NewRunner(repo *shelfmark.Repository, blobs shelfmark.BlobStore, c WorkerConfig, backlog *shelfmark.BacklogGate, obs worker.Observer, log *slog.Logger) (JobRunner, error) {
	queues, err := c.queueConfigs()
	if err != nil {
		return JobRunner{}, err
	}
	tools, err := c.imageLimits(PipelineTools(log))
	if err != nil {
		return JobRunner{}, err
	}
	id, err := siegfried.New()
	if err != nil {
		return JobRunner{}, fmt.Errorf("load the format signatures: %w", err)
	}
	p := &worker.Pipeline{Repo: repo, Blobs: blobs, Identify: id, Tools: tools}
	opts := worker.Options{Queues: queues, Total: c.total, Grace: c.grace, Observer: obs, Logger: log}
	if backlog != nil {
		opts.Behind = backlog
	}
	var gate *worker.CPUGate
	if c.busyCores > 0 {
		gate = worker.NewCPUGate(c.busyCores)
		opts.Gate = gate
	}
	return JobRunner{Runner: worker.NewRunner(repo, p.Handlers(), opts), gate: gate}, nil
}

// PipelineTools finds the pipeline's external programs, warns of those
// missing, and runs them at idle CPU priority, so text extraction and OCR
// only use CPU that ingest and reads leave; derivatives run at nice 10,
// which keeps them a small share of a busy CPU (thumbnails during a long
// ingest).
func PipelineTools(log *slog.Logger) worker.Tools {
	tools := worker.FindTools()
	tools.Limits.Idle = true
	tools.DeriveNice = worker.DefaultDeriveNice
	var missing []string
	for name, path := range map[string]string{"vipsthumbnail": tools.Vipsthumbnail, "vips": tools.Vips, "pdftoppm": tools.Pdftoppm, "pdftotext": tools.Pdftotext, "tesseract": tools.Tesseract} {
		if path == "" {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		log.Warn("tools not found: thumbnails fall back to pure Go where they can; deep-zoom tiles, OCR and PDF text need them (apt-get install libvips-tools poppler-utils tesseract-ocr)", "missing", missing)
	}
	return tools
}

// background runs a process's long-lived loops (the OAI-PMH projector, the
// search indexer, the job runner) until stop.
type background struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// runner is a loop of the background.
type runner interface {
	Run(ctx context.Context) error
}

func startBackground(ctx context.Context, log *slog.Logger, loops map[string]runner) *background {
	bctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b := &background{cancel: cancel}
	for name, l := range loops {
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			if err := l.Run(bctx); err != nil && bctx.Err() == nil {
				log.Error("background loop stopped", "loop", name, "err", err)
			}
		}()
	}
	return b
}

// stop ends the loops and waits for them.
func (b *background) stop() {
	b.cancel()
	b.wg.Wait()
}

// notifier wakes loops after each successful commit: the OAI-PMH
// projector and the search indexer to follow changes, and jobs, after a
// commit that enqueued jobs (shelfmark.JobsObserver), the job runner to
// claim them.
type notifier struct {
	commits []interface{ Notify() }
	jobs    []interface{ Notify() }
}

// ObserveCommit implements shelfmark.CommitObserver.
func (n *notifier) ObserveCommit(_ int, _ time.Duration, err error) {
	if err == nil {
		for _, l := range n.commits {
			l.Notify()
		}
	}
}

// ObserveJobs implements shelfmark.JobsObserver.
func (n *notifier) ObserveJobs() {
	for _, l := range n.jobs {
		l.Notify()
	}
}
