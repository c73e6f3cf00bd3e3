package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ingest"
	"github.com/shelfmark/shelfmark/warc"
)

// WebIndexGoal is the links/s the web index is asked to sustain on two
// cores, drawn in the chart.
const WebIndexGoal = 50000

// WebIndexConfig configures the webindex scenario.
type WebIndexConfig struct {
	Pages        int     // captures in the crawl (default 1,000,000)
	PagesPerFile int     // pages per WARC file (default 100,000)
	Recapture    float64 // share of the pages that are re-captures (default 0.15; negative: none)
	Domains      int     // default: one per 20 first captures, 50 to 50,000
	// Dir is where the WARC files are written, and reused from when a
	// run with the same settings wrote them; "" is a temporary directory
	// removed after the run.
	Dir   string
	Batch int // records per batch (default 1000, ingest's default)
	// Merge is how many waiting batches one index transaction may take
	// (0: ingest's default).
	Merge   int
	Buckets int     // wall-time buckets of the rate over time (default 40)
	QRate   float64 // queries per second of each kind while ingesting (default 20)
	// ParseOnly runs the WARC reader alone over the files before the
	// ingest, to time the read and parse stage.
	ParseOnly bool
	// QueryCommand, when set, is the command (name and arguments) of a
	// process that asks the queries instead of this one: the scenario
	// adds --rate, --start and each --domain and --surt, reads one line
	// a query from it (WriteWebQuery) and ends it by closing its input.
	// A server answers the queries of readers in a process of its own
	// beside "shelfmark ingest-warc", and a query's round trips to
	// PostgreSQL wait far longer in a process whose every processor the
	// ingest keeps busy (docs/web-index.md).
	QueryCommand []string
	// Database is the PostgreSQL URL of the store ("" for SQLite, then
	// StorePath is the store's file); both serve to count the index's
	// rows and to place the raw limit's scratch tables.
	Database, StorePath string
	Relaxed             bool
	// WriteCache is the page cache, in bytes, of the SQLite write
	// connection the store was opened with, and MergeLinks the
	// repository's RepositoryOptions.WebMergeLinks (0: the defaults),
	// recorded in the report's parameters.
	WriteCache int64
	MergeLinks int
	// CheckpointEvery is the store's setup.StoreTuning.CheckpointEvery,
	// for the report.
	CheckpointEvery int64
	// RawSeconds is how long the raw limit inserts (default 10 s; negative:
	// no raw limit); RawBatch is its pages per transaction (default Batch).
	RawSeconds float64
	RawBatch   int
	Seed       uint64
	// Progress, when set, is told each stage's progress.
	Progress func(stage string, done, total int)
}

func (c *WebIndexConfig) defaults() {
	if c.Pages <= 0 {
		c.Pages = 1000000
	}
	if c.PagesPerFile <= 0 {
		c.PagesPerFile = 100000
	}
	if c.Recapture == 0 {
		c.Recapture = 0.15
	} else if c.Recapture < 0 {
		c.Recapture = 0
	}
	if c.Batch <= 0 {
		c.Batch = 1000
	}
	if c.Buckets <= 0 {
		c.Buckets = 40
	}
	if c.QRate <= 0 {
		c.QRate = 20
	}
	if c.RawSeconds == 0 {
		c.RawSeconds = 10
	}
}

// WebIndexReport is the webindex scenario's report: the shared fields
// (items are links; rate_per_s is links/s) and its own.
type WebIndexReport struct {
	*Report
	// Pages counts the pages (records) indexed.
	Pages     int64   `json:"pages"`
	PagesPerS float64 `json:"pages_per_s"`
	// GenerateSeconds is the time the crawl's generation took (not in
	// the ingest's time; 0 when the files were reused).
	GenerateSeconds float64 `json:"generate_seconds"`
	WARCFiles       int     `json:"warc_files"`
	WARCBytes       int64   `json:"warc_bytes"`
	// ParseOnly* are the WARC reader's rates alone, one goroutine, no
	// database: the read and parse stage's ceiling.
	ParseOnlyRecordsPerS float64 `json:"parse_only_records_per_s"`
	ParseOnlyLinksPerS   float64 `json:"parse_only_links_per_s"`
	ParseOnlySeconds     float64 `json:"parse_only_seconds"`
	// RecaptureStartS is when the re-captures began, in seconds into the
	// ingest; the phases' rates in links/s.
	RecaptureStartS         float64 `json:"recapture_start_s"`
	FirstPhaseLinksPerS     float64 `json:"first_phase_links_per_s"`
	RecapturePhaseLinksPerS float64 `json:"recapture_phase_links_per_s"`
	QueryTopMS              Latency `json:"query_top_ms"`
	QueryLinksMS            Latency `json:"query_links_ms"`
	// QueryReadMS is the floor the queries are judged against: a read
	// of one row by primary key, asked as often beside them.
	QueryReadMS Latency `json:"query_read_ms"`
	Queries     struct {
		Top      int64 `json:"top"`
		Links    int64 `json:"links"`
		Reads    int64 `json:"reads"`
		NotFound int64 `json:"not_found"`
		Errors   int64 `json:"errors"`
	} `json:"queries"`
	// Rows counts the index's rows after the run.
	Rows *WebRows `json:"rows,omitempty"`
	// Raw is the raw limit's measurement (RawLimitPerS is its LinksPerS),
	// into empty scratch tables.
	Raw *RawWebResult `json:"raw,omitempty"`
	// RawAtSize is the raw limit measured again after the ingest, in the
	// index's own tables at the size the crawl left them
	// (RawWebAtSize); FractionAtSize is the ingest's rate over its
	// LinksPerS, and LastFractionAtSize the last step's.
	RawAtSize          *RawWebResult `json:"raw_at_size,omitempty"`
	FractionAtSize     float64       `json:"fraction_at_size,omitempty"`
	LastFractionAtSize float64       `json:"last_fraction_at_size,omitempty"`
	// Timeline holds, per step, the pages/s and each query's latency.
	Timeline []WebIndexBucket `json:"timeline"`
	// IngestErrors are the first bad records or files the ingest reported.
	IngestErrors []string `json:"ingest_errors,omitempty"`
}

// BytesPerLink is the index's size on disk over the links the ingest
// indexed (re-captures' included); 0 when the size is unknown.
func (r *WebIndexReport) BytesPerLink() float64 {
	if r.Rows == nil || r.Rows.Bytes <= 0 || r.Items <= 0 {
		return 0
	}
	return float64(r.Rows.Bytes) / float64(r.Items)
}

// WebIndexBucket is one time bucket of the run beside its Step.
type WebIndexBucket struct {
	EndS      float64  `json:"end_s"`
	Pages     int64    `json:"pages"`
	PagesPerS float64  `json:"pages_per_s"`
	Recapture bool     `json:"recapture"` // re-captures were indexed in the bucket
	TopMS     *Latency `json:"query_top_ms,omitempty"`
	LinksMS   *Latency `json:"query_links_ms,omitempty"`
	ReadMS    *Latency `json:"query_read_ms,omitempty"`
}

// webSample is the ingest's count at a time into the run.
type webSample struct {
	at           time.Duration
	pages, links int64
}

// webQuery is one timed query.
type webQuery struct {
	at   time.Duration
	took time.Duration
}

// RunWebIndex generates the crawl, times the WARC reader alone over it,
// then ingests it through ingest.IngestWARC into repo while two clients
// ask "the top 10 pages of a popular domain" and "the inbound links of a
// popular URL" at a fixed rate each, and finally measures the raw limit
// of the same rows on the same backend. The report's items are links
// (as extracted, with repeats), its rate links/s.
func RunWebIndex(ctx context.Context, repo *shelfmark.Repository, blobs shelfmark.BlobStore, c WebIndexConfig) (*WebIndexReport, error) {
	c.defaults()
	progress := func(stage string, done, total int) {
		if c.Progress != nil {
			c.Progress(stage, done, total)
		}
	}
	ctx = shelfmark.WithCaller(ctx, shelfmark.SystemCaller("bench"))
	g := NewWebGraph(c.Seed, c.Pages, c.Domains, c.Recapture)
	rep := &WebIndexReport{Report: &Report{Scenario: "webindex", Backend: repo.Storage().Backend(), Started: time.Now().UTC(),
		Params: map[string]any{"pages": c.Pages, "first_captures": g.First, "recaptures": g.Pages - g.First, "domains": g.Domains,
			"pages_per_file": c.PagesPerFile, "batch": c.Batch, "merge": c.Merge, "query_rate_per_kind": c.QRate, "seed": c.Seed,
			"write_cache_bytes": c.WriteCache, "merge_links": c.MergeLinks,
			"checkpoint_every_bytes": c.CheckpointEvery}}}

	// 1. the crawl
	dir := c.Dir
	if dir == "" {
		tmp, err := os.MkdirTemp(rawDir(c.StorePath), "webindex-crawl-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	files, err := WriteWebCrawl(ctx, g, dir, c.PagesPerFile, 0, func(done int) { progress("generate", done, c.Pages) })
	if err != nil {
		return nil, fmt.Errorf("generate the crawl: %w", err)
	}
	rep.GenerateSeconds, rep.WARCFiles, rep.WARCBytes = files.Seconds, len(files.Paths), files.Bytes

	// 2. the reader alone
	if c.ParseOnly {
		recs, links, secs, err := parseOnly(ctx, files.Paths, func(done int) { progress("parse only", done, c.Pages) })
		if err != nil {
			return nil, fmt.Errorf("parse only: %w", err)
		}
		rep.ParseOnlySeconds = secs
		if secs > 0 {
			rep.ParseOnlyRecordsPerS, rep.ParseOnlyLinksPerS = float64(recs)/secs, float64(links)/secs
		}
	}

	// 3. the ingest, with the query clients
	var mu sync.Mutex
	samples := []webSample{{}}
	recapAt := time.Duration(-1)
	started := make(chan struct{})
	var once sync.Once
	start := time.Now()
	qctx, stopQueries := context.WithCancel(ctx)
	ictx, stopIngest := context.WithCancelCause(ctx)
	defer stopIngest(nil)
	var qwg sync.WaitGroup
	var tops, linkQs, reads []webQuery
	var notFound, qerrs int64
	var firstQErr error
	popular := 10
	targets := WebQueryTargets{}
	for r := 0; r < popular; r++ {
		u, err := warc.Canonical(g.HomePage(r))
		if err != nil {
			stopQueries()
			return nil, err
		}
		targets.Domains, targets.SURTs = append(targets.Domains, g.DomainName(r)), append(targets.SURTs, u.SURT)
	}
	record := func(q WebQueryResult) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case q.Err == nil:
		case q.NotFound:
			notFound++
		default:
			qerrs++
			if firstQErr == nil {
				firstQErr = fmt.Errorf("%s: %w", q.Kind, q.Err)
			}
		}
		switch q.Kind {
		case "top":
			tops = append(tops, webQuery{at: q.At, took: q.Took})
		case "read":
			reads = append(reads, webQuery{at: q.At, took: q.Took})
		default:
			linkQs = append(linkQs, webQuery{at: q.At, took: q.Took})
		}
	}
	var procErr error
	qwg.Add(1)
	go func() {
		defer qwg.Done()
		// from the first batch indexed on, until the ingest ends
		select {
		case <-started:
		case <-qctx.Done():
			select {
			case <-started:
			default:
				return
			}
		}
		if c.QueryCommand == nil {
			RunWebQueries(ctx, qctx.Done(), repo, targets, c.QRate, start, record)
			return
		}
		if procErr = webQueryProcess(qctx.Done(), c.QueryCommand, targets, c.QRate, start, os.Stderr, record); procErr != nil {
			stopIngest(procErr) // no run without its queries
		}
	}()
	st, err := ingest.IngestWARC(ictx, repo, blobs, []string{dir}, ingest.WARCOptions{Crawl: "bench-webindex", Batch: c.Batch, Merge: c.Merge,
		Progress: func(s ingest.WARCStats) {
			at := time.Since(start)
			mu.Lock()
			prev := samples[len(samples)-1]
			if s.Records > prev.pages {
				if prev.pages <= int64(g.First) && s.Records > int64(g.First) {
					recapAt = prev.at
				}
				samples = append(samples, webSample{at, s.Records, s.Links})
			}
			mu.Unlock()
			once.Do(func() { close(started) })
			progress("ingest", int(s.Records), c.Pages)
		}})
	elapsed := time.Since(start)
	stopQueries()
	qwg.Wait()
	rep.PeakRSSBytes = PeakRSS(os.Getpid())
	if procErr != nil {
		return nil, procErr
	}
	rep.Params["queries_from"] = "the ingesting process"
	if c.QueryCommand != nil {
		rep.Params["queries_from"] = "a process of their own"
	}
	if st == nil {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	rep.Pages, rep.Items, rep.Seconds = st.Records, st.Links, elapsed.Seconds()
	rep.RatePerS, rep.PagesPerS = float64(st.Links)/rep.Seconds, float64(st.Records)/rep.Seconds
	rep.Queries.Top, rep.Queries.Links, rep.Queries.Reads = int64(len(tops)), int64(len(linkQs)), int64(len(reads))
	rep.Queries.NotFound, rep.Queries.Errors = notFound, qerrs
	rep.Errors = st.Errors + qerrs
	for _, f := range st.Failures {
		if len(rep.IngestErrors) == 10 {
			break
		}
		rep.IngestErrors = append(rep.IngestErrors, f.Key+": "+f.Reason)
	}
	if firstQErr != nil {
		rep.Params["first_query_error"] = firstQErr.Error()
	}
	rep.Params["files_indexed"], rep.Params["files_failed"], rep.Params["warc_bytes_indexed"] = st.Files, st.FilesFailed, st.Bytes
	samples = append(samples, webSample{elapsed, st.Records, st.Links})
	// several batches a bucket, or the rate per bucket is noise
	buckets := max(2, min(c.Buckets, (len(samples)-1)/6))
	rep.Params["buckets"] = buckets
	rep.timeline(samples, tops, linkQs, reads, elapsed, buckets, recapAt)
	rep.Flatness = flatness(rep.Steps)
	all := make([]time.Duration, 0, len(tops)+len(linkQs))
	for _, qs := range [][]webQuery{tops, linkQs} {
		for _, q := range qs {
			all = append(all, q.took)
		}
	}
	rep.LatencyMS = *percentiles(all)
	rep.QueryTopMS, rep.QueryLinksMS, rep.QueryReadMS = *latencyOf(tops), *latencyOf(linkQs), *latencyOf(reads)

	// 4. the index's rows, and the raw limit of the same rows
	if rows, err := CountWebRows(ctx, c.Database, c.StorePath); err == nil {
		rep.Rows = rows
	} else {
		rep.Params["rows_error"] = err.Error()
	}
	if c.RawSeconds > 0 {
		raw, err := OpenRawScratch(ctx, c.Database, rawDir(c.StorePath), c.Relaxed)
		if err != nil {
			return nil, fmt.Errorf("raw limit: %w", err)
		}
		progress("raw limit", 0, 1)
		rb := c.RawBatch
		if rb <= 0 {
			rb = c.Batch
		}
		res, err := RawWebLimit(ctx, raw, g, rb, time.Duration(c.RawSeconds*float64(time.Second)))
		if cerr := raw.Close(); err == nil && cerr != nil {
			err = cerr
		}
		progress("raw limit", 1, 1)
		if err != nil {
			return nil, fmt.Errorf("raw limit: %w", err)
		}
		rep.Raw = res
		rep.RawLimitPerS = res.LinksPerS
		rep.RawLimitWhat = fmt.Sprintf("plain batched INSERTs of the same rows (new domains and URLs, a capture, its distinct links) of the crawl's first %d pages into scratch tables of the same definitions, %d pages per durable transaction, in links/s as extracted", res.Pages, res.Batch)
		if res.LinksPerS > 0 {
			rep.FractionLimit = rep.RatePerS / res.LinksPerS
			for i := range rep.Steps {
				rep.Steps[i].RawLimit = res.LinksPerS
				rep.Steps[i].Fraction = rep.Steps[i].RatePerS / res.LinksPerS
			}
		}
		progress("raw limit at the index's size", 0, 1)
		at, err := RawWebAtSize(ctx, c.Database, c.StorePath, c.Relaxed, g, rb, time.Duration(c.RawSeconds*float64(time.Second)))
		progress("raw limit at the index's size", 1, 1)
		if err != nil {
			return nil, err
		}
		rep.RawAtSize = at
		if at.LinksPerS > 0 {
			rep.FractionAtSize = rep.RatePerS / at.LinksPerS
			if n := len(rep.Steps); n > 0 {
				rep.LastFractionAtSize = rep.Steps[n-1].RatePerS / at.LinksPerS
			}
		}
	}
	return rep, nil
}

// interpolatedSteps splits the run into n equal wall-time buckets and
// counts the items of each, the count at a bucket's end interpolated
// between the samples around it: a batch indexed across a bucket boundary
// counts in both buckets by its time in each, so that buckets a few
// batches long are not quantised to whole batches.
func interpolatedSteps(samples []progressSample, total time.Duration, n int) []Step {
	countAt := func(t time.Duration) float64 {
		for i := 1; i < len(samples); i++ {
			a, b := samples[i-1], samples[i]
			if t < b.at {
				if b.at <= a.at || t <= a.at {
					return float64(a.stored)
				}
				return float64(a.stored) + float64(b.stored-a.stored)*float64(t-a.at)/float64(b.at-a.at)
			}
		}
		return float64(samples[len(samples)-1].stored)
	}
	steps := make([]Step, 0, n)
	secs := total.Seconds() / float64(n)
	var prev int64
	for b := 1; b <= n; b++ {
		t := total * time.Duration(b) / time.Duration(n)
		cur := int64(countAt(t) + 0.5)
		if b == n {
			cur = samples[len(samples)-1].stored
		}
		s := Step{Items: cur - prev, Seconds: secs}
		if secs > 0 {
			s.RatePerS = float64(s.Items) / secs
		}
		steps = append(steps, s)
		prev = cur
	}
	return steps
}

func latencyOf(qs []webQuery) *Latency {
	ds := make([]time.Duration, len(qs))
	for i, q := range qs {
		ds[i] = q.took
	}
	return percentiles(ds)
}

// timeline fills the steps (links per time bucket), the phases' rates and
// the per-bucket pages and query latencies.
func (rep *WebIndexReport) timeline(samples []webSample, tops, links, reads []webQuery, total time.Duration, n int, recapAt time.Duration) {
	linkSamples := make([]progressSample, len(samples))
	pageSamples := make([]progressSample, len(samples))
	for i, s := range samples {
		linkSamples[i] = progressSample{s.at, s.links}
		pageSamples[i] = progressSample{s.at, s.pages}
	}
	rep.Steps = interpolatedSteps(linkSamples, total, n)
	pages := interpolatedSteps(pageSamples, total, n)
	inBucket := func(qs []webQuery, from, to time.Duration) *Latency {
		var ds []time.Duration
		for _, q := range qs {
			if q.at >= from && q.at < to {
				ds = append(ds, q.took)
			}
		}
		if len(ds) == 0 {
			return nil
		}
		return percentiles(ds)
	}
	rep.Timeline = make([]WebIndexBucket, len(rep.Steps))
	for b := range rep.Steps {
		from, to := total*time.Duration(b)/time.Duration(n), total*time.Duration(b+1)/time.Duration(n)
		if b == n-1 {
			to = total + time.Second // the queries stopped after the ingest's end
		}
		bk := WebIndexBucket{EndS: to.Seconds(), Pages: pages[b].Items, PagesPerS: pages[b].RatePerS,
			TopMS: inBucket(tops, from, to), LinksMS: inBucket(links, from, to), ReadMS: inBucket(reads, from, to)}
		if b == n-1 {
			bk.EndS = total.Seconds()
		}
		bk.Recapture = recapAt >= 0 && to > recapAt
		var both []time.Duration
		for _, qs := range [][]webQuery{tops, links} {
			for _, q := range qs {
				if q.at >= from && q.at < to {
					both = append(both, q.took)
				}
			}
		}
		if len(both) > 0 {
			rep.Steps[b].LatencyMS = percentiles(both)
		}
		rep.Timeline[b] = bk
	}
	if recapAt < 0 {
		rep.RecaptureStartS = -1
		rep.FirstPhaseLinksPerS = rep.RatePerS
		return
	}
	rep.RecaptureStartS = recapAt.Seconds()
	var atStart int64
	for _, s := range samples {
		if s.at <= recapAt {
			atStart = s.links
		}
	}
	last := samples[len(samples)-1]
	if recapAt > 0 {
		rep.FirstPhaseLinksPerS = float64(atStart) / recapAt.Seconds()
	}
	if d := (last.at - recapAt).Seconds(); d > 0 {
		rep.RecapturePhaseLinksPerS = float64(last.links-atStart) / d
	}
}

// parseOnly runs the WARC reader over the files on one goroutine, as the
// ingest's reader does, and returns the records and links read and the
// seconds it took.
func parseOnly(ctx context.Context, paths []string, progress func(done int)) (records, links int64, secs float64, err error) {
	start := time.Now()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return 0, 0, 0, err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return 0, 0, 0, err
		}
		rd := warc.NewReader(f, fi.Size(), 0, warc.Options{})
		for {
			rec, err := rd.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			var re *warc.RecordError
			if errors.As(err, &re) {
				continue
			}
			if err != nil {
				f.Close()
				return 0, 0, 0, fmt.Errorf("%s: %w", p, err)
			}
			if rec.Target.SURT == "" {
				continue
			}
			records++
			links += int64(len(rec.Links))
			if records%1000 == 0 {
				progress(int(records))
			}
		}
		f.Close()
	}
	progress(int(records))
	return records, links, time.Since(start).Seconds(), nil
}

// ReadWebIndexReport reads a report written by WriteJSON, to draw its
// charts again.
func ReadWebIndexReport(path string) (*WebIndexReport, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	rep := &WebIndexReport{}
	if err := json.Unmarshal(b, rep); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if rep.Report == nil || rep.Scenario != "webindex" {
		return nil, fmt.Errorf("%s is not a webindex report", path)
	}
	return rep, nil
}

// WriteJSON writes the report to path.
func (rep *WebIndexReport) WriteJSON(path string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// Summary is the report's one-line summary.
func (rep *WebIndexReport) Summary() string {
	return fmt.Sprintf("webindex %s: %d pages, %d links in %.1f s: %.0f links/s (%.0f pages/s), flatness %.2f (first captures %.0f links/s, re-captures %.0f links/s); raw limit %.0f links/s (%.0f%% of it); parse only %.0f links/s; top-10 p99 %.2f ms, inbound p99 %.2f ms (a one-row read's %.2f ms); peak RSS %.0f MiB; %d errors",
		rep.Backend, rep.Pages, rep.Items, rep.Seconds, rep.RatePerS, rep.PagesPerS, rep.Flatness, rep.FirstPhaseLinksPerS, rep.RecapturePhaseLinksPerS,
		rep.RawLimitPerS, 100*rep.FractionLimit, rep.ParseOnlyLinksPerS, rep.QueryTopMS.P99, rep.QueryLinksMS.P99, rep.QueryReadMS.P99, float64(rep.PeakRSSBytes)/(1<<20), rep.Errors) +
		rep.atSizeSummary()
}

// atSizeSummary is the summary's part about the raw limit at the index's
// size, "" when it was not measured.
func (rep *WebIndexReport) atSizeSummary() string {
	if rep.RawAtSize == nil {
		return ""
	}
	return fmt.Sprintf("; raw limit at the index's size %.0f links/s (%.0f%% of it, the last step %.0f%%)",
		rep.RawAtSize.LinksPerS, 100*rep.FractionAtSize, 100*rep.LastFractionAtSize)
}

// stepMid is the middle of each step in seconds into the ingest.
func (rep *WebIndexReport) stepMid() []float64 {
	xs := make([]float64, len(rep.Steps))
	t := 0.0
	for i, s := range rep.Steps {
		xs[i] = t + s.Seconds/2
		t += s.Seconds
	}
	return xs
}

// LinksChart is the chart of links/s over the ingest: the first captures,
// then the re-captures (their start marked), against the goal and the raw
// limit.
func (rep *WebIndexReport) LinksChart() chart {
	xs := rep.stepMid()
	c := chart{title: fmt.Sprintf("bench webindex (%s): links indexed per second, %s pages", rep.Backend, fmtNum(float64(rep.Pages))),
		xlabel: "seconds into the ingest", ylabel: "links/s"}
	firstL := line{name: "first captures"}
	recapL := line{name: "re-captures"}
	top := 0.0
	for i, s := range rep.Steps {
		top = max(top, s.RatePerS)
		rc := i < len(rep.Timeline) && rep.Timeline[i].Recapture
		// the bucket where the phase changes belongs to both lines, so the
		// curve is unbroken
		if !rc || (i > 0 && !rep.Timeline[i-1].Recapture) {
			firstL.xs, firstL.ys = append(firstL.xs, xs[i]), append(firstL.ys, s.RatePerS)
		}
		if rc {
			recapL.xs, recapL.ys = append(recapL.xs, xs[i]), append(recapL.ys, s.RatePerS)
		}
	}
	c.lines = append(c.lines, firstL)
	if len(recapL.xs) > 0 {
		c.lines = append(c.lines, recapL)
	}
	end := rep.Seconds
	c.lines = append(c.lines, line{name: "goal 50k/s", xs: []float64{0, end}, ys: []float64{WebIndexGoal, WebIndexGoal}, dashed: true})
	top = max(top, WebIndexGoal)
	if rep.RawLimitPerS > 0 {
		c.lines = append(c.lines, line{name: "raw limit, empty tables", xs: []float64{0, end}, ys: []float64{rep.RawLimitPerS, rep.RawLimitPerS}, dashed: true})
		top = max(top, rep.RawLimitPerS)
	}
	if rep.RawAtSize != nil && rep.RawAtSize.LinksPerS > 0 {
		v := rep.RawAtSize.LinksPerS
		c.lines = append(c.lines, line{name: "raw limit at the final size", xs: []float64{0, end}, ys: []float64{v, v}, dashed: true})
		top = max(top, v)
	}
	if rep.RecaptureStartS >= 0 {
		c.lines = append(c.lines, line{name: "re-captures begin", xs: []float64{rep.RecaptureStartS, rep.RecaptureStartS}, ys: []float64{0, top}, dashed: true})
	}
	return c
}

// LatencyChart is the chart of the queries' p50 and p99 over the ingest.
func (rep *WebIndexReport) LatencyChart() chart {
	xs := rep.stepMid()
	c := chart{title: "Query latency while ingesting (p50, p99 per time bucket)", xlabel: "seconds into the ingest", ylabel: "latency (ms)"}
	ls := []line{{name: "top 10 of a domain p50"}, {name: "top 10 p99"}, {name: "inbound links p50"}, {name: "inbound p99"},
		{name: "one-row read p50"}, {name: "one-row read p99"}}
	lo, hi := 1e18, 0.0
	for i, b := range rep.Timeline {
		for j, l := range []*Latency{b.TopMS, b.TopMS, b.LinksMS, b.LinksMS, b.ReadMS, b.ReadMS} {
			if l == nil {
				continue
			}
			v := l.P50
			if j%2 == 1 {
				v = l.P99
			}
			ls[j].xs, ls[j].ys = append(ls[j].xs, xs[i]), append(ls[j].ys, v)
			if v > 0 {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	ls[1].dashed, ls[3].dashed, ls[5].dashed = true, true, true
	c.lines = ls
	c.logY = hi > 0 && hi/lo > 20
	return c
}

// PagesChart is the pages indexed per second over the ingest.
func (rep *WebIndexReport) PagesChart() chart {
	s := Series{Name: "pages indexed per second", Unit: "pages/s", XLabel: "seconds into the ingest"}
	xs := rep.stepMid()
	for i, b := range rep.Timeline {
		s.X, s.Y = append(s.X, xs[i]), append(s.Y, b.PagesPerS)
	}
	return seriesChart(s)
}

// standalone makes an inline chart a file of its own.
func standalone(svg template.HTML) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + strings.Replace(string(svg), "<svg ", `<svg xmlns="http://www.w3.org/2000/svg" `, 1) + "\n")
}

// WriteLinksSVG writes the links/s chart as a standalone SVG file.
func (rep *WebIndexReport) WriteLinksSVG(path string) error {
	return os.WriteFile(path, standalone(rep.LinksChart().svg()), 0o644)
}

// WriteHTML writes dir/index.html (the summary, the charts of links/s,
// pages/s and query latency over the ingest, the steps and the JSON) and
// the charts as standalone SVG files (links.svg, latency.svg).
func (rep *WebIndexReport) WriteHTML(dir string) error {
	links, lat := rep.LinksChart().svg(), rep.LatencyChart().svg()
	charts := []template.HTML{links, rep.PagesChart().svg(), lat}
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	var params []string
	for _, k := range slices.Sorted(maps.Keys(rep.Params)) {
		params = append(params, fmt.Sprintf("%s=%v", k, rep.Params[k]))
	}
	params = append(params, fmt.Sprintf("pages=%d pages_per_s=%.0f parse_only_links_per_s=%.0f query_top_ms(p50/p95/p99/max)=%s query_links_ms=%s recapture_start_s=%.1f",
		rep.Pages, rep.PagesPerS, rep.ParseOnlyLinksPerS, fmtLatency(&rep.QueryTopMS), fmtLatency(&rep.QueryLinksMS), rep.RecaptureStartS))
	var b strings.Builder
	if err := pageTemplate.Execute(&b, map[string]any{"R": rep.Report, "Charts": charts, "JSON": string(js), "Params": strings.Join(params, " ")}); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, data := range map[string][]byte{"index.html": []byte(b.String()), "links.svg": standalone(links), "latency.svg": standalone(lat)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return fmt.Errorf("write html report: %w", err)
		}
	}
	return nil
}
