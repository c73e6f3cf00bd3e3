package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/shelfmark/shelfmark"
	shttp "github.com/shelfmark/shelfmark/http"
	"github.com/shelfmark/shelfmark/oai"
)

// OAIConfig configures the oai scenario (docs/design.md): Records works, a full
// ListRecords harvest of them at PageSize records per page by a built-in
// client over HTTP on 127.0.0.1, the same harvest again asking for gzip,
// page 1 against a deep page, then a harvest while works are being
// ingested.
type OAIConfig struct {
	Records  int // default 1,000,000
	PageSize int // default 100
	Triples  int // statements per work (default 54)
	Sets     int // collections the works are spread over (default 10)
	Batch    int // works per CreateResources call (default 500)
	// IngestBatch is how many works each commit adds during the second
	// harvest (default 100).
	IngestBatch int
	Buckets     int // time buckets of the harvest (default 20)
	Seed        uint64
	// Progress, when set, is told what is happening and how far it is.
	Progress func(stage string, done, total int)
}

// OAIResult holds the oai scenario's own figures.
type OAIResult struct {
	Report *Report
	// FillPerS and ProjectPerS are the rates of storing the works and of
	// rendering their records into the OAI-PMH view.
	FillPerS, ProjectPerS float64
	// First, Middle and Last are the latencies of the first, middle and
	// last 1% of the pages (at least 5 pages each).
	First, Middle, Last Latency
	// LastOverFirst is Last.P50 / First.P50 (target ≤ 1.2).
	LastOverFirst float64
	// Page1 and Deep are the latencies of page 1 of the list (which finds
	// the list's range and completeListSize) and of the page at 99% of
	// its depth, each fetched again and again after the harvests, in
	// turns; DeepPage is that page's number.
	Page1, Deep Latency
	DeepPage    int
	// Bytes is what the plain harvest moved (uncompressed XML).
	Bytes int64
	// Gzip is the quiet harvest again with Accept-Encoding: gzip, its
	// records decompressed by the client; GzipBytes is what it moved on
	// the wire.
	Gzip      *Report
	GzipBytes int64
	// PageMS is every page's latency in harvest order (for the chart).
	PageMS []float64
	// During is the second harvest, run while works were ingested.
	During *Report
	// DuringIngestPerS is the ingest rate during the second harvest.
	DuringIngestPerS float64
	// DuringPageMS is every page's latency of the second harvest.
	DuringPageMS []float64
}

// RunOAI runs the oai scenario against a repository, its storage and blob
// store: the provider and the projector are the real ones, served by
// net/http on a loopback port.
func RunOAI(ctx context.Context, repo *shelfmark.Repository, store shelfmark.Storage, blobs shelfmark.BlobStore, c OAIConfig) (*OAIResult, error) {
	if c.Records <= 0 {
		c.Records = 1000000
	}
	if c.PageSize <= 0 {
		c.PageSize = 100
	}
	if c.Triples <= 0 {
		c.Triples = 54
	}
	if c.Sets <= 0 {
		c.Sets = 10
	}
	if c.Batch <= 0 {
		c.Batch = 500
	}
	if c.IngestBatch <= 0 {
		c.IngestBatch = 100
	}
	if c.Buckets <= 0 {
		c.Buckets = 20
	}
	progress := c.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	res := &OAIResult{}
	rep := &Report{Scenario: "oai", Backend: store.Backend(), Started: time.Now().UTC(),
		Params: map[string]any{"records": c.Records, "page_size": c.PageSize, "triples": c.Triples, "sets": c.Sets}}
	res.Report = rep

	// fill
	var colls []shelfmark.ID
	for i := 0; i < c.Sets; i++ {
		r, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection,
			Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDCTerms + "title", Object: shelfmark.NewLiteral(fmt.Sprintf("Set %d", i+1))}}})
		if err != nil {
			return nil, err
		}
		colls = append(colls, r.ID)
	}
	start := time.Now()
	nrs := make([]*shelfmark.NewResource, 0, c.Batch)
	for done := 0; done < c.Records; {
		n := min(c.Batch, c.Records-done)
		nrs = nrs[:0]
		for i := 0; i < n; i++ {
			nrs = append(nrs, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{colls[(done+i)%len(colls)]},
				Metadata: patentStatements(c.Seed, done+i, c.Triples)})
		}
		if _, errs := repo.CreateResources(ctx, nrs); errors.Join(errs...) != nil {
			return nil, fmt.Errorf("works %d–%d: %w", done+1, done+n, errors.Join(errs...))
		}
		done += n
		progress("store works", done, c.Records)
	}
	res.FillPerS = float64(c.Records) / time.Since(start).Seconds()

	// project
	formats := oai.DefaultRegistry()
	proj := oai.NewProjector(store, blobs, formats, oai.ProjectorOptions{IDs: repo.IDs()})
	start = time.Now()
	for done := 0; ; {
		n, err := proj.Step(ctx)
		if err != nil {
			return nil, fmt.Errorf("project: %w", err)
		}
		if n == 0 {
			break
		}
		done += n
		progress("render records", min(done, c.Records+c.Sets), c.Records+c.Sets)
	}
	res.ProjectPerS = float64(c.Records) / time.Since(start).Seconds()

	// raw limit: the same rows read page by page from the view, in
	// process, without HTTP or XML
	raw, err := rawViewRead(ctx, store, c.PageSize, 3*time.Second)
	if err != nil {
		return nil, err
	}
	rep.RawLimitPerS, rep.RawLimitWhat = raw, fmt.Sprintf("the view's rows read %d at a time through the storage interface, in process (no HTTP, no XML)", c.PageSize)

	// serve
	prov, err := oai.NewProvider(store, formats, oai.Config{PageSize: c.PageSize, IDs: repo.IDs()})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/oai", shttp.Gzip(prov)) // as serve mounts it
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	base := "http://" + ln.Addr().String() + "/oai"
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 2, DisableCompression: true}, Timeout: 60 * time.Second}

	// harvest 1: quiet
	pages := (c.Records + c.PageSize - 1) / c.PageSize
	deepPage := max(2, pages*99/100)
	h, err := harvest(ctx, client, base, c.Records, c.Buckets, false, deepPage, func(n int) { progress("harvest", n, c.Records) })
	if err != nil {
		return nil, err
	}
	rep.Items, rep.Seconds, rep.RatePerS, rep.Steps, rep.Flatness = h.records, h.seconds, float64(h.records)/h.seconds, h.steps, flatness(h.steps)
	rep.LatencyMS = *percentiles(append([]time.Duration(nil), h.pages...))
	if raw > 0 {
		rep.FractionLimit = rep.RatePerS / raw
	}
	if h.records != int64(c.Records) {
		rep.Errors++
		return res, fmt.Errorf("harvest: %d records, want %d", h.records, c.Records)
	}
	res.First, res.Middle, res.Last = depthLatency(h.pages)
	if res.First.P50 > 0 {
		res.LastOverFirst = res.Last.P50 / res.First.P50
	}
	res.PageMS = millis(h.pages)
	rep.Params["fill_per_s"], rep.Params["project_per_s"] = res.FillPerS, res.ProjectPerS
	rep.Params["first_pages_p50_ms"], rep.Params["middle_pages_p50_ms"], rep.Params["last_pages_p50_ms"], rep.Params["last_over_first"] =
		res.First.P50, res.Middle.P50, res.Last.P50, res.LastOverFirst
	res.Bytes = h.wire
	rep.Params["bytes"] = h.wire

	// harvest 1 again, gzipped
	hz, err := harvest(ctx, client, base, c.Records, c.Buckets, true, 0, func(n int) { progress("harvest with gzip", n, c.Records) })
	if err != nil {
		return nil, err
	}
	if hz.records != int64(c.Records) || hz.raw != h.wire {
		rep.Errors++
		return res, fmt.Errorf("gzipped harvest: %d records, %d bytes decompressed; want %d and %d", hz.records, hz.raw, c.Records, h.wire)
	}
	res.Gzip = &Report{Scenario: "oai-gzip", Backend: rep.Backend, Items: hz.records, Seconds: hz.seconds,
		RatePerS: float64(hz.records) / hz.seconds, Steps: hz.steps, Flatness: flatness(hz.steps),
		LatencyMS: *percentiles(append([]time.Duration(nil), hz.pages...)), Started: time.Now().UTC()}
	res.GzipBytes = hz.wire
	rep.Params["gzip_rate_per_s"], rep.Params["gzip_bytes"], rep.Params["gzip_p50_ms"], rep.Params["gzip_p99_ms"] =
		res.Gzip.RatePerS, hz.wire, res.Gzip.LatencyMS.P50, res.Gzip.LatencyMS.P99

	// page 1 against a deep page, in turns
	if h.deepQuery != "" {
		res.DeepPage = deepPage
		res.Page1, res.Deep, err = firstVersusDeep(ctx, client, base, h.deepQuery, 50)
		if err != nil {
			return nil, err
		}
		rep.Params["page1_p50_ms"], rep.Params["page1_p99_ms"], rep.Params["deep_page"], rep.Params["deep_p50_ms"], rep.Params["deep_p99_ms"] =
			res.Page1.P50, res.Page1.P99, deepPage, res.Deep.P50, res.Deep.P99
	}

	// harvest 2: while works are ingested (and projected, as serve does)
	ictx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var added atomic.Int64
	var passed atomic.Bool // the harvest reached the records that existed: stop adding
	var ingestErr error
	wg.Add(2)
	go func() {
		defer wg.Done()
		_ = proj.Run(ictx)
	}()
	ingestStart := time.Now()
	go func() {
		defer wg.Done()
		for i := 0; ictx.Err() == nil && !passed.Load(); i++ {
			batch := make([]*shelfmark.NewResource, c.IngestBatch)
			for j := range batch {
				batch[j] = &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{colls[j%len(colls)]},
					Metadata: patentStatements(c.Seed+1, i*c.IngestBatch+j, c.Triples)}
			}
			if _, errs := repo.CreateResources(ictx, batch); errors.Join(errs...) != nil {
				if ictx.Err() == nil {
					ingestErr = errors.Join(errs...)
				}
				return
			}
			added.Add(int64(len(batch)))
			proj.Notify()
		}
	}()
	h2, err := harvest(ctx, client, base, c.Records, c.Buckets, false, 0, func(n int) {
		if n >= c.Records {
			passed.Store(true)
		}
		progress("harvest while ingesting", n, c.Records)
	})
	stop()
	wg.Wait()
	ingestSecs := time.Since(ingestStart).Seconds()
	if err != nil {
		return res, err
	}
	if ingestErr != nil {
		return res, fmt.Errorf("ingest during harvest: %w", ingestErr)
	}
	during := &Report{Scenario: "oai-during-ingest", Backend: rep.Backend, Items: h2.records, Seconds: h2.seconds,
		RatePerS: float64(h2.records) / h2.seconds, Steps: h2.steps, Flatness: flatness(h2.steps),
		LatencyMS: *percentiles(append([]time.Duration(nil), h2.pages...)), Started: time.Now().UTC()}
	res.During, res.DuringIngestPerS, res.DuringPageMS = during, float64(added.Load())/ingestSecs, millis(h2.pages)
	if h2.records < int64(c.Records) {
		rep.Errors++
		return res, fmt.Errorf("harvest during ingest: %d records, fewer than the %d that existed", h2.records, c.Records)
	}
	rep.Params["during_rate_per_s"], rep.Params["during_p50_ms"], rep.Params["during_p99_ms"], rep.Params["during_max_ms"] =
		during.RatePerS, during.LatencyMS.P50, during.LatencyMS.P99, during.LatencyMS.Max
	rep.Params["during_ingest_per_s"], rep.Params["during_added"] = res.DuringIngestPerS, added.Load()
	return res, nil
}

// harvested is what one harvest saw.
type harvested struct {
	records int64
	seconds float64
	pages   []time.Duration
	steps   []Step
	// wire and raw are the bytes of the response bodies as sent and once
	// decompressed (the same without gzip).
	wire, raw int64
	// deepQuery is the query that asked for the deep page harvest was
	// given, "" when the list was shorter.
	deepQuery string
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// rssEvery is how many pages a harvest fetches between two samples of
// the process's resident size (a sample reads /proc: tens of
// microseconds).
const rssEvery = 20

// RSSGrowth is the largest resident size sampled in the last step over
// that of the first (1: memory stayed flat); 0 without samples.
func RSSGrowth(steps []Step) float64 {
	if len(steps) == 0 || steps[0].PeakRSS <= 0 {
		return 0
	}
	return float64(steps[len(steps)-1].PeakRSS) / float64(steps[0].PeakRSS)
}

// harvest walks ListRecords (oai_dc) to its end as a harvester does: one
// request at a time, each with the token of the page before; with gz it
// asks for gzip and decompresses each page. It reads each page whole,
// counts its records and takes the token by scanning the bytes (the
// provider's XML is validated by the test suite, not here). It keeps the
// query of page deepPage (numbered from 1; 0 for none). Each step holds
// the largest resident size of this process sampled in it: the provider
// runs here, so a harvest whose memory grows with its depth shows.
func harvest(ctx context.Context, client *http.Client, base string, expect, buckets int, gz bool, deepPage int, progress func(int)) (*harvested, error) {
	h := &harvested{}
	per := max(1, expect/buckets)
	start := time.Now()
	bucketStart, inBucket := start, 0
	var bucketRSS int64 // the largest resident size sampled in the bucket
	pid := os.Getpid()
	q := "verb=ListRecords&metadataPrefix=oai_dc"
	buf := &bytes.Buffer{}
	var zr *gzip.Reader
	for {
		if len(h.pages)+1 == deepPage {
			h.deepQuery = q
		}
		t0 := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"?"+q, nil)
		if err != nil {
			return nil, err
		}
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, err
		}
		buf.Reset()
		wire := &countingReader{r: resp.Body}
		var body io.Reader = wire
		if resp.Header.Get("Content-Encoding") == "gzip" {
			if zr == nil {
				zr, err = gzip.NewReader(wire)
			} else {
				err = zr.Reset(wire)
			}
			if err != nil {
				resp.Body.Close()
				return nil, fmt.Errorf("page %d: %w", len(h.pages)+1, err)
			}
			body = zr
		} else if gz {
			resp.Body.Close()
			return nil, fmt.Errorf("page %d: asked for gzip, got Content-Encoding %q", len(h.pages)+1, resp.Header.Get("Content-Encoding"))
		}
		_, err = io.Copy(buf, body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		h.wire += wire.n
		h.raw += int64(buf.Len())
		if resp.StatusCode != 200 {
			return nil, fmt.Errorf("page %d: HTTP %d: %.200s", len(h.pages)+1, resp.StatusCode, buf.Bytes())
		}
		h.pages = append(h.pages, time.Since(t0))
		body2 := buf.Bytes()
		if i := bytes.Index(body2, []byte("<error ")); i >= 0 {
			return nil, fmt.Errorf("page %d: %.300s", len(h.pages), body2[i:])
		}
		n := bytes.Count(body2, []byte("<record>"))
		h.records += int64(n)
		inBucket += n
		if len(h.pages)%rssEvery == 0 {
			bucketRSS = max(bucketRSS, currentRSS(pid))
		}
		if inBucket >= per {
			secs := time.Since(bucketStart).Seconds()
			h.steps = append(h.steps, Step{Items: int64(inBucket), Seconds: secs, RatePerS: float64(inBucket) / secs,
				PeakRSS: max(bucketRSS, currentRSS(pid))})
			bucketStart, inBucket, bucketRSS = time.Now(), 0, 0
		}
		progress(int(h.records))
		tok := tokenOf(body2)
		if tok == "" {
			break
		}
		q = "verb=ListRecords&resumptionToken=" + url.QueryEscape(tok)
	}
	if inBucket > 0 {
		secs := time.Since(bucketStart).Seconds()
		h.steps = append(h.steps, Step{Items: int64(inBucket), Seconds: secs, RatePerS: float64(inBucket) / secs,
			PeakRSS: max(bucketRSS, currentRSS(pid))})
	}
	h.seconds = time.Since(start).Seconds()
	return h, nil
}

// firstVersusDeep fetches page 1 of the list and the deep page (its query
// deep) n times each, in turns, and returns their latencies.
func firstVersusDeep(ctx context.Context, client *http.Client, base, deep string, n int) (first, deepL Latency, err error) {
	var ones, deeps []time.Duration
	get := func(q string) (time.Duration, error) {
		t0 := time.Now()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"?"+q, nil)
		if err != nil {
			return 0, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && (resp.StatusCode != 200 || bytes.Contains(b, []byte("<error "))) {
			err = fmt.Errorf("%s: HTTP %d: %.300s", q, resp.StatusCode, b)
		}
		return time.Since(t0), err
	}
	for i := 0; i < n; i++ {
		d1, err := get("verb=ListRecords&metadataPrefix=oai_dc")
		if err != nil {
			return first, deepL, err
		}
		d2, err := get(deep)
		if err != nil {
			return first, deepL, err
		}
		ones, deeps = append(ones, d1), append(deeps, d2)
	}
	return *percentiles(ones), *percentiles(deeps), nil
}

// tokenOf returns the text of a page's resumptionToken, "" on the last
// page.
func tokenOf(body []byte) string {
	i := bytes.LastIndex(body, []byte("<resumptionToken"))
	if i < 0 {
		return ""
	}
	rest := body[i:]
	j := bytes.IndexByte(rest, '>')
	k := bytes.Index(rest, []byte("</resumptionToken>"))
	if j < 0 || k < j {
		return ""
	}
	return string(rest[j+1 : k]) // tokens are base64url: nothing to unescape
}

// depthLatency returns the latencies of the first, middle and last 1% of
// pages (at least 5 each).
func depthLatency(pages []time.Duration) (first, middle, last Latency) {
	k := max(5, len(pages)/100)
	k = min(k, len(pages))
	mid := max(0, len(pages)/2-k/2)
	cp := func(s []time.Duration) Latency { return *percentiles(append([]time.Duration(nil), s...)) }
	return cp(pages[:k]), cp(pages[mid:min(len(pages), mid+k)]), cp(pages[len(pages)-k:])
}

func millis(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d.Microseconds()) / 1000
	}
	return out
}

// rawViewRead reads the view's oai_dc rows page by page through the
// storage interface for d (or to the end) and returns rows per second.
func rawViewRead(ctx context.Context, store shelfmark.Storage, page int, d time.Duration) (float64, error) {
	var maxSeq int64
	if err := store.View(ctx, func(tx shelfmark.ReadTx) (err error) {
		maxSeq, _, _, err = tx.OAIBounds(ctx)
		return err
	}); err != nil {
		return 0, err
	}
	start := time.Now()
	var n int64
	after := int64(0)
	for time.Since(start) < d {
		var recs []*shelfmark.OAIRecord
		err := store.View(ctx, func(tx shelfmark.ReadTx) (err error) {
			recs, err = tx.OAIRecords(ctx, shelfmark.OAIList{Prefix: "oai_dc", After: after, Max: maxSeq, Limit: page, Payload: true})
			return err
		})
		if err != nil {
			return 0, err
		}
		if len(recs) == 0 {
			break
		}
		n += int64(len(recs))
		after = recs[len(recs)-1].Seq
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
