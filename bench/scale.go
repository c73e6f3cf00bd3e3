package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ingest"
	"github.com/shelfmark/shelfmark/oai"
)

// ScaleConfig configures the scale scenario: Works patents (the patents
// shape with its XML full text only: 31–69 statements, mean 54, one file
// of about 4 KB each) ingested into one collection through the bulk ingest
// pipeline, with a checkpoint every Checkpoint works that brings the
// OAI-PMH view and the search index up to date, reads the size of every
// table and index, and times queries on the loaded database.
type ScaleConfig struct {
	Works      int // default 5,000,000
	Checkpoint int // works between checkpoints (default 1,000,000)
	Batch      int // items per engine call (default 64, ingest's default)
	Workers    int // ingest workers storing files (default: the number of cores)
	// Samples is how many times each query is timed at each checkpoint
	// (default 200).
	Samples int
	// SharedFiles stores every work's XML as one of 256 texts instead of
	// a text of its own: the files table still holds one row per work
	// (its name, size and SHA-256), but the content store holds 256 blobs,
	// so a run of millions of works fits on a small disk.
	SharedFiles bool
	Seed        uint64
	// BlobDir is the content store's directory, walked at each checkpoint
	// for the bytes it holds ("" leaves them out).
	BlobDir string
	// Probe reads the database's sizes and the OAI-PMH view's datestamps
	// through a connection of its own.
	Probe *ScaleProbe
	// Progress, when set, is told how many works are done (stored,
	// skipped or failed) and what is happening.
	Progress func(stage string, done int)
	// Checkpointed, when set, is given the report after every checkpoint
	// (so that a run cut short still leaves its figures).
	Checkpointed func(*Report) error
	// Resume, when set, is the report of an earlier run cut short on the
	// same database (read with ReadScaleReport). Its checkpoints and steps
	// are kept, its one collection is found again, and the ingest goes on
	// from its last checkpoint; the works that run stored after that
	// checkpoint are recognised by their sources and skipped, and count as
	// stored (in Params "resume_skipped"), so the first interval's rate and
	// CPU are per work stored in it.
	Resume *Report
}

// Scale query names, in the order they are timed at each checkpoint.
const (
	ScaleFetch       = "fetch one work by id (random)"
	ScaleMembers     = "collection members, a page of 100 at a random depth in the second half (keyset)"
	ScaleOAIFirst    = "OAI-PMH ListRecords oai_dc, first page"
	ScaleOAIDeep     = "OAI-PMH ListRecords oai_dc, a page at a resumption token deep in the list"
	ScaleSearchOne   = "search: one work's identifier (1 match), first page with facets"
	ScaleSearchEvery = "search: a word in every work, first page with facets"
)

// ScaleQuery is the latency of one query at a checkpoint.
type ScaleQuery struct {
	Name    string  `json:"name"`
	Samples int     `json:"samples"`
	Latency Latency `json:"latency_ms"`
}

// Relation is the size of one table or index, as the database reports it.
type Relation struct {
	Name string `json:"name"`
	// Kind is "table" or "index".
	Kind string `json:"kind"`
	// Table is the table an index belongs to.
	Table string `json:"table,omitempty"`
	// Bytes is the relation's own size (PostgreSQL: pg_relation_size, the
	// main fork).
	Bytes int64 `json:"bytes"`
	// IndexBytes (tables) is the size of the table's indexes
	// (pg_indexes_size) and TotalBytes the table with its indexes and
	// TOAST (pg_total_relation_size).
	IndexBytes int64 `json:"index_bytes,omitempty"`
	TotalBytes int64 `json:"total_bytes,omitempty"`
	// Rows is the planner's row estimate (pg_class.reltuples; -1 before
	// the table was first analyzed or where the backend has none).
	Rows int64 `json:"rows"`
}

// ScaleCheckpoint holds the figures of one checkpoint.
type ScaleCheckpoint struct {
	// Works is how many works the repository holds.
	Works int64 `json:"works"`
	// Interval is how many were stored since the last checkpoint, in
	// IngestSeconds, at RatePerS.
	Interval      int64   `json:"interval_works"`
	IngestSeconds float64 `json:"ingest_seconds"`
	RatePerS      float64 `json:"rate_per_s"`
	// CPUPerThousand is this process's CPU time (user and system) per
	// 1,000 works stored in the interval; BackendCPUPerThousand the
	// database server's, where its processes can be read (PostgreSQL on
	// this machine: every process of the cluster that /proc shows, so
	// short-lived ones such as autovacuum workers may be missed).
	CPUPerThousand        float64 `json:"cpu_s_per_1000_works"`
	BackendCPUPerThousand float64 `json:"backend_cpu_s_per_1000_works,omitempty"`
	// ProjectSeconds and IndexSeconds are the time to bring the OAI-PMH
	// view and the search index up to date with the interval's works
	// (not part of IngestSeconds).
	ProjectSeconds float64 `json:"project_seconds"`
	IndexSeconds   float64 `json:"index_seconds"`
	// ProjectCPUPerThousand and IndexCPUPerThousand are their CPU seconds
	// per 1,000 works of the interval: this process's and the database
	// server's (as far as it can be read) together.
	ProjectCPUPerThousand float64 `json:"project_cpu_s_per_1000_works"`
	IndexCPUPerThousand   float64 `json:"index_cpu_s_per_1000_works"`
	// DatabaseBytes is the sum of the tables' total sizes (indexes and
	// TOAST included); BlobBytes what the content store's files take on
	// disk (allocated blocks) and BlobFiles how many there are.
	DatabaseBytes int64 `json:"database_bytes"`
	BlobBytes     int64 `json:"blob_bytes"`
	BlobFiles     int64 `json:"blob_files"`
	// DatabaseBytesPerWork and BlobBytesPerWork divide them by Works.
	DatabaseBytesPerWork float64      `json:"database_bytes_per_work"`
	BlobBytesPerWork     float64      `json:"blob_bytes_per_work"`
	Relations            []Relation   `json:"relations"`
	Queries              []ScaleQuery `json:"queries"`
	// MeasureSeconds is how long the checkpoint's own work took (sizes and
	// queries, not projection and indexing).
	MeasureSeconds float64   `json:"measure_seconds"`
	PeakRSSBytes   int64     `json:"peak_rss_bytes"`
	At             time.Time `json:"at"`
}

// scaleSource is the patents source with media left out and, when shared,
// each work's XML one of the templates as they are.
type scaleSource struct {
	*patentSource
	shared bool
}

// Next implements ingest.Source.
func (s *scaleSource) Next(ctx context.Context) (*ingest.Item, error) {
	i := s.i
	it, err := s.patentSource.Next(ctx)
	if err != nil || !s.shared {
		return it, err
	}
	f := it.Files[0]
	it.Files[0] = memFile(f.Name, f.MediaType, s.xmls[i%len(s.xmls)])
	return it, nil
}

// RunScale runs the scale scenario against a repository, its storage and
// content store. Every query goes through the engine in process: FindResource,
// ListMembers, the OAI-PMH provider's http.Handler (no network), and
// ReadTx.Search as GET /api/v1/search calls it. It returns the report as
// it stands after the last checkpoint reached, with the error that ended
// the run, if any.
func RunScale(ctx context.Context, repo *shelfmark.Repository, store shelfmark.Storage, blobs shelfmark.BlobStore, c ScaleConfig) (*Report, error) {
	if c.Works <= 0 {
		c.Works = 5000000
	}
	if c.Checkpoint <= 0 {
		c.Checkpoint = 1000000
	}
	if c.Batch <= 0 {
		c.Batch = 64
	}
	if c.Workers <= 0 {
		c.Workers = runtime.NumCPU()
	}
	if c.Samples <= 0 {
		c.Samples = 200
	}
	if c.Probe == nil {
		return nil, errors.New("scale: a probe of the database is needed")
	}
	progress := c.Progress
	if progress == nil {
		progress = func(string, int) {}
	}
	fileBytes := "unique"
	if c.SharedFiles {
		fileBytes = "shared"
	}
	rep := &Report{Scenario: "scale", Backend: store.Backend(), Started: time.Now().UTC(),
		Params: map[string]any{"works": c.Works, "checkpoint": c.Checkpoint, "batch": c.Batch, "workers": c.Workers,
			"samples": c.Samples, "file_bytes": fileBytes, "queries_through": "the engine in process (the OAI-PMH provider's http.Handler without network)"}}
	var cps []ScaleCheckpoint
	var ingestSecs float64
	var skipped, resumeSkipped int64
	from := 0 // works numbered before this run
	var coll *shelfmark.Resource
	if c.Resume != nil {
		var err error
		if coll, cps, resumeSkipped, err = resumeScale(ctx, repo, rep, c, fileBytes); err != nil {
			return nil, err
		}
		from, ingestSecs = int(cps[len(cps)-1].Works), c.Resume.Seconds
	} else {
		var err error
		coll, err = repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection,
			Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral("Patents")}}})
		if err != nil {
			return nil, fmt.Errorf("scale: collection: %w", err)
		}
	}
	formats := oai.DefaultRegistry()
	proj := oai.NewProjector(store, blobs, formats, oai.ProjectorOptions{IDs: repo.IDs()})
	prov, err := oai.NewProvider(store, formats, oai.Config{PageSize: 100, IDs: repo.IDs()})
	if err != nil {
		return nil, err
	}
	indexer := shelfmark.NewSearchIndexer(store, shelfmark.IndexerOptions{})
	rng := rand.New(rand.NewPCG(c.Seed+uint64(from), 1<<41))
	for done := from; done < c.Works; {
		n := min(c.Checkpoint, c.Works-done)
		ps := PatentSource(c.Seed, done+n).(*patentSource)
		ps.i, ps.noMedia = done, true
		cpu0 := processCPU()
		bcpu0, bok := c.Probe.BackendCPU(ctx)
		base := done
		start := time.Now()
		st, err := ingest.Run(ctx, repo, blobs, &scaleSource{patentSource: ps, shared: c.SharedFiles},
			ingest.Options{Collection: coll.ID, Workers: c.Workers, Batch: c.Batch, Progress: func(s ingest.Stats) {
				progress("ingest", base+int(s.Stored+s.Skipped+s.Failed))
			}})
		secs := time.Since(start).Seconds()
		if st == nil {
			return rep, fmt.Errorf("scale: ingest of works %d–%d: %w", done+1, done+n, err)
		}
		cpu := processCPU() - cpu0
		bcpu1, bok1 := c.Probe.BackendCPU(ctx)
		rep.Errors += st.Failed
		if c.Resume != nil && base == from {
			// the works the cut run stored after its last checkpoint
			resumeSkipped += st.Skipped
		} else {
			skipped += st.Skipped
		}
		if err == nil && st.Failed > 0 {
			err = fmt.Errorf("scale: %d works failed, the first %s: %s", st.Failed, st.Failures[0].Key, st.Failures[0].Reason)
		}
		if err != nil {
			return rep, err
		}
		done += n
		ingestSecs += secs
		cp := ScaleCheckpoint{Works: int64(done) - skipped, Interval: st.Stored, IngestSeconds: secs, RatePerS: float64(st.Stored) / secs}
		if st.Stored > 0 {
			cp.CPUPerThousand = cpu.Seconds() * 1000 / float64(st.Stored)
			if bok && bok1 {
				cp.BackendCPUPerThousand = (bcpu1 - bcpu0).Seconds() * 1000 / float64(st.Stored)
			}
		}
		// the derived views, as serve's projector and indexer keep them
		// (CPU of this process and of the server, per 1,000 works)
		cpuNow := func() time.Duration {
			b, _ := c.Probe.BackendCPU(ctx)
			return processCPU() + b
		}
		perThousand := func(d time.Duration) float64 { return d.Seconds() * 1000 / float64(max(1, st.Stored)) }
		progress("render OAI-PMH records", done)
		t0, c0 := time.Now(), cpuNow()
		if _, err := proj.CatchUp(ctx); err != nil {
			return rep, fmt.Errorf("scale: project: %w", err)
		}
		cp.ProjectSeconds, cp.ProjectCPUPerThousand = time.Since(t0).Seconds(), perThousand(cpuNow()-c0)
		progress("index for search", done)
		t0, c0 = time.Now(), cpuNow()
		if err := indexer.CatchUp(ctx); err != nil {
			return rep, fmt.Errorf("scale: index: %w", err)
		}
		cp.IndexSeconds, cp.IndexCPUPerThousand = time.Since(t0).Seconds(), perThousand(cpuNow()-c0)

		progress("read sizes", done)
		t0 = time.Now()
		if cp.Relations, err = c.Probe.Relations(ctx); err != nil {
			return rep, err
		}
		for _, r := range cp.Relations {
			if r.Kind == "table" {
				cp.DatabaseBytes += r.TotalBytes
			}
		}
		if c.BlobDir != "" {
			if cp.BlobBytes, cp.BlobFiles, err = diskUsage(c.BlobDir); err != nil {
				return rep, err
			}
		}
		if cp.Works > 0 {
			cp.DatabaseBytesPerWork = float64(cp.DatabaseBytes) / float64(cp.Works)
			cp.BlobBytesPerWork = float64(cp.BlobBytes) / float64(cp.Works)
		}
		progress("time queries", done)
		if cp.Queries, err = scaleQueries(ctx, repo, store, prov, c.Probe, coll.ID, done, c.Samples, rng); err != nil {
			rep.Errors++
			return rep, err
		}
		cp.MeasureSeconds = time.Since(t0).Seconds()
		cp.PeakRSSBytes = PeakRSS(os.Getpid())
		cp.At = time.Now().UTC()
		cps = append(cps, cp)

		fetch := cp.Queries[0].Latency
		rep.Steps = append(rep.Steps, Step{Items: cp.Interval, Seconds: secs, RatePerS: cp.RatePerS, LatencyMS: &fetch, PeakRSS: cp.PeakRSSBytes})
		rep.Items += cp.Interval
		rep.Seconds = ingestSecs
		rep.RatePerS = float64(rep.Items) / ingestSecs
		rep.Flatness = flatness(rep.Steps)
		rep.LatencyMS = fetch
		rep.PeakRSSBytes = cp.PeakRSSBytes
		rep.Params["checkpoints"] = cps
		rep.Params["skipped"] = skipped
		if c.Resume != nil {
			rep.Params["resume_skipped"] = resumeSkipped
		}
		if c.Checkpointed != nil {
			if err := c.Checkpointed(rep); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

// resumeScale prepares rep to go on from c.Resume: it checks that the
// earlier run had the same shape, keeps its checkpoints, steps and totals,
// and finds its collection, the repository's only one. It returns the works
// skipped by the resumes of the earlier run, and records in Params
// "resumed_at" the works at each resume.
func resumeScale(ctx context.Context, repo *shelfmark.Repository, rep *Report, c ScaleConfig, fileBytes string) (*shelfmark.Resource, []ScaleCheckpoint, int64, error) {
	old := c.Resume
	cps := ScaleCheckpoints(old)
	if len(cps) == 0 {
		return nil, nil, 0, errors.New("scale: resume: the earlier report has no checkpoints")
	}
	if fb, _ := old.Params["file_bytes"].(string); fb != fileBytes {
		return nil, nil, 0, fmt.Errorf("scale: resume: the earlier run had --file-bytes %q, this one %q", fb, fileBytes)
	}
	if n, _ := old.Params["skipped"].(float64); n != 0 {
		return nil, nil, 0, fmt.Errorf("scale: resume: the earlier run skipped %v works, so its checkpoints do not count the works numbered", n)
	}
	last := cps[len(cps)-1]
	if last.Works >= int64(c.Works) {
		return nil, nil, 0, fmt.Errorf("scale: resume: the earlier run reached %d works already (--objects %d)", last.Works, c.Works)
	}
	page, err := repo.ListResources(ctx, shelfmark.KindCollection, shelfmark.PageRequest{Limit: 2})
	if err != nil {
		return nil, nil, 0, fmt.Errorf("scale: resume: find the collection: %w", err)
	}
	if len(page.Items) != 1 {
		return nil, nil, 0, fmt.Errorf("scale: resume: the database holds %d collections, not the earlier run's one", len(page.Items))
	}
	rep.Started, rep.Steps, rep.Items, rep.Errors = old.Started, old.Steps, old.Items, old.Errors
	var at []int64
	switch prev := old.Params["resumed_at"].(type) {
	case []any:
		for _, v := range prev {
			if f, ok := v.(float64); ok {
				at = append(at, int64(f))
			}
		}
	case float64: // one resume, as first written
		at = append(at, int64(prev))
	}
	rep.Params["resumed_at"] = append(at, last.Works)
	skipped, _ := old.Params["resume_skipped"].(float64)
	return page.Items[0], cps, int64(skipped), nil
}

// ScaleCheckpoints returns the checkpoints of a scale report.
func ScaleCheckpoints(rep *Report) []ScaleCheckpoint {
	cps, _ := rep.Params["checkpoints"].([]ScaleCheckpoint)
	return cps
}

// ReadScaleReport reads the JSON report of a scale run (as written by
// Report.WriteJSON after each checkpoint) with its checkpoints decoded, so
// ScaleCheckpoints, ScaleSeries and WriteScaleCharts work on it.
func ReadScaleReport(b []byte) (*Report, error) {
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("read scale report: %w", err)
	}
	var p struct {
		Checkpoints []ScaleCheckpoint `json:"checkpoints"`
	}
	if err := json.Unmarshal(b, &struct {
		Params any `json:"params"`
	}{&p}); err != nil {
		return nil, fmt.Errorf("read scale report checkpoints: %w", err)
	}
	if len(p.Checkpoints) == 0 {
		return nil, fmt.Errorf("read scale report: no checkpoints (not a report of bench scale)")
	}
	rep.Params["checkpoints"] = p.Checkpoints
	return &rep, nil
}

// tokenRE finds a resumptionToken's text in an OAI-PMH response.
var tokenRE = regexp.MustCompile(`<resumptionToken[^>]*>([^<]+)</resumptionToken>`)

// scaleQueries times each scale query samples times on a repository of
// works works (patent numbers 0..works-1) in collection coll.
func scaleQueries(ctx context.Context, repo *shelfmark.Repository, store shelfmark.Storage, prov http.Handler, probe *ScaleProbe,
	coll shelfmark.ID, works, samples int, rng *rand.Rand) ([]ScaleQuery, error) {
	timeIt := func(name string, f func(k int) error) (ScaleQuery, error) {
		ds := make([]time.Duration, 0, samples)
		for k := 0; k < samples; k++ {
			t0 := time.Now()
			if err := f(k); err != nil {
				return ScaleQuery{}, fmt.Errorf("scale: %s: %w", name, err)
			}
			ds = append(ds, time.Since(t0))
		}
		return ScaleQuery{Name: name, Samples: samples, Latency: *percentiles(ds)}, nil
	}
	// ids of random works, looked up before timing
	pick := func(lo, hi int) []int {
		out := make([]int, samples)
		for k := range out {
			out[k] = lo + rng.IntN(max(1, hi-lo))
		}
		return out
	}
	resolve := func(nums []int) ([]shelfmark.ID, error) {
		keys := make([]string, len(nums))
		for k, n := range nums {
			keys[k] = fmt.Sprintf("patent:EP%07d", n)
		}
		found, err := repo.FindSources(ctx, keys)
		if err != nil {
			return nil, err
		}
		ids := make([]shelfmark.ID, len(nums))
		for k, key := range keys {
			id, ok := found[key]
			if !ok {
				return nil, fmt.Errorf("scale: %s was not stored", key)
			}
			ids[k] = id
		}
		return ids, nil
	}
	fetchNums := pick(0, works)
	fetchIDs, err := resolve(fetchNums)
	if err != nil {
		return nil, err
	}
	// cursors of member pages deep in the collection: members in the
	// second half of the listing's key order (not of the works' numbers,
	// which parallel ingest stores in another order), never the last
	collKey, err := repo.IDs().Key(coll)
	if err != nil {
		return nil, fmt.Errorf("scale: collection %s: %w", coll, err)
	}
	deepIDs := make([]shelfmark.ID, samples)
	for k := range deepIDs {
		key, err := probe.MemberAt(ctx, collKey, 0.5+0.49*rng.Float64())
		if err != nil {
			return nil, err
		}
		deepIDs[k] = repo.IDs().Encode(key)
	}
	var out []ScaleQuery
	q, err := timeIt(ScaleFetch, func(k int) error {
		r, err := repo.FindResource(ctx, fetchIDs[k])
		if err != nil {
			return err
		}
		if len(r.Metadata) < 31 || len(r.MemberOf) != 1 {
			return fmt.Errorf("work %s: %d statements, %d collections", r.ID, len(r.Metadata), len(r.MemberOf))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out = append(out, q)
	if q, err = timeIt(ScaleMembers, func(k int) error {
		p, err := repo.ListMembers(ctx, coll, shelfmark.PageRequest{After: shelfmark.Cursor(deepIDs[k]), Limit: 100})
		if err != nil {
			return err
		}
		if len(p.Items) == 0 {
			return fmt.Errorf("no members after %s", deepIDs[k])
		}
		return nil
	}); err != nil {
		return nil, err
	}
	out = append(out, q)
	get := func(query string) (string, error) {
		req := httptest.NewRequestWithContext(shelfmark.WithCaller(ctx, shelfmark.Anonymous()), http.MethodGet, "/oai?"+query, nil)
		w := httptest.NewRecorder()
		prov.ServeHTTP(w, req)
		body, _ := io.ReadAll(w.Result().Body)
		if w.Code != http.StatusOK || !regexp.MustCompile(`<record>`).Match(body) {
			return "", fmt.Errorf("%s: status %d: %.300s", query, w.Code, body)
		}
		return string(body), nil
	}
	if q, err = timeIt(ScaleOAIFirst, func(int) error {
		_, err := get("verb=ListRecords&metadataPrefix=oai_dc")
		return err
	}); err != nil {
		return nil, err
	}
	out = append(out, q)
	// resumption tokens deep in the list: the token of the first page of
	// a from= window starting at a datestamp in the second half
	var tokens []string
	for k := 0; k < 10; k++ {
		ds, err := probe.Datestamp(ctx, 0.5+0.49*rng.Float64())
		if err != nil {
			return nil, err
		}
		body, err := get("verb=ListRecords&metadataPrefix=oai_dc&from=" + time.Unix(ds, 0).UTC().Format("2006-01-02T15:04:05Z"))
		if err != nil {
			return nil, err
		}
		if m := tokenRE.FindStringSubmatch(body); m != nil {
			tokens = append(tokens, m[1])
		}
	}
	if len(tokens) == 0 {
		return nil, errors.New("scale: no resumption token deep in the OAI-PMH list")
	}
	if q, err = timeIt(ScaleOAIDeep, func(k int) error {
		_, err := get("verb=ListRecords&resumptionToken=" + tokens[k%len(tokens)])
		return err
	}); err != nil {
		return nil, err
	}
	out = append(out, q)
	search := func(text string) error {
		var r *shelfmark.SearchResult
		err := store.View(ctx, func(tx shelfmark.ReadTx) error {
			var err error
			r, err = tx.Search(ctx, shelfmark.SearchQuery{Text: text, Limit: 20, Facets: true, Now: time.Now()})
			return err
		})
		if err != nil {
			return err
		}
		if len(r.Hits) == 0 {
			return fmt.Errorf("search %q: no hits", text)
		}
		return nil
	}
	if q, err = timeIt(ScaleSearchOne, func(k int) error { return search(fmt.Sprintf("EP%07d", fetchNums[k])) }); err != nil {
		return nil, err
	}
	out = append(out, q)
	if q, err = timeIt(ScaleSearchEvery, func(int) error { return search("apparatus") }); err != nil {
		return nil, err
	}
	return append(out, q), nil
}

// diskUsage returns the bytes the regular files below dir take on disk
// (allocated blocks) and how many there are.
func diskUsage(dir string) (bytes, files int64, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files++
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			bytes += st.Blocks * 512
		} else {
			bytes += info.Size()
		}
		return nil
	})
	if err != nil {
		return 0, 0, fmt.Errorf("scale: content store size: %w", err)
	}
	return bytes, files, nil
}

// ScaleSeries returns the scale report's figures per checkpoint as series
// for the HTML report: the ingest rate, the bytes per work, and each
// query's p99, against the works stored.
func ScaleSeries(rep *Report) []Series {
	cps := ScaleCheckpoints(rep)
	rate := Series{Name: "works stored per second, by checkpoint interval", Unit: "works/s", XLabel: "works stored"}
	cpu := Series{Name: "CPU seconds per 1,000 works (this process + database server)", Unit: "s", XLabel: "works stored"}
	size := Series{Name: "bytes per work, database + content store", Unit: "bytes/work", XLabel: "works stored"}
	out := []Series{}
	for _, cp := range cps {
		x := float64(cp.Works)
		rate.X, rate.Y = append(rate.X, x), append(rate.Y, cp.RatePerS)
		cpu.X, cpu.Y = append(cpu.X, x), append(cpu.Y, cp.CPUPerThousand+cp.BackendCPUPerThousand)
		size.X, size.Y = append(size.X, x), append(size.Y, cp.DatabaseBytesPerWork+cp.BlobBytesPerWork)
	}
	out = append(out, rate, cpu, size)
	if len(cps) > 0 {
		for k, q := range cps[0].Queries {
			s := Series{Name: "p99 of " + q.Name, Unit: "ms", XLabel: "works stored"}
			for _, cp := range cps {
				if k < len(cp.Queries) {
					s.X, s.Y = append(s.X, float64(cp.Works)), append(s.Y, cp.Queries[k].Latency.P99)
				}
			}
			out = append(out, s)
		}
	}
	return out
}

// WriteScaleCharts writes the scale report's charts as stand-alone SVG
// files into dir: scale-rate.svg (works/s and CPU per 1,000 works by
// checkpoint), scale-bytes.svg (bytes per work: database, content store)
// and scale-latency.svg and scale-latency-p50.svg (the p99 and p50 of
// every query by checkpoint).
func WriteScaleCharts(dir string, rep *Report) error {
	cps := ScaleCheckpoints(rep)
	var xs []float64
	for _, cp := range cps {
		xs = append(xs, float64(cp.Works))
	}
	pts := func(name string, dashed bool, f func(ScaleCheckpoint) float64) line {
		l := line{name: name, dashed: dashed}
		for k, cp := range cps {
			l.xs, l.ys = append(l.xs, xs[k]), append(l.ys, f(cp))
		}
		return l
	}
	rate := chart{title: "Ingest rate per checkpoint interval (works/s)", xlabel: "works stored", ylabel: "works/s", xticks: xs,
		lines: []line{pts("works/s", false, func(cp ScaleCheckpoint) float64 { return cp.RatePerS })}}
	cpu := chart{title: "CPU seconds per 1,000 works", xlabel: "works stored", ylabel: "CPU s / 1,000 works", xticks: xs,
		lines: []line{pts("shelfmark (ingest)", false, func(cp ScaleCheckpoint) float64 { return cp.CPUPerThousand }),
			pts("database server (ingest)", true, func(cp ScaleCheckpoint) float64 { return cp.BackendCPUPerThousand }),
			pts("OAI-PMH view (both)", false, func(cp ScaleCheckpoint) float64 { return cp.ProjectCPUPerThousand }),
			pts("search index (both)", false, func(cp ScaleCheckpoint) float64 { return cp.IndexCPUPerThousand })}}
	size := chart{title: "Bytes per work", xlabel: "works stored", ylabel: "bytes per work", xticks: xs,
		lines: []line{pts("database (tables, indexes, TOAST)", false, func(cp ScaleCheckpoint) float64 { return cp.DatabaseBytesPerWork }),
			pts("content store (blocks on disk)", true, func(cp ScaleCheckpoint) float64 { return cp.BlobBytesPerWork })}}
	lat := chart{title: "Query latency per checkpoint, p99", xlabel: "works stored", ylabel: "ms", xticks: xs, logY: true}
	lat50 := chart{title: "Query latency per checkpoint, p50", xlabel: "works stored", ylabel: "ms", xticks: xs, logY: true}
	if len(cps) > 0 {
		short := []string{"fetch a work", "members, deep page", "OAI first page", "OAI deep token", "search, 1 match", "search, every work"}
		for k := range cps[0].Queries {
			name := cps[0].Queries[k].Name
			if k < len(short) {
				name = short[k]
			}
			get := func(p99 bool) func(ScaleCheckpoint) float64 {
				return func(cp ScaleCheckpoint) float64 {
					if k >= len(cp.Queries) {
						return math.NaN()
					}
					if p99 {
						return cp.Queries[k].Latency.P99
					}
					return cp.Queries[k].Latency.P50
				}
			}
			lat.lines = append(lat.lines, pts(name, false, get(true)))
			lat50.lines = append(lat50.lines, pts(name, false, get(false)))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, c := range map[string]chart{"scale-rate.svg": rate, "scale-cpu.svg": cpu, "scale-bytes.svg": size, "scale-latency.svg": lat, "scale-latency-p50.svg": lat50} {
		svg := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + strings.Replace(string(c.svg()), "<svg ", `<svg xmlns="http://www.w3.org/2000/svg" `, 1) + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(svg), 0o644); err != nil {
			return fmt.Errorf("scale chart: %w", err)
		}
	}
	return nil
}
