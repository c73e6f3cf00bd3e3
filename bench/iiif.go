package bench

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench/gen"
	shttp "github.com/shelfmark/shelfmark/http"
	"github.com/shelfmark/shelfmark/http/admission"
	"github.com/shelfmark/shelfmark/ingest"
	"github.com/shelfmark/shelfmark/worker"
)

// IIIFConfig configures the iiif scenario: Plum's whole job (a directory
// of page images ingested into one book until its manifest lists every
// page with its image service), the pyramids against vips alone, the disk
// the derivatives take, tiles served to concurrent viewers against the
// raw reads of the same bytes, and the manifest of the book, uncached and
// cached.
type IIIFConfig struct {
	Pages int // pages of a book (default 1,200)
	// Books is how many books the viewers read (default 10): the
	// ingested one and Books-1 more, each its own work with its own
	// pages, whose files are the first book's (the same blobs).
	Books int
	// Viewers request tiles at once (default 16); Requests is how many
	// tiles they ask for in all (default 20,000), within Duration
	// (default 60 s), after Warmup untimed requests (default Requests/10,
	// at most 2,000).
	Viewers  int
	Requests int
	Duration time.Duration
	Warmup   int
	// Regions is how many random regions at random sizes the viewers ask
	// for after the tiles (default Requests/4), within Duration: images
	// the Image API composes from the pyramids (level 2), not stored.
	Regions int
	// ManifestRequests is how many times each kind of manifest request is
	// timed (default 200), one at a time.
	ManifestRequests int
	// ScanWidth and ScanHeight, when set, make the pages colour JPEG
	// scans of that size (gen.JPEG) instead of gen.PageImage's 1000×1400
	// bilevel PNG pages with words OCR reads back.
	ScanWidth, ScanHeight int
	// Derive lists the derive queue's concurrencies to run Plum's job
	// with, one fresh book each (default: the queue's default for this
	// machine, and the number of cores when that differs).
	Derive []int
	// NewRunner builds the job runner as serve builds it, with the derive
	// queue's concurrency set and obs told of every job's end.
	NewRunner func(derive int, obs worker.Observer) (JobRunner, error)
	// Vips is the vips program, for the pyramids of vips alone (empty:
	// not measured); VipsPages bounds how many pages it cuts per
	// concurrency (default 200).
	Vips      string
	VipsPages int
	// Timeout bounds each run of Plum's job (default 30 minutes).
	Timeout time.Duration
	Seed    uint64
	// Progress, when set, is told what is happening and how far it is.
	Progress func(stage string, done, total int)
	// Logger receives the server's log (default: nowhere).
	Logger *slog.Logger
}

// JobRunner is a process's job runner, as serve runs it.
type JobRunner interface {
	Run(ctx context.Context) error
	Notify()
}

// IIIFRun is one run of Plum's job: a directory of page images ingested
// as one book, with the pipeline's workers running in process, until the
// book's manifest lists every page with its image service.
type IIIFRun struct {
	// DeriveConcurrency is the derive queue's concurrency in this run.
	DeriveConcurrency int `json:"derive_concurrency"`
	Pages             int `json:"pages"`
	// Seconds runs from the start of the ingest to the first manifest
	// that lists every page with its image service; PagesPerS is Pages
	// over it.
	Seconds   float64 `json:"seconds"`
	PagesPerS float64 `json:"pages_per_s"`
	// IngestSeconds is when the ingest had stored the book (its pages
	// committed), TiledSeconds when the last page's derive job ended.
	IngestSeconds float64 `json:"ingest_seconds"`
	TiledSeconds  float64 `json:"tiled_seconds"`
	// PyramidPerS is pages derived (thumbnail, access copy, tiles) per
	// second from the book's commit to the last derive job's end.
	PyramidPerS float64 `json:"pyramid_per_s"`
	// VipsAlonePerS is `vips dzsave` alone on the same images with the
	// same flags, as many at once as DeriveConcurrency (0: not measured),
	// over VipsPages of them.
	VipsAlonePerS float64 `json:"vips_alone_per_s"`
	VipsPages     int     `json:"vips_pages"`
	// PyramidOverVips is PyramidPerS over VipsAlonePerS.
	PyramidOverVips float64 `json:"pyramid_over_vips"`
	// DeriveFailed counts derive attempts that did not end done; OCRDone
	// OCR jobs that finished before the end (OCR is deferred while the
	// process is busy).
	DeriveFailed int64 `json:"derive_failed"`
	OCRDone      int64 `json:"ocr_done"`
	// OCRDropped is the OCR jobs still queued at the end, dropped so that
	// the next run starts with none.
	OCRDropped int `json:"ocr_dropped"`
	// DeriveJobMS is the time of one derive job (two vipsthumbnail runs,
	// vips dzsave, the repack, storing the three files and the job's
	// result).
	DeriveJobMS Latency `json:"derive_job_ms"`
	// Stored and Tiled are the pages stored (their bytes in the content
	// store) and derived, sampled over the run: [seconds, count] pairs,
	// for the charts (the report keeps their last counts).
	Stored [][2]float64 `json:"-"`
	Tiled  [][2]float64 `json:"-"`
	// Derived is the count of derive jobs done at the end.
	Derived int64 `json:"derived"`
}

// IIIFDisk is the disk the first book takes, per page, in bytes.
type IIIFDisk struct {
	Original  float64 `json:"original"`
	Thumbnail float64 `json:"thumbnail"`
	Access    float64 `json:"access"`
	Tiles     float64 `json:"tiles"`
	// OCR is the hOCR, ALTO and text of the pages OCR read, over all
	// pages (OCRPages says how many it read).
	OCR      float64 `json:"ocr"`
	OCRPages int     `json:"ocr_pages"`
	// Derivatives is thumbnail, access copy, tiles and OCR together.
	Derivatives float64 `json:"derivatives"`
	// TilesPerPage is the tiles in a page's pyramid, on average.
	TilesPerPage float64 `json:"tiles_per_page"`
}

// IIIFResult holds the iiif scenario's own figures beside its report.
type IIIFResult struct {
	Report *Report
	Runs   []IIIFRun
	Disk   IIIFDisk
	// Tiles is the tiles served over HTTP; Raw the same byte ranges read
	// from the blob files (pread) by as many readers.
	Tiles, Raw Side
	// TilesServer is the server time of the tiles (the handler's start
	// to its return).
	TilesServer Latency
	// Manifests are the book's manifest asked by a signed-in caller
	// (never served from the cache) and by an anonymous one (cached),
	// gzipped and uncompressed; then, when OCR read some page, the
	// manifest of a copy of the book with OCR on every page, signed in
	// and gzipped.
	Manifests []IIIFManifest
	// TileErrors and FirstError tell of wrong tile answers.
	TileErrors int64
	FirstError string
	// Regions is random regions of random pages at random sizes served
	// over HTTP (composed from the pyramids), RegionsServer their server
	// time; RegionErrors and FirstRegionError tell of wrong answers.
	Regions          Side
	RegionsServer    Latency
	RegionErrors     int64
	FirstRegionError string
	// RegionsAlone is other random regions asked by one viewer at a
	// time (a tenth as many): the cost of composing one, without waiting
	// for the cores others hold.
	RegionsAlone Side
}

// iiifWords are the words on generated pages, with the page's number.
var iiifWords = []string{"LEDGER", "HARBOUR", "COMPASS", "SHELFMARK", "FOLIO", "MARGIN", "QUIRE", "VELLUM"}

// RunIIIF runs the iiif scenario against a fresh repository, its storage
// and its content store.
func RunIIIF(ctx context.Context, repo *shelfmark.Repository, store shelfmark.Storage, blobs shelfmark.BlobStore, c IIIFConfig) (*IIIFResult, error) {
	if c.Pages <= 0 {
		c.Pages = 1200
	}
	if c.Books <= 0 {
		c.Books = 10
	}
	if c.Viewers <= 0 {
		c.Viewers = 16
	}
	if c.Requests <= 0 {
		c.Requests = 20000
	}
	if c.Duration <= 0 {
		c.Duration = time.Minute
	}
	if c.Warmup <= 0 {
		c.Warmup = min(c.Requests/10, 2000)
	}
	if c.Regions <= 0 {
		c.Regions = max(c.Requests/4, 1)
	}
	if c.ManifestRequests <= 0 {
		c.ManifestRequests = 200
	}
	if c.VipsPages <= 0 {
		c.VipsPages = 200
	}
	if c.Timeout <= 0 {
		c.Timeout = 30 * time.Minute
	}
	cores := runtime.NumCPU()
	if len(c.Derive) == 0 { // the derive queue's default concurrency
		for _, q := range worker.DefaultQueues(cores) {
			if q.Name == shelfmark.QueueDerive {
				c.Derive = []int{q.Concurrency}
			}
		}
	}
	if c.NewRunner == nil {
		return nil, errors.New("iiif: no job runner")
	}
	progress := c.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	pageKind := fmt.Sprintf("bilevel PNG %d×%d with words (gen.PageImage)", gen.PageWidth, gen.PageHeight)
	if c.ScanWidth > 0 && c.ScanHeight > 0 {
		pageKind = fmt.Sprintf("colour JPEG %d×%d (gen.JPEG)", c.ScanWidth, c.ScanHeight)
	}
	rep := &Report{Scenario: "iiif", Backend: store.Backend(), Started: time.Now().UTC(),
		Params: map[string]any{"pages": c.Pages, "books": c.Books, "viewers": c.Viewers, "requests": c.Requests, "warmup_requests": c.Warmup, "region_requests": c.Regions,
			"duration_s": c.Duration.Seconds(), "manifest_requests": c.ManifestRequests, "page_images": pageKind, "cores": cores,
			"derive_concurrency": c.Derive,
			"books_share_images": fmt.Sprintf("the %d books after the first are works of their own, with pages of their own, whose files are the first book's "+
				"(the same blobs, so the same tile archives): every tile request finds and checks its own page", c.Books-1),
			"goals": "Plum's job ≤ 60 s for 1,200 pages on 2 cores; tiles p99 ≤ 20 ms; arbitrary regions p99 ≤ 50 ms; manifest of a 1,200-page book ≤ 20 ms uncached, ≤ 2 ms cached"}}
	res := &IIIFResult{Report: rep}

	dir, err := os.MkdirTemp("", "shelfmark-iiif-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)

	// the server, as serve runs it, on a loopback port
	acc := shelfmark.NewAccounts(repo, shelfmark.AccountsOptions{Logger: c.Logger})
	if _, err := acc.EnsureAdmin(ctx); err != nil {
		return nil, fmt.Errorf("iiif: the admin: %w", err)
	}
	expires := time.Now().Add(24 * time.Hour)
	token, _, err := acc.CreateToken(ctx, shelfmark.NewToken{User: "admin", Kind: shelfmark.TokenAPI, Scope: shelfmark.ScopeRead, Note: "bench iiif", Expires: &expires})
	if err != nil {
		return nil, fmt.Errorf("iiif: a token: %w", err)
	}
	// admission off: the bench measures the server's own time, one
	// anonymous client asking as fast as it is answered
	srv := shttp.NewServer(shttp.Options{Resources: repo, Blobs: blobs, Storage: store, Accounts: acc, Logger: c.Logger, Jobs: repo,
		Admission: admission.Settings{Off: true}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	timer := &iiifTimer{next: srv}
	go func() { _ = srv.Serve(ln, timer) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	base := "http://" + ln.Addr().String()
	// the client asks for gzip, as browsers do; plain asks for no
	// compression
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: c.Viewers + 1}, Timeout: 2 * time.Minute}
	plain := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 2 * time.Minute}

	// Plum's job, once per derive concurrency
	var book shelfmark.ID
	for i, conc := range c.Derive {
		run, id, err := iiifPlum(ctx, repo, blobs, client, base, dir, i, conc, c, progress)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			book = id
		}
		res.Runs = append(res.Runs, *run)
		rep.Steps = append(rep.Steps, Step{Items: int64(run.Pages), Seconds: run.Seconds, RatePerS: run.PagesPerS, Errors: run.DeriveFailed})
		rep.Errors += run.DeriveFailed
	}
	rep.Params["runs"] = res.Runs

	// the first book's pages, their files and their tiles
	pages, err := iiifPages(ctx, repo, book, c.Pages)
	if err != nil {
		return nil, err
	}
	if res.Disk, err = iiifDiskOf(pages); err != nil {
		return nil, err
	}
	rep.Params["disk_per_page_bytes"] = res.Disk
	archives, err := iiifArchives(ctx, blobs, pages)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, a := range archives {
			a.Close()
		}
	}()
	tiles := 0
	for _, a := range archives {
		tiles += len(a.entries)
	}
	res.Disk.TilesPerPage = float64(tiles) / float64(len(archives))
	rep.Params["disk_per_page_bytes"] = res.Disk

	// the other books: works of their own whose pages hold the first
	// book's files
	books := [][]shelfmark.ID{make([]shelfmark.ID, len(pages))}
	for i, p := range pages {
		books[0][i] = p.id
	}
	for b := 1; b < c.Books; b++ {
		_, ids, err := iiifCopyBook(ctx, repo, pages, b, false, nil)
		if err != nil {
			return nil, err
		}
		books = append(books, ids)
		progress("store the other books", b, c.Books-1)
	}

	// tiles: the same random requests over HTTP and as raw reads
	r := rand.New(rand.NewPCG(c.Seed, 0x11ff))
	reqs := make([]iiifTileReq, c.Warmup+c.Requests)
	for i := range reqs {
		b, p := r.IntN(len(books)), r.IntN(len(pages))
		e := archives[p].entries[r.IntN(len(archives[p].entries))]
		reqs[i] = iiifTileReq{path: "/iiif/" + string(books[b][p]) + "/image/" + e.name, page: p, off: e.off, size: e.size}
	}
	progress("warm up", 0, c.Warmup)
	warm := iiifServe(ctx, client, base, reqs[:c.Warmup], c.Viewers, c.Duration)
	progress("warm up", c.Warmup, c.Warmup)
	raw := iiifRead(archives, reqs[c.Warmup:], c.Viewers, c.Duration)
	progress("raw reads of the same bytes", c.Requests, c.Requests)
	timer.start()
	served := iiifServe(ctx, client, base, reqs[c.Warmup:], c.Viewers, c.Duration)
	res.TilesServer = *percentiles(timer.stop())
	progress("tiles over HTTP", len(served.lat), c.Requests)
	res.Raw, res.Tiles = raw.side(), served.side()
	rep.Params["tiles_server_ms"] = res.TilesServer
	res.TileErrors, res.FirstError = served.errors, served.first
	if res.FirstError == "" && warm.first != "" {
		res.FirstError = "warm-up: " + warm.first
	}
	res.TileErrors += warm.errors
	rep.Params["tiles_raw"], rep.Params["tiles_http"] = res.Raw, res.Tiles
	if res.FirstError != "" {
		rep.Params["tiles_first_error"] = res.FirstError
	}
	tileStep := Step{Clients: c.Viewers, Items: res.Tiles.Items, Seconds: res.Tiles.Seconds, RatePerS: res.Tiles.RatePerS,
		LatencyMS: &res.Tiles.LatencyMS, Errors: res.TileErrors, RawLimit: res.Raw.RatePerS}
	if res.Raw.RatePerS > 0 {
		tileStep.Fraction = res.Tiles.RatePerS / res.Raw.RatePerS
	}
	rep.Steps = append(rep.Steps, tileStep)
	rep.Items, rep.Seconds, rep.RatePerS, rep.LatencyMS, rep.Errors = tileStep.Items, tileStep.Seconds, tileStep.RatePerS, res.Tiles.LatencyMS, rep.Errors+res.TileErrors
	rep.RawLimitPerS, rep.FractionLimit = res.Raw.RatePerS, tileStep.Fraction
	rep.RawLimitWhat = fmt.Sprintf("the same tile byte ranges read (pread) from the tile archives' blob files, opened beforehand, by %d readers, in the same run", c.Viewers)

	// regions: random regions of random pages at random sizes, composed
	// from the pyramids (level 2), by as many viewers
	rreqs := iiifRegionReqs(r, books, archives, c.Regions)
	alone := iiifServe(ctx, client, base, iiifRegionReqs(r, books, archives, max(c.Regions/10, 1)), 1, c.Duration)
	res.RegionsAlone = alone.side()
	res.RegionErrors += alone.errors
	rep.Params["regions_one_viewer_http"] = res.RegionsAlone
	progress("regions, one viewer", len(alone.lat), max(c.Regions/10, 1))
	timer.start()
	regions := iiifServe(ctx, client, base, rreqs, c.Viewers, c.Duration)
	res.RegionsServer = *percentiles(timer.stop())
	progress("regions over HTTP", len(regions.lat), c.Regions)
	res.Regions, res.FirstRegionError = regions.side(), regions.first
	res.RegionErrors += regions.errors
	if res.FirstRegionError == "" {
		res.FirstRegionError = alone.first
	}
	rep.Params["regions_http"], rep.Params["regions_server_ms"] = res.Regions, res.RegionsServer
	if res.FirstRegionError != "" {
		rep.Params["regions_first_error"] = res.FirstRegionError
	}
	regionStep := Step{Clients: c.Viewers, Items: res.Regions.Items, Seconds: res.Regions.Seconds, RatePerS: res.Regions.RatePerS,
		LatencyMS: &res.Regions.LatencyMS, Errors: res.RegionErrors}
	rep.Errors += res.RegionErrors

	// the manifest of the first book: signed in (never cached) and
	// anonymous (cached), gzipped as browsers ask, then uncompressed
	type manifestKind struct {
		name, token string
		client      *http.Client
		book        shelfmark.ID
	}
	kinds := []manifestKind{{"signed in (uncached), gzip", token, client, book}, {"anonymous (cached), gzip", "", client, book},
		{"signed in (uncached), uncompressed", token, plain, book}, {"anonymous (cached), uncompressed", "", plain, book}}
	// and a book as OCR leaves it: the first book's files, originals
	// included, with OCR on every page (the first OCR'd page's files), when
	// OCR read some page while the pyramids were made
	if ocr := iiifOCRFiles(pages); len(ocr) > 0 {
		ocrBook, _, err := iiifCopyBook(ctx, repo, pages, c.Books, true, ocr)
		if err != nil {
			return nil, err
		}
		kinds = append(kinds, manifestKind{"signed in, OCR on every page, gzip", token, client, ocrBook})
	}
	for i, k := range kinds {
		m, err := iiifManifests(ctx, k.client, timer, base, k.book, k.token, c.Pages, c.ManifestRequests)
		if err != nil {
			return nil, err
		}
		m.Name = k.name
		res.Manifests = append(res.Manifests, m)
		if i < 2 {
			st := Step{Clients: 1, Items: int64(m.Requests), Seconds: m.Seconds, LatencyMS: &m.Server, Errors: m.Errors}
			if m.Seconds > 0 {
				st.RatePerS = float64(m.Requests) / m.Seconds
			}
			rep.Steps = append(rep.Steps, st)
			rep.Errors += m.Errors
		}
		progress("manifests", i+1, len(kinds))
	}
	rep.Params["manifests"] = res.Manifests
	rep.Steps = append(rep.Steps, regionStep)
	var names []string
	for _, run := range res.Runs {
		names = append(names, fmt.Sprintf("Plum's job, derive concurrency %d (pages/s)", run.DeriveConcurrency))
	}
	names = append(names, fmt.Sprintf("tiles, %d viewers (client latency)", c.Viewers), "manifest, signed in (uncached), gzip (server time)", "manifest, anonymous (cached), gzip (server time)",
		fmt.Sprintf("regions at random sizes, composed, %d viewers (client latency)", c.Viewers))
	rep.Params["steps"] = names
	return res, nil
}

// iiifPlum writes a directory of page images and ingests it as one book
// with the job runner working, until the book's manifest lists every page
// with its image service.
func iiifPlum(ctx context.Context, repo *shelfmark.Repository, blobs shelfmark.BlobStore, client *http.Client, base, dir string, n, conc int, c IIIFConfig, progress func(string, int, int)) (*IIIFRun, shelfmark.ID, error) {
	stage := fmt.Sprintf("run %d (derive %d): ", n+1, conc)
	root := filepath.Join(dir, fmt.Sprintf("run%d", n+1))
	folder := filepath.Join(root, fmt.Sprintf("book-%d", n+1))
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return nil, "", err
	}
	paths := make([]string, c.Pages)
	var made atomic.Int64
	err := parallel(c.Pages, func(i int) error {
		page := n*c.Pages + i // every run's pages are its own
		var data []byte
		name := fmt.Sprintf("page_%04d", i+1)
		if c.ScanWidth > 0 && c.ScanHeight > 0 {
			data, name = gen.JPEG(c.Seed, page, c.ScanWidth, c.ScanHeight), name+".jpg"
		} else {
			words := append([]string{"PAGE", fmt.Sprint(i + 1)}, iiifWords[page%len(iiifWords):]...)
			data, name = gen.PageImage(c.Seed, page, words), name+".png"
		}
		paths[i] = filepath.Join(folder, name)
		if err := os.WriteFile(paths[i], data, 0o644); err != nil {
			return err
		}
		progress(stage+"write page images", int(made.Add(1)), c.Pages)
		return nil
	})
	if err != nil {
		return nil, "", fmt.Errorf("iiif: page images: %w", err)
	}

	run := &IIIFRun{DeriveConcurrency: conc, Pages: c.Pages}
	var tiled, failed, ocr atomic.Int64
	var lastTiled atomic.Int64 // ns since start
	var jobMu sync.Mutex
	var jobTimes []time.Duration
	start := time.Now()
	runner, err := c.NewRunner(conc, observerFunc(func(queue, outcome string, d time.Duration) {
		switch {
		case queue == shelfmark.QueueDerive && outcome == "done":
			tiled.Add(1)
			lastTiled.Store(int64(time.Since(start)))
			jobMu.Lock()
			jobTimes = append(jobTimes, d)
			jobMu.Unlock()
		case queue == shelfmark.QueueDerive:
			failed.Add(1)
		case queue == shelfmark.QueueOCR && outcome == "done":
			ocr.Add(1)
		}
	}))
	if err != nil {
		return nil, "", err
	}
	if err := repo.PauseQueue(ctx, shelfmark.QueueOCR, false); err != nil {
		return nil, "", err
	}
	rctx, stop := context.WithTimeout(ctx, c.Timeout)
	defer stop()
	rdone := make(chan error, 1)
	start = time.Now()
	go func() { rdone <- runner.Run(rctx) }()
	stopRunner := func() error {
		stop()
		err := <-rdone
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			err = nil
		}
		return err
	}

	// ingest, as `shelfmark ingest DIR` does, counting the pages stored
	counted := &countingBlobs{BlobStore: blobs}
	key, err := iiifBookKey(ctx, root)
	if err != nil {
		_ = stopRunner()
		return nil, "", err
	}
	src, err := ingest.OpenDir(root)
	if err != nil {
		_ = stopRunner()
		return nil, "", err
	}
	type result struct {
		st  *ingest.Stats
		err error
	}
	idone := make(chan result, 1)
	go func() {
		st, err := ingest.Run(rctx, repo, counted, src, ingest.Options{})
		src.Close()
		idone <- result{st, err}
	}()
	var book shelfmark.ID
	ingested := false
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	nextCheck := time.Time{}
	var sampled time.Time
	sample := func(last bool) { // at most two a second, and the last
		if now := time.Now(); last || now.Sub(sampled) >= 500*time.Millisecond {
			sampled = now
			t := now.Sub(start).Seconds()
			run.Stored = append(run.Stored, [2]float64{t, float64(counted.puts.Load())})
			run.Tiled = append(run.Tiled, [2]float64{t, float64(tiled.Load())})
		}
	}
	for {
		select {
		case r := <-idone:
			if r.err == nil && r.st.Stored != 1 {
				r.err = fmt.Errorf("stored %d works, failed %d: %v", r.st.Stored, r.st.Failed, r.st.Failures)
			}
			if r.err != nil {
				_ = stopRunner()
				return nil, "", fmt.Errorf("iiif: ingest: %w", r.err)
			}
			run.IngestSeconds = time.Since(start).Seconds()
			found, err := repo.FindSources(ctx, []string{key})
			if err != nil || found[key] == "" {
				_ = stopRunner()
				return nil, "", fmt.Errorf("iiif: the ingested book is not found: %v", err)
			}
			book, ingested = found[key], true
			runner.Notify()
			continue
		case <-tick.C:
		case <-rctx.Done():
			err := stopRunner()
			return nil, "", fmt.Errorf("iiif: the book was not ready within %v (%d of %d pages derived): %w", c.Timeout, tiled.Load(), c.Pages, errors.Join(rctx.Err(), err))
		}
		runner.Notify() // serve's commit observer wakes the runner likewise
		sample(false)
		progress(stage+"pages derived", int(tiled.Load()), c.Pages)
		if !ingested || tiled.Load()+failed.Load() < int64(c.Pages) || time.Now().Before(nextCheck) {
			continue
		}
		// the manifest, as a viewer reads it (anonymous)
		ready, err := iiifManifestReady(ctx, client, base, book, c.Pages)
		if err != nil {
			_ = stopRunner()
			return nil, "", err
		}
		if ready {
			run.Seconds = time.Since(start).Seconds()
			break
		}
		nextCheck = time.Now().Add(250 * time.Millisecond)
	}
	sample(true)
	// what OCR did meanwhile; then it waits, so the rest of the scenario
	// is measured without it
	if err := repo.PauseQueue(ctx, shelfmark.QueueOCR, true); err != nil {
		_ = stopRunner()
		return nil, "", err
	}
	run.OCRDone, run.DeriveFailed, run.Derived = ocr.Load(), failed.Load(), tiled.Load()
	if err := stopRunner(); err != nil {
		return nil, "", fmt.Errorf("iiif: job runner: %w", err)
	}
	// the OCR jobs left are dropped, so that the next run starts alike
	left, err := dropQueued(ctx, repo, shelfmark.QueueOCR)
	if err != nil {
		return nil, "", err
	}
	run.OCRDropped = left
	run.PagesPerS = float64(c.Pages) / run.Seconds
	run.DeriveJobMS = *percentiles(jobTimes)
	run.TiledSeconds = time.Duration(lastTiled.Load()).Seconds()
	if d := run.TiledSeconds - run.IngestSeconds; d > 0 {
		run.PyramidPerS = float64(tiled.Load()) / d
	}
	if c.Vips != "" {
		run.VipsPages = min(c.VipsPages, c.Pages)
		progress(stage+"vips alone", 0, run.VipsPages)
		rate, err := vipsAlone(ctx, c.Vips, paths[:run.VipsPages], conc, filepath.Join(dir, "vips"))
		if err != nil {
			return nil, "", err
		}
		run.VipsAlonePerS = rate
		run.PyramidOverVips = run.PyramidPerS / rate
		progress(stage+"vips alone", run.VipsPages, run.VipsPages)
	}
	return run, book, nil
}

// dropQueued deletes a queue's queued jobs and returns how many.
func dropQueued(ctx context.Context, repo *shelfmark.Repository, queue string) (int, error) {
	n := 0
	err := repo.Storage().Update(ctx, func(tx shelfmark.WriteTx) error {
		var ids []int64
		var after int64
		for {
			jobs, err := tx.Jobs(ctx, shelfmark.JobFilter{Queue: queue, State: shelfmark.JobQueued, After: after, Limit: 10000})
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
		n = len(ids)
		return tx.DeleteJobs(ctx, ids)
	})
	if err != nil {
		return 0, fmt.Errorf("iiif: drop the %s jobs left: %w", queue, err)
	}
	return n, nil
}

// countingBlobs counts the bytes stored by Put.
type countingBlobs struct {
	shelfmark.BlobStore
	puts atomic.Int64
}

// Put implements shelfmark.BlobStore.
func (b *countingBlobs) Put(ctx context.Context, r io.Reader, opts shelfmark.PutOptions) (*shelfmark.Blob, error) {
	blob, err := b.BlobStore.Put(ctx, r, opts)
	if err == nil {
		b.puts.Add(1)
	}
	return blob, err
}

// parallel calls fn for 0..n-1 on every core and returns the first error.
func parallel(n int, fn func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, runtime.NumCPU())
	for w := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(i); err != nil {
					errs[w] = err
					next.Store(int64(n))
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// iiifManifest is the part of a manifest the scenario reads: each
// canvas's painting annotations and their image services.
type iiifManifest struct {
	Items []struct {
		Items []struct {
			Items []struct {
				Body struct {
					Service []struct {
						Type string `json:"type"`
					} `json:"service"`
				} `json:"body"`
			} `json:"items"`
		} `json:"items"`
	} `json:"items"`
}

// withServices counts the canvases painted from an image service.
func (m *iiifManifest) withServices() int {
	n := 0
	for _, c := range m.Items {
		found := false
		for _, ap := range c.Items {
			for _, a := range ap.Items {
				for _, s := range a.Body.Service {
					found = found || s.Type == "ImageService3"
				}
			}
		}
		if found {
			n++
		}
	}
	return n
}

// iiifManifestReady reports whether the book's manifest, as an anonymous
// viewer reads it, lists pages canvases each painted from its image
// service.
func iiifManifestReady(ctx context.Context, client *http.Client, base string, book shelfmark.ID, pages int) (bool, error) {
	status, body, err := iiifGet(ctx, client, base+"/iiif/"+string(book)+"/manifest", "")
	if err != nil {
		return false, err
	}
	if status != http.StatusOK {
		return false, fmt.Errorf("iiif: the manifest: status %d: %.200s", status, body)
	}
	var m iiifManifest
	if err := json.Unmarshal(body, &m); err != nil {
		return false, fmt.Errorf("iiif: the manifest: %w", err)
	}
	return len(m.Items) == pages && m.withServices() == pages, nil
}

// iiifGet gets a URL, with a bearer token when given, and reads the body.
func iiifGet(ctx context.Context, client *http.Client, url, token string) (int, []byte, error) {
	var buf bytes.Buffer
	status, err := iiifGetInto(ctx, client, url, token, &buf)
	return status, buf.Bytes(), err
}

// iiifGetInto is iiifGet reading the body into buf.
func iiifGetInto(ctx context.Context, client *http.Client, url, token string, buf *bytes.Buffer) (int, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return 0, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, err = buf.ReadFrom(resp.Body)
	return resp.StatusCode, err
}

// vipsAlone cuts the images with `vips dzsave` and the derive job's
// flags and environment (worker.DzsaveCommand: single-threaded, no
// modules), conc at once, and returns pages per second.
func vipsAlone(ctx context.Context, vips string, paths []string, conc int, dir string) (float64, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, conc)
	start := time.Now()
	for w := 0; w < conc; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(paths) {
					return
				}
				out := filepath.Join(dir, fmt.Sprintf("p%d.zip", i))
				args, env := worker.DzsaveCommand(paths[i], out, "", dir)
				cmd := exec.CommandContext(ctx, vips, args...)
				cmd.Env = append(os.Environ(), env...)
				if b, err := cmd.CombinedOutput(); err != nil {
					errs[w] = fmt.Errorf("vips dzsave %s: %w: %s", paths[i], err, b)
					return
				}
				os.Remove(out)
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	return float64(len(paths)) / secs, nil
}

// iiifPage is a page of the first book and its files.
type iiifPage struct {
	id    shelfmark.ID
	files []*shelfmark.Resource
}

// iiifPages reads the book's pages in order, with their files.
func iiifPages(ctx context.Context, repo *shelfmark.Repository, book shelfmark.ID, want int) ([]iiifPage, error) {
	var out []iiifPage
	var after shelfmark.Cursor
	for {
		p, err := repo.ListChildren(ctx, book, shelfmark.PageRequest{After: after, Limit: shelfmark.MaxPageSize})
		if err != nil {
			return nil, fmt.Errorf("iiif: the book's pages: %w", err)
		}
		ids := make([]shelfmark.ID, len(p.Items))
		for i, it := range p.Items {
			ids[i] = it.ID
		}
		files, err := repo.ChildFiles(ctx, book, ids)
		if err != nil {
			return nil, fmt.Errorf("iiif: the book's files: %w", err)
		}
		for _, id := range ids {
			out = append(out, iiifPage{id: id, files: files[id]})
		}
		if p.Next == "" {
			break
		}
		after = p.Next
	}
	if len(out) != want {
		return nil, fmt.Errorf("iiif: the book has %d pages, want %d", len(out), want)
	}
	return out, nil
}

// iiifDiskOf sums the pages' files by use.
func iiifDiskOf(pages []iiifPage) (IIIFDisk, error) {
	var d IIIFDisk
	for _, p := range pages {
		ocr := false
		for _, f := range p.files {
			size := float64(f.File.Size)
			switch f.File.Use {
			case shelfmark.UseOriginal, "":
				d.Original += size
			case shelfmark.UseThumbnail:
				d.Thumbnail += size
			case shelfmark.UseAccess:
				d.Access += size
			case shelfmark.UseTiles:
				d.Tiles += size
			case shelfmark.UseOCR, shelfmark.UseALTO, shelfmark.UseText:
				d.OCR += size
				ocr = true
			}
		}
		if ocr {
			d.OCRPages++
		}
	}
	n := float64(len(pages))
	d.Original, d.Thumbnail, d.Access, d.Tiles, d.OCR = d.Original/n, d.Thumbnail/n, d.Access/n, d.Tiles/n, d.OCR/n
	d.Derivatives = d.Thumbnail + d.Access + d.Tiles + d.OCR
	return d, nil
}

// iiifArchive is a page's tile archive: its blob file and its tiles.
type iiifArchive struct {
	f       io.ReaderAt
	entries []iiifEntry
}

// Close closes the blob file.
func (a iiifArchive) Close() error {
	if c, ok := a.f.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// iiifEntry is a tile: its request path below the image service, and
// where its bytes lie in the archive.
type iiifEntry struct {
	name      string
	off, size int64
}

// iiifArchives opens every page's tile archive and lists its tiles.
func iiifArchives(ctx context.Context, blobs shelfmark.BlobStore, pages []iiifPage) ([]iiifArchive, error) {
	out := make([]iiifArchive, 0, len(pages))
	fail := func(err error) ([]iiifArchive, error) {
		for _, a := range out {
			a.Close()
		}
		return nil, err
	}
	for i, p := range pages {
		var tiles *shelfmark.File
		for _, f := range p.files {
			if f.File.Use == shelfmark.UseTiles {
				tiles = f.File
			}
		}
		if tiles == nil {
			return fail(fmt.Errorf("iiif: page %d (%s) has no tiles", i+1, p.id))
		}
		rc, err := blobs.Open(ctx, tiles.SHA256)
		if err != nil {
			return fail(err)
		}
		ra, ok := rc.(io.ReaderAt)
		if !ok {
			rc.Close()
			return fail(fmt.Errorf("iiif: the content store's files give no random access (pread)"))
		}
		a := iiifArchive{f: ra}
		out = append(out, a)
		zr, err := zip.NewReader(ra, tiles.Size)
		if err != nil {
			return fail(fmt.Errorf("iiif: tiles of page %d: %w", i+1, err))
		}
		for _, zf := range zr.File {
			if zf.Name == shelfmark.TileInfoName || zf.Method != zip.Store {
				continue
			}
			off, err := zf.DataOffset()
			if err != nil {
				return fail(err)
			}
			out[len(out)-1].entries = append(out[len(out)-1].entries, iiifEntry{name: zf.Name, off: off, size: int64(zf.UncompressedSize64)})
		}
		if len(out[len(out)-1].entries) == 0 {
			return fail(fmt.Errorf("iiif: page %d's archive has no tiles", i+1))
		}
	}
	return out, nil
}

// iiifCopyBook stores another book whose pages hold the first book's
// derivative files (the same blobs), in the same order; with whole, its
// originals too (with their characterization), and ocr's files on every
// page instead of the page's own OCR, as a book looks once OCR has run.
func iiifCopyBook(ctx context.Context, repo *shelfmark.Repository, pages []iiifPage, n int, whole bool, ocr []*shelfmark.File) (shelfmark.ID, []shelfmark.ID, error) {
	work, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{
		{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(fmt.Sprintf("Book %d", n+1))}}})
	if err != nil {
		return "", nil, fmt.Errorf("iiif: book %d: %w", n+1, err)
	}
	const per = 100
	order := make([]shelfmark.ID, 0, len(pages))
	for lo := 0; lo < len(pages); lo += per {
		hi := min(lo+per, len(pages))
		var nrs []*shelfmark.NewResource
		for i := lo; i < hi; i++ {
			var files []*shelfmark.File
			for _, f := range pages[i].files {
				switch f.File.Use {
				case shelfmark.UseTiles, shelfmark.UseThumbnail, shelfmark.UseAccess:
					files = append(files, iiifFileCopy(f.File))
				case shelfmark.UseOriginal, "":
					if whole {
						files = append(files, iiifFileCopy(f.File))
					}
				}
			}
			for _, f := range ocr {
				files = append(files, iiifFileCopy(f))
			}
			ids, err := repo.MintIDs(ctx, 1+len(files))
			if err != nil {
				return "", nil, err
			}
			nrs = append(nrs, &shelfmark.NewResource{ID: ids[0], Kind: shelfmark.KindFileSet, Parent: work.ID, Metadata: []shelfmark.Statement{
				{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(fmt.Sprintf("Page %d", i+1))}}})
			for k, f := range files {
				nrs = append(nrs, &shelfmark.NewResource{ID: ids[1+k], Kind: shelfmark.KindFile, Parent: ids[0], File: f})
			}
			order = append(order, ids[0])
		}
		if _, errs := repo.CreateResources(ctx, nrs); errors.Join(errs...) != nil {
			return "", nil, fmt.Errorf("iiif: book %d, pages %d–%d: %w", n+1, lo+1, hi, errors.Join(errs...))
		}
	}
	if _, err := repo.SetOrder(ctx, work.ID, order, 0); err != nil {
		return "", nil, fmt.Errorf("iiif: order book %d: %w", n+1, err)
	}
	return work.ID, order, nil
}

// iiifFileCopy is a new file of f's blob, name, use and characterization.
func iiifFileCopy(f *shelfmark.File) *shelfmark.File {
	c := &shelfmark.File{Name: f.Name, MediaType: f.MediaType, Size: f.Size, SHA256: f.SHA256, Use: f.Use}
	if f.Format != nil {
		fm := *f.Format
		c.Format = &fm
	}
	return c
}

// iiifOCRFiles are the OCR files (hOCR, ALTO) of the first page of pages
// that OCR has read, or none.
func iiifOCRFiles(pages []iiifPage) []*shelfmark.File {
	for _, p := range pages {
		var out []*shelfmark.File
		for _, f := range p.files {
			if f.File.Use == shelfmark.UseOCR || f.File.Use == shelfmark.UseALTO {
				out = append(out, f.File)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// iiifTileReq is one tile request: its path, and the page and byte range
// it reads in the first book's archives (size -1: a composed image, of a
// size not known beforehand).
type iiifTileReq struct {
	path      string
	page      int
	off, size int64
}

// iiifTimes is what a pass of tile requests measured.
type iiifTimes struct {
	lat    []time.Duration
	secs   float64
	errors int64
	first  string
}

// side summarises a pass.
func (t iiifTimes) side() Side {
	s := Side{Items: int64(len(t.lat)), Seconds: t.secs, Errors: t.errors}
	if t.secs > 0 {
		s.RatePerS = float64(len(t.lat)) / t.secs
	}
	s.LatencyMS = *percentiles(t.lat)
	return s
}

// iiifPass runs do for the requests with workers at once, until all are
// done or d has passed.
func iiifPass(reqs []iiifTileReq, workers int, d time.Duration, do func(buf []byte, q iiifTileReq) string) iiifTimes {
	var next atomic.Int64
	var mu sync.Mutex
	var out iiifTimes
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 0, 256<<10)
			var lat []time.Duration
			var bad int64
			first := ""
			for time.Now().Before(deadline) {
				i := int(next.Add(1)) - 1
				if i >= len(reqs) {
					break
				}
				t0 := time.Now()
				why := do(buf, reqs[i])
				lat = append(lat, time.Since(t0))
				if why != "" {
					bad++
					if first == "" {
						first = reqs[i].path + ": " + why
					}
				}
			}
			mu.Lock()
			out.lat = append(out.lat, lat...)
			out.errors += bad
			if out.first == "" {
				out.first = first
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	out.secs = time.Since(start).Seconds()
	return out
}

// iiifRead reads the requests' byte ranges from the archives' files.
func iiifRead(archives []iiifArchive, reqs []iiifTileReq, readers int, d time.Duration) iiifTimes {
	return iiifPass(reqs, readers, d, func(buf []byte, q iiifTileReq) string {
		b := buf[:0]
		if int64(cap(b)) < q.size {
			b = make([]byte, q.size)
		}
		b = b[:q.size]
		if _, err := archives[q.page].f.ReadAt(b, q.off); err != nil {
			return err.Error()
		}
		if len(b) < 2 || b[0] != 0xff || b[1] != 0xd8 {
			return "not a JPEG"
		}
		return ""
	})
}

// iiifServe asks the server for the requests' tiles, as anonymous viewers.
func iiifServe(ctx context.Context, client *http.Client, base string, reqs []iiifTileReq, viewers int, d time.Duration) iiifTimes {
	return iiifPass(reqs, viewers, d, func(buf []byte, q iiifTileReq) string {
		req, err := http.NewRequestWithContext(ctx, "GET", base+q.path, nil)
		if err != nil {
			return err.Error()
		}
		resp, err := client.Do(req)
		if err != nil {
			return err.Error()
		}
		defer resp.Body.Close()
		n, head := int64(0), [2]byte{}
		for {
			k, err := resp.Body.Read(buf[:cap(buf)])
			if n < 2 && k > 0 {
				copy(head[n:], buf[:min(k, 2-int(n))])
			}
			n += int64(k)
			if err == io.EOF {
				break
			}
			if err != nil {
				return err.Error()
			}
		}
		switch {
		case resp.StatusCode != http.StatusOK:
			return fmt.Sprintf("status %d", resp.StatusCode)
		case resp.Header.Get("Content-Type") != "image/jpeg":
			return "Content-Type " + resp.Header.Get("Content-Type")
		case q.size >= 0 && n != q.size:
			return fmt.Sprintf("%d bytes, want %d", n, q.size)
		case head != [2]byte{0xff, 0xd8}:
			return "not a JPEG"
		}
		return ""
	})
}

// IIIFManifest is what the scenario measured of one kind of manifest
// request, asked one at a time.
type IIIFManifest struct {
	Name     string `json:"name"`
	Requests int    `json:"requests"`
	// Server is the time from the start of the server's handler to its
	// return (building or finding the manifest, compressing it and
	// writing it into the connection); Client from sending the request
	// to reading and decompressing the last byte.
	Server  Latency `json:"server_ms"`
	Client  Latency `json:"client_ms"`
	Seconds float64 `json:"seconds"`
	// Bytes is the size of the manifest (uncompressed); Errors counts
	// answers that did not list every page with its image service.
	Bytes  int   `json:"bytes"`
	Errors int64 `json:"errors"`
	// Floor, for a manifest built at every request (signed in), is the
	// time of fixed work as long as the median build of the warm-up,
	// done after each timed request (iiifFloor): the machine's own spread
	// for work of that length in the same minutes. FloorTargetMS is that
	// median.
	Floor         *Latency `json:"floor_ms,omitempty"`
	FloorTargetMS float64  `json:"floor_target_ms,omitempty"`
}

// iiifManifests times the book's manifest, one request at a time, with a
// token (never cached) or anonymously (cached after the first), and
// checks every answer lists every page with its image service. The
// scenario's client runs in the server's process, so it keeps its own
// garbage out of the server's collections: each answer is read into one
// buffer kept for the next, and decoded only when its bytes differ from
// the last answer that passed (an answer the same as a checked one
// passes too). A manifest asked with a token (built at every request)
// is timed beside the floor (iiifFloor): after each timed request, fixed
// work as long as the warm-up's median server time.
func iiifManifests(ctx context.Context, client *http.Client, timer *iiifTimer, base string, book shelfmark.ID, token string, pages, n int) (IIIFManifest, error) {
	url := base + "/iiif/" + string(book) + "/manifest"
	var lat, srv, warm, floors []time.Duration
	var floor *iiifFloor
	out := IIIFManifest{Requests: n}
	var body, passed bytes.Buffer
	const warmup = 10
	for i := 0; i < warmup+n; i++ {
		if i == warmup && token != "" {
			out.FloorTargetMS = percentiles(warm).P50
			floor = newIIIFFloor(time.Duration(out.FloorTargetMS * float64(time.Millisecond)))
		}
		timer.start()
		t0 := time.Now()
		body.Reset()
		status, err := iiifGetInto(ctx, client, url, token, &body)
		d := time.Since(t0)
		st := timer.stop()
		if err != nil {
			return out, fmt.Errorf("iiif: the manifest: %w", err)
		}
		if i < warmup {
			warm = append(warm, st...)
			continue
		}
		lat, srv = append(lat, d), append(srv, st...)
		if floor != nil {
			floors = append(floors, floor.run())
		}
		out.Bytes = body.Len()
		if status == http.StatusOK && passed.Len() > 0 && bytes.Equal(body.Bytes(), passed.Bytes()) {
			continue
		}
		var m iiifManifest
		if status != http.StatusOK || json.Unmarshal(body.Bytes(), &m) != nil || len(m.Items) != pages || m.withServices() != pages {
			out.Errors++
			continue
		}
		passed.Reset()
		passed.Write(body.Bytes())
	}
	out.Seconds = total(srv).Seconds()
	out.Client, out.Server = *percentiles(lat), *percentiles(srv)
	if floor != nil {
		out.Floor = percentiles(floors)
	}
	return out, nil
}

// iiifTimer times the requests its handler serves while it is started.
type iiifTimer struct {
	next http.Handler
	on   atomic.Bool
	mu   sync.Mutex
	took []time.Duration
}

func (t *iiifTimer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !t.on.Load() {
		t.next.ServeHTTP(w, r)
		return
	}
	t0 := time.Now()
	t.next.ServeHTTP(w, r)
	d := time.Since(t0)
	t.mu.Lock()
	t.took = append(t.took, d)
	t.mu.Unlock()
}

// start starts timing.
func (t *iiifTimer) start() {
	t.mu.Lock()
	t.took = t.took[:0]
	t.mu.Unlock()
	t.on.Store(true)
}

// stop stops timing and returns the times of the requests served since
// start.
func (t *iiifTimer) stop() []time.Duration {
	t.on.Store(false)
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]time.Duration(nil), t.took...)
}

// iiifBookKey returns the source key of the one book in the tree at root,
// as the ingest gives it (its folder's path and a fingerprint of its
// pages), by listing the tree.
func iiifBookKey(ctx context.Context, root string) (string, error) {
	src, err := ingest.OpenDir(root)
	if err != nil {
		return "", err
	}
	defer src.Close()
	it, err := src.Next(ctx)
	if err != nil {
		return "", fmt.Errorf("iiif: list the book: %w", err)
	}
	return it.Key, nil
}

// iiifRegionReqs makes n requests for random regions of random pages of
// the books at random sizes, as a viewer zooming freely asks for them: a
// region from 64 pixels to half the page on each side, at least a quarter
// of it on the screen, shown from 64 to 800 pixels wide (never larger
// than the region), as a JPEG of the default quality. No region is a
// stored tile (its corner is off the tile grid), so each is composed.
func iiifRegionReqs(r *rand.Rand, books [][]shelfmark.ID, archives []iiifArchive, n int) []iiifTileReq {
	out := make([]iiifTileReq, n)
	for i := range out {
		b, p := r.IntN(len(books)), r.IntN(len(archives))
		w, h := archives[p].size()
		rw := 64 + r.IntN(max(w/2-64, 1))
		rh := min(64+r.IntN(max(h/2-64, 1)), 2*rw)
		x, y := 1+r.IntN(max(w-rw-1, 1)), 1+r.IntN(max(h-rh-1, 1))
		if x%512 == 0 {
			x++
		}
		ow := min(rw, 64+r.IntN(800-64+1))
		out[i] = iiifTileReq{path: fmt.Sprintf("/iiif/%s/image/%d,%d,%d,%d/%d,/0/default.jpg", books[b][p], x, y, rw, rh, ow), page: p, size: -1}
	}
	return out
}

// size is the page's full size, from its tiles' regions.
func (a iiifArchive) size() (w, h int) {
	for _, e := range a.entries {
		var x, y, tw, th int
		if _, err := fmt.Sscanf(e.name, "%d,%d,%d,%d/", &x, &y, &tw, &th); err == nil {
			w, h = max(w, x+tw), max(h, y+th)
		}
	}
	return w, h
}
