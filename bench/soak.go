package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench/gen"
)

// SoakConfig configures the soak scenario: a mixed load held for a fixed
// time against a running server, as a repository sees it in service.
type SoakConfig struct {
	// Base is the server's root URL (http://127.0.0.1:port).
	Base string
	// Token is sent as "Authorization: Bearer TOKEN" with every request:
	// an admin-scoped one, as the soak creates works and pauses queues.
	Token string
	// Tokens, when given, are the writers', readers' and harvesters' own
	// (in that order; a client past the end uses Token): each of a user of
	// its own, so that admission control gives each client its own share
	// of every class, as it would people working side by side, rather than
	// one share to all of them.
	Tokens []string
	// PID is the server's process id, for its memory (0: not sampled).
	PID int
	// DataDir is the server's data directory, for disk use ("": not
	// sampled). Its SQLite database, WAL and blobs are measured apart.
	DataDir string
	// Duration is how long the load runs.
	Duration time.Duration
	// Warmup is the start of the run left out of drift and growth
	// figures (default a tenth of Duration).
	Warmup time.Duration
	// Sample is the time between samples (default 5 s).
	Sample time.Duration
	// Writers create works over the REST API (default 4); Readers loop
	// GET JSON, GET Turtle, a members page and a search (default 2);
	// Harvesters loop full OAI-PMH ListRecords harvests (default 1).
	Writers, Readers, Harvesters int
	// ReadRate paces each reader to this many requests a second, and
	// HarvestRate each harvester to this many pages a second (0: as fast
	// as the server answers). An unpaced client takes whatever the cores
	// leave, so on a saturated machine every change in its cost moves the
	// share of everything else, the idle-priority tools first; a paced one
	// asks what people and harvesters ask in service, whatever the speed.
	ReadRate, HarvestRate float64
	// UploadEvery uploads a real file with every n-th work (default 5; a
	// negative value uploads none): a scanned page image mostly (a PNG of
	// gen.PageWidth×gen.PageHeight whose words OCR reads back), a PDF
	// every fourth upload, so derivative, OCR and text jobs exist.
	UploadEvery int
	// Triples per work (default 54).
	Triples int
	// Pause names job queues paused before the load starts (for example
	// derive, to weigh what derivatives cost the foreground).
	Pause []string
	// Storm is how long a crawler storm lasts in the middle of the run
	// (0: none): StormConns connections (default 64) from StormAddrs
	// client addresses (default 50; X-Forwarded-For, which counts when
	// the server trusts 127.0.0.1 as a proxy), anonymous, asking for
	// searches, prefix searches, facets and search inside a work with a
	// page image, again at once whatever the answer (StartStorm). It
	// starts at StormStart (default: centred in the run).
	Storm                  time.Duration
	StormStart             time.Duration
	StormConns, StormAddrs int
	// Seed makes the generated works the same in every run.
	Seed uint64
	// Progress, when set, is told of each sample.
	Progress func(s SoakSample)
}

// SoakSample is the state of the run over one sampling interval.
type SoakSample struct {
	// At is the end of the interval, in seconds since the start.
	At      float64 `json:"at_s"`
	Seconds float64 `json:"seconds"`
	Works   int64   `json:"works"`
	Uploads int64   `json:"uploads"`
	// WritesPerS is works created per second in the interval.
	WritesPerS float64 `json:"writes_per_s"`
	Reads      int64   `json:"reads"`
	// ReadMS are the latencies of the interval's reads (all four kinds);
	// SearchP99MS the searches' alone.
	ReadMS      Latency `json:"read_ms"`
	SearchP99MS float64 `json:"search_p99_ms"`
	// HarvestPages and HarvestRecords were fetched in the interval.
	HarvestPages   int64   `json:"harvest_pages"`
	HarvestRecords int64   `json:"harvest_records"`
	HarvestP99MS   float64 `json:"harvest_page_p99_ms"`
	Errors         int64   `json:"errors"`
	// RSS is the server's resident memory at the sample (VmRSS).
	RSS int64 `json:"rss_bytes"`
	// DBBytes, WALBytes and BlobBytes are the data directory's SQLite
	// database, write-ahead log and blobs; OtherBytes the rest of it.
	DBBytes    int64 `json:"db_bytes"`
	WALBytes   int64 `json:"wal_bytes"`
	BlobBytes  int64 `json:"blob_bytes"`
	OtherBytes int64 `json:"other_bytes"`
	// Backlog is the jobs queued or running per queue.
	Backlog map[string]int64 `json:"backlog"`
	// CPU is where the interval's CPU time went (zero without /proc or
	// without the server's PID).
	CPU SoakCPU `json:"cpu"`
	// Storm is whether the crawler storm ran during more than a twentieth
	// of the interval (so that a tick a few milliseconds after the storm
	// started or ended does not count the whole interval to it).
	Storm bool `json:"storm,omitempty"`
}

// SoakResult is a soak run: the common report and its samples (which
// the report's Params leave out: the caller adds them to the JSON, where
// they belong, and keeps them out of the HTML page's parameter list).
type SoakResult struct {
	Report  *Report
	Samples []SoakSample
	// Warmup is the number of leading samples left out of Drift,
	// RSSGrowth and BacklogSlope.
	Warmup int
	// Drift is the write rate of the last tenth of the samples after the
	// warm-up over that of the first tenth.
	Drift float64
	// Trend is the write rate's straight-line trend over the same samples
	// Drift draws its tenths from (after the warm-up, the storm's left
	// out): the least-squares line's rate at the last sample over its
	// rate at the first. Drift compares two windows of a few minutes,
	// so a paced rate's minute-to-minute noise moves it; Trend weighs
	// every sample and moves only with a rate that changes over the run.
	// It is the figure the soak's drift goal is judged by (the report's
	// Flatness).
	Trend float64
	// TenthsSpread is the standard deviation of the rates of the ten
	// consecutive tenths Drift's two are taken from, over their mean:
	// the noise of one tenth, so that two tenths of a rate that does not
	// change differ by about √2 times it, and a Drift within that of 1
	// says nothing the Trend does not.
	TenthsSpread float64
	// TrendSE is the standard error of Trend: the scatter of the ten
	// tenths' rates about their own least-squares line (what is left
	// when an even change is taken out), carried to the line's change
	// from the first tenth to the last, over its rate at the first. A
	// Trend within about twice TrendSE of 1 cannot tell a drift from the
	// noise; a goal of "at most 5%" is shown only by a Trend whose lower
	// bound (Trend − 2·TrendSE) stays above 0.95.
	TrendSE float64
	// RSSFirst and RSSLast are the server's median RSS over the samples
	// of the first and of the last tenth Drift compares, and RSSGrowth
	// the last over the first: medians, because the Go heap swings by
	// a tenth between collections and one sample catches it anywhere
	// in the swing.
	RSSFirst, RSSLast int64
	RSSGrowth         float64
	// CPUFirst and CPULast are where the CPU went over the first and the
	// last tenth Drift compares: a write rate paced by OCR at idle
	// priority moves with the CPU the rest leaves it and with the
	// machine's speed (the tools' seconds per upload), and these tell
	// those apart from the server's own cost.
	CPUFirst, CPULast SoakCPUSpan
	// WALMax is the largest WAL seen.
	WALMax int64
	// BacklogSlope is the least-squares trend of each queue's backlog
	// after the warm-up, in jobs per minute.
	BacklogSlope map[string]float64
	// HarvestRecords and Harvests (complete ones) over the whole run.
	HarvestRecords int64
	Harvests       int64
	Uploads        int64
	// Paced counts the uploads the server refused with 503 and
	// Retry-After (its background over a backlog limit) and PacedSeconds
	// the writers' time spent waiting before sending them again: not
	// errors, but the back-pressure that keeps the backlogs bounded.
	Paced        int64
	PacedSeconds float64
	// DriftFirst and DriftLast are the spans [from, to] in seconds of the
	// first and the last tenth that Drift compares: tenths of the samples
	// after the warm-up that the storm did not touch.
	DriftFirst, DriftLast [2]float64
	// Storm is the crawler storm's part of the run (nil without one).
	Storm *SoakStorm
}

// soakState is what the clients add to and the sampler takes.
type soakState struct {
	mu             sync.Mutex
	works, uploads int64
	paced          int64
	pacedFor       time.Duration
	reads, search  []time.Duration
	pages          []time.Duration
	records        int64
	harvests       int64
	errors         int64
	codes          map[string]int64
	ids            []string // created works, for the readers
	paged          string   // a work with a page image, for the storm
	// storming is set while the crawler storm runs; the readers' and
	// writers' work is then counted apart too (split[1], else split[0])
	storming atomic.Bool
	split    [2]soakSplit
}

func (s *soakState) fail(code string) {
	s.mu.Lock()
	s.errors++
	s.codes[code]++
	s.mu.Unlock()
}

// RunSoak runs writers, readers and harvesters against c.Base for
// c.Duration, sampling throughput, latency, memory, disk and job backlog
// every c.Sample. It talks only to c.Base.
func RunSoak(ctx context.Context, c SoakConfig) (*SoakResult, error) {
	if c.Duration <= 0 {
		return nil, errors.New("soak: the duration must be positive")
	}
	if c.Sample <= 0 {
		c.Sample = 5 * time.Second
	}
	if c.Warmup <= 0 {
		c.Warmup = c.Duration / 10
	}
	if c.Writers <= 0 {
		c.Writers = 4
	}
	if c.Readers < 0 || c.Harvesters < 0 {
		return nil, errors.New("soak: readers and harvesters must be 0 or more")
	}
	if c.ReadRate < 0 || c.HarvestRate < 0 {
		return nil, errors.New("soak: the read and harvest rates must be 0 (unpaced) or more")
	}
	if c.UploadEvery == 0 {
		c.UploadEvery = 5
	}
	if c.Triples <= 0 {
		c.Triples = 54
	}
	if c.Storm < 0 || c.StormStart < 0 || c.StormConns < 0 || c.StormAddrs < 0 {
		return nil, errors.New("soak: the storm's duration, start, connections and addresses must be 0 or more")
	}
	if c.Storm > 0 {
		if c.StormStart == 0 {
			c.StormStart = (c.Duration - c.Storm) / 2
		}
		if c.StormStart+c.Storm > c.Duration {
			return nil, fmt.Errorf("soak: a storm of %s from %s does not end within the run's %s", c.Storm, c.StormStart, c.Duration)
		}
		if c.StormConns == 0 {
			c.StormConns = 64
		}
		if c.StormAddrs == 0 {
			c.StormAddrs = 50
		}
	}
	conns := 2 * (c.Writers + c.Readers + c.Harvesters + 1)
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: bearer{token: c.Token, next: tr}, Timeout: time.Minute}
	// clientOf is the client of the i-th of the writers, readers and
	// harvesters: its own token over the shared connections
	clientOf := func(i int) *http.Client {
		if i < len(c.Tokens) && c.Tokens[i] != "" {
			return &http.Client{Transport: bearer{token: c.Tokens[i], next: tr}, Timeout: time.Minute}
		}
		return client
	}
	api := c.Base + "/api/v1"

	// one collection holds every work: its members page is read, and its
	// set is what a harvester would select
	coll, err := soakCreate(ctx, client, api+"/collections", "application/json", []byte(`{"metadata": {"dc:title": "Soak"}}`))
	if err != nil {
		return nil, fmt.Errorf("soak: create the collection: %w", err)
	}
	for _, q := range c.Pause {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, api+"/jobs/"+url.PathEscape(q)+"/pause", nil)
		if err != nil {
			return nil, err
		}
		resp, err := client.Do(req)
		if err != nil {
			return nil, fmt.Errorf("soak: pause %s: %w", q, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("soak: pause %s: HTTP %d", q, resp.StatusCode)
		}
	}
	st := &soakState{codes: map[string]int64{}}
	rep := &Report{Scenario: "soak", Target: c.Base, Started: time.Now().UTC(),
		Params: map[string]any{"minutes": c.Duration.Minutes(), "writers": c.Writers, "readers": c.Readers, "harvesters": c.Harvesters,
			"read_rate": c.ReadRate, "harvest_rate": c.HarvestRate, "upload_every": c.UploadEvery, "triples": c.Triples, "paused": c.Pause, "sample_seconds": c.Sample.Seconds(), "warmup_seconds": c.Warmup.Seconds(),
			"storm_seconds": c.Storm.Seconds(), "storm_start_seconds": c.StormStart.Seconds(), "storm_conns": c.StormConns, "storm_addrs": c.StormAddrs}}

	runCtx, stop := context.WithTimeout(ctx, c.Duration)
	defer stop()
	var wg sync.WaitGroup
	var next atomic.Int64
	for w := range c.Writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			soakWriter(runCtx, clientOf(w), api, coll, c, &next, st, w)
		}()
	}
	for r := range c.Readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			soakReader(runCtx, clientOf(c.Writers+r), api, coll, st, rand.New(rand.NewPCG(c.Seed, uint64(r))), newPacer(c.ReadRate))
		}()
	}
	for h := range c.Harvesters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			soakHarvester(runCtx, clientOf(c.Writers+c.Readers+h), c.Base+"/oai", st, newPacer(c.HarvestRate))
		}()
	}

	res := &SoakResult{Report: rep}
	var allReads []time.Duration
	var lastWorks, lastUploads, lastRecords int64
	var lastErrors int64
	// the walk of every file of the data directory costs what it holds
	// (hundreds of thousands of files in an hour, a minute's walk by the
	// end): it runs beside the samples, never holding one up, and rests
	// five times as long as it took
	var walkBlobs, walkOther atomic.Int64
	if c.DataDir != "" {
		go func() {
			for {
				t0 := time.Now()
				_, _, b, o := diskUse(c.DataDir)
				walkBlobs.Store(b)
				walkOther.Store(o)
				select {
				case <-runCtx.Done():
					return
				case <-time.After(max(diskWalkEvery, 5*time.Since(t0))):
				}
			}
		}()
	}
	start := time.Now()
	last := start
	var lastCPU cpuTimes
	if c.PID != 0 {
		lastCPU = readCPU(c.PID)
	}
	var stormDone chan *SoakStorm
	if c.Storm > 0 {
		stormDone = soakStorm(runCtx, c, coll, st, start)
	}
	tick := time.NewTicker(c.Sample)
	defer tick.Stop()
	// sample takes the state since the last sample; with fold it adds it to
	// the last sample instead (the few moments between the last tick and
	// the end of the run, too short to be a rate of their own)
	sample := func(now time.Time, fold bool) {
		// a context of its own: the last sample is taken after the run's ended
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		backlog, berr := soakBacklog(bctx, client, api)
		cancel()
		if berr != nil {
			st.fail("jobs")
		}
		st.mu.Lock()
		works, uploads, records, errs := st.works, st.uploads, st.records, st.errors
		reads, search, pages := st.reads, st.search, st.pages
		st.reads, st.search, st.pages = nil, nil, nil
		st.mu.Unlock()
		allReads = append(allReads, reads...)
		s := SoakSample{At: now.Sub(start).Seconds(), Seconds: now.Sub(last).Seconds(), Works: works - lastWorks, Uploads: uploads - lastUploads,
			Reads: int64(len(reads)), HarvestPages: int64(len(pages)), HarvestRecords: records - lastRecords, Errors: errs - lastErrors, Backlog: backlog,
			Storm: c.Storm > 0 && soakOverlap(last.Sub(start), now.Sub(start), c.StormStart, c.StormStart+c.Storm) > now.Sub(last)/20}
		s.ReadMS = *percentiles(reads)
		s.SearchP99MS = percentiles(search).P99
		s.HarvestP99MS = percentiles(pages).P99
		if c.PID != 0 {
			cpu := readCPU(c.PID)
			s.CPU = cpuBetween(lastCPU, cpu, s.Seconds)
			lastCPU = cpu
		}
		if fold {
			p := &res.Samples[len(res.Samples)-1]
			p.CPU = cpuSpan([]SoakSample{*p, s}).SoakCPU
			p.At, p.Seconds = s.At, p.Seconds+s.Seconds
			p.Works, p.Uploads, p.Reads = p.Works+s.Works, p.Uploads+s.Uploads, p.Reads+s.Reads
			p.HarvestPages, p.HarvestRecords, p.Errors = p.HarvestPages+s.HarvestPages, p.HarvestRecords+s.HarvestRecords, p.Errors+s.Errors
			p.Backlog, p.Storm = backlog, p.Storm || s.Storm
			s = *p
			res.Samples = res.Samples[:len(res.Samples)-1]
		}
		s.WritesPerS = float64(s.Works) / s.Seconds
		if c.PID != 0 {
			s.RSS = currentRSS(c.PID)
		}
		if c.DataDir != "" {
			s.DBBytes, s.WALBytes = fileSize(filepath.Join(c.DataDir, "shelfmark.db")), fileSize(filepath.Join(c.DataDir, "shelfmark.db-wal"))
			s.BlobBytes, s.OtherBytes = walkBlobs.Load(), walkOther.Load()
		}
		lastWorks, lastUploads, lastRecords, lastErrors = works, uploads, records, errs
		last = now
		res.Samples = append(res.Samples, s)
		if c.Progress != nil && !fold {
			c.Progress(s)
		}
	}
loop:
	for {
		select {
		case <-runCtx.Done():
			break loop
		case now := <-tick.C:
			sample(now, false)
		}
	}
	wg.Wait()
	if stormDone != nil {
		res.Storm = <-stormDone
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	now := time.Now()
	sample(now, len(res.Samples) > 0 && now.Sub(last) < c.Sample/4)
	st.mu.Lock()
	res.HarvestRecords, res.Harvests, res.Uploads = st.records, st.harvests, st.uploads
	res.Paced, res.PacedSeconds = st.paced, st.pacedFor.Seconds()
	rep.Items, rep.Errors = st.works, st.errors
	codes := st.codes
	st.mu.Unlock()
	rep.Seconds = time.Since(start).Seconds()
	rep.RatePerS = float64(rep.Items) / rep.Seconds
	rep.LatencyMS = *percentiles(allReads)
	if c.PID != 0 {
		rep.PeakRSSBytes = PeakRSS(c.PID)
	}
	for _, s := range res.Samples {
		step := Step{Items: s.Works, Seconds: s.Seconds, RatePerS: s.WritesPerS, LatencyMS: &s.ReadMS, Errors: s.Errors, PeakRSS: s.RSS}
		rep.Steps = append(rep.Steps, step)
		res.WALMax = max(res.WALMax, s.WALBytes)
	}
	if len(codes) > 0 {
		rep.Steps[len(rep.Steps)-1].ErrorCodes = codes
	}
	res.summarize(c.Warmup)
	rep.Flatness = res.Trend
	rep.Params["drift"] = res.Drift
	rep.Params["drift_trend"] = res.Trend
	rep.Params["drift_tenths_spread"] = res.TenthsSpread
	rep.Params["drift_trend_se"] = res.TrendSE
	rep.Params["rss_first_tenth_bytes"], rep.Params["rss_last_tenth_bytes"] = res.RSSFirst, res.RSSLast
	rep.Params["drift_first_tenth_s"], rep.Params["drift_last_tenth_s"] = res.DriftFirst, res.DriftLast
	if res.Storm != nil {
		res.Storm.finish(st, rep.Seconds)
		rep.Params["storm"] = res.Storm
	}
	rep.Params["rss_growth"] = res.RSSGrowth
	rep.Params["cpu_first_tenth"], rep.Params["cpu_last_tenth"] = res.CPUFirst, res.CPULast
	rep.Params["wal_max_bytes"] = res.WALMax
	rep.Params["backlog_slope_per_min"] = res.BacklogSlope
	rep.Params["uploads"] = res.Uploads
	rep.Params["uploads_paced"] = res.Paced
	rep.Params["paced_seconds"] = res.PacedSeconds
	rep.Params["harvest_records"] = res.HarvestRecords
	rep.Params["harvests_complete"] = res.Harvests
	return res, nil
}

// summarize computes drift, RSS growth and backlog trends from the
// samples after the warm-up.
func (r *SoakResult) summarize(warmup time.Duration) {
	for r.Warmup < len(r.Samples)-1 && r.Samples[r.Warmup].At <= warmup.Seconds() {
		r.Warmup++
	}
	after := r.Samples[r.Warmup:]
	// the drift compares the run's calm: samples the storm touched are in
	// neither tenth
	calm := slices.DeleteFunc(slices.Clone(after), func(s SoakSample) bool { return s.Storm })
	if len(calm) == 0 {
		calm = after
	}
	tenth := max(1, len(calm)/10)
	rate := func(ss []SoakSample) float64 {
		var n int64
		var secs float64
		for _, s := range ss {
			n += s.Works
			secs += s.Seconds
		}
		if secs == 0 {
			return 0
		}
		return float64(n) / secs
	}
	firstTenth, lastTenth := calm[:tenth], calm[len(calm)-tenth:]
	if first := rate(firstTenth); first > 0 {
		r.Drift = rate(lastTenth) / first
	}
	span := func(ss []SoakSample) [2]float64 { return [2]float64{ss[0].At - ss[0].Seconds, ss[len(ss)-1].At} }
	r.DriftFirst, r.DriftLast = span(firstTenth), span(lastTenth)
	r.Trend = rateTrend(calm)
	if len(calm) >= 20 {
		var at, rates []float64
		for i := range 10 {
			part := calm[i*len(calm)/10 : (i+1)*len(calm)/10]
			var mean float64 // the tenth's time: its samples' mean, a gap (the storm) in it or not
			for _, s := range part {
				mean += s.At / float64(len(part))
			}
			at, rates = append(at, mean), append(rates, rate(part))
		}
		r.TenthsSpread = relativeSD(rates)
		r.TrendSE = trendSE(at, rates)
	}
	r.RSSFirst, r.RSSLast = medianRSS(firstTenth), medianRSS(lastTenth)
	r.CPUFirst, r.CPULast = cpuSpan(firstTenth), cpuSpan(lastTenth)
	if r.RSSFirst > 0 {
		r.RSSGrowth = float64(r.RSSLast) / float64(r.RSSFirst)
	}
	r.BacklogSlope = map[string]float64{}
	queues := map[string]bool{}
	for _, s := range after {
		for q := range s.Backlog {
			queues[q] = true
		}
	}
	for q := range queues {
		xs := make([]float64, len(after))
		ys := make([]float64, len(after))
		for i, s := range after {
			xs[i], ys[i] = s.At/60, float64(s.Backlog[q])
		}
		r.BacklogSlope[q] = slope(xs, ys)
	}
}

// minuteRate is the write rate averaged over the minute up to each
// sample (the works of the samples that end within it over their
// seconds): a paced rate comes in bursts that the five-second samples
// show as spikes, and its level is what a reader of the chart wants.
func (r *SoakResult) minuteRate(window string, xs []float64) Series {
	out := Series{Name: "Works created per second, one-minute average" + window, Unit: "works/s", X: xs}
	var works int64
	var secs float64
	from := 0
	for i, s := range r.Samples {
		works += s.Works
		secs += s.Seconds
		for from < i && s.At-r.Samples[from].At >= 60 {
			works -= r.Samples[from].Works
			secs -= r.Samples[from].Seconds
			from++
		}
		v := 0.0
		if secs > 0 {
			v = float64(works) / secs
		}
		out.Y = append(out.Y, v)
	}
	return out
}

// medianRSS is the median of the samples' RSS (0 for none).
func medianRSS(ss []SoakSample) int64 {
	if len(ss) == 0 {
		return 0
	}
	rss := make([]int64, len(ss))
	for i, s := range ss {
		rss[i] = s.RSS
	}
	slices.Sort(rss)
	if len(rss)%2 == 1 {
		return rss[len(rss)/2]
	}
	return (rss[len(rss)/2-1] + rss[len(rss)/2]) / 2
}

// relativeSD is the standard deviation of xs over their mean (0 for
// fewer than two or a mean of 0).
func relativeSD(xs []float64) float64 {
	if len(xs) < 2 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	if mean == 0 {
		return 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/float64(len(xs)-1)) / mean
}

// trendSE is the standard error of the least-squares line of ys over xs
// between its first and last x, over the line's value at the first x:
// the residuals' variance (n − 2 degrees of freedom) over the xs'
// spread gives the slope's (0 with fewer than three points or a line
// that starts at or below zero).
func trendSE(xs, ys []float64) float64 {
	n := len(xs)
	if n < 3 {
		return 0
	}
	var mx, my float64
	for i := range xs {
		mx, my = mx+xs[i], my+ys[i]
	}
	mx, my = mx/float64(n), my/float64(n)
	k := slope(xs, ys)
	var rss, sxx float64
	for i := range xs {
		e := ys[i] - (my + k*(xs[i]-mx))
		rss += e * e
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	first := my + k*(xs[0]-mx)
	if sxx == 0 || first <= 0 {
		return 0
	}
	return math.Sqrt(rss/float64(n-2)/sxx) * (xs[n-1] - xs[0]) / first
}

// rateTrend is the least-squares line of the samples' write rates over
// time: its rate at the last sample over its rate at the first (0 with
// fewer than two samples or a line that starts at or below zero).
func rateTrend(ss []SoakSample) float64 {
	if len(ss) < 2 {
		return 0
	}
	var xs, ys []float64
	var mx, my float64
	for _, s := range ss {
		if s.Seconds <= 0 {
			continue
		}
		xs, ys = append(xs, s.At), append(ys, float64(s.Works)/s.Seconds)
		mx, my = mx+xs[len(xs)-1], my+ys[len(ys)-1]
	}
	if len(xs) < 2 {
		return 0
	}
	// the line passes through the means, with the least-squares slope
	mx, my = mx/float64(len(xs)), my/float64(len(xs))
	k := slope(xs, ys)
	first, last := my+k*(xs[0]-mx), my+k*(xs[len(xs)-1]-mx)
	if first <= 0 {
		return 0
	}
	return last / first
}

// slope is the least-squares slope of ys over xs (0 with fewer than two
// distinct xs).
func slope(xs, ys []float64) float64 {
	n := float64(len(xs))
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	d := n*sxx - sx*sx
	if n < 2 || d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

// Series returns the charts of the run over time: write rate, RSS, the
// database, WAL and blobs on disk, the read and harvest p99 and each
// queue's backlog; with a crawler storm, each title names its window and
// a chart of the storm's connections over time marks it.
func (r *SoakResult) Series() []Series {
	var xs []float64
	for _, s := range r.Samples {
		xs = append(xs, s.At)
	}
	window := ""
	if r.Storm != nil {
		window = fmt.Sprintf(" (crawler storm %.0f–%.0f s)", r.Storm.From, r.Storm.To)
	}
	of := func(name, unit string, f func(s SoakSample) float64) Series {
		out := Series{Name: name + window, Unit: unit, X: xs}
		for _, s := range r.Samples {
			out.Y = append(out.Y, f(s))
		}
		return out
	}
	out := []Series{
		of("Works created per second", "works/s", func(s SoakSample) float64 { return s.WritesPerS }),
		r.minuteRate(window, xs),
		of("Server RSS", "bytes", func(s SoakSample) float64 { return float64(s.RSS) }),
		of("WAL size", "bytes", func(s SoakSample) float64 { return float64(s.WALBytes) }),
		of("Database size", "bytes", func(s SoakSample) float64 { return float64(s.DBBytes) }),
		of("Blobs size", "bytes", func(s SoakSample) float64 { return float64(s.BlobBytes) }),
		of("Read latency p99", "ms", func(s SoakSample) float64 { return s.ReadMS.P99 }),
		of("Harvest page latency p99", "ms", func(s SoakSample) float64 { return s.HarvestP99MS }),
	}
	if slices.ContainsFunc(r.Samples, func(s SoakSample) bool { return s.CPU != SoakCPU{} }) {
		out = append(out,
			of("CPU of the server's own threads", "cores", func(s SoakSample) float64 { return s.CPU.Server }),
			of("CPU of the server's tools (OCR, derivatives), as each ends", "cores", func(s SoakSample) float64 { return s.CPU.Tools }),
			of("CPU of the load generator", "cores", func(s SoakSample) float64 { return s.CPU.Bench }),
			of("The machine's busy share of its cores", "fraction", func(s SoakSample) float64 { return s.CPU.Busy }))
	}
	var queues []string
	for _, s := range r.Samples {
		for q := range s.Backlog {
			if !slices.Contains(queues, q) {
				queues = append(queues, q)
			}
		}
	}
	for _, q := range queues {
		out = append(out, of("Backlog of "+q+" jobs (queued and running)", "jobs", func(s SoakSample) float64 { return float64(s.Backlog[q]) }))
	}
	if r.Storm != nil {
		conns := float64(r.Storm.Counts.Conns)
		out = append(out, of("Crawler storm: its connections during each sample", "connections", func(s SoakSample) float64 {
			if s.Storm {
				return conns
			}
			return 0
		}))
	}
	return out
}

// soakWriter creates works until ctx ends, with a file for every
// c.UploadEvery-th.
func soakWriter(ctx context.Context, client *http.Client, api, coll string, c SoakConfig, next *atomic.Int64, st *soakState, w int) {
	for ctx.Err() == nil {
		i := int(next.Add(1))
		body, err := workJSON(patentStatements(c.Seed, i, c.Triples))
		if err != nil {
			st.fail("body")
			return
		}
		id, err := soakCreate(ctx, client, api+"/works?memberOf="+url.QueryEscape(coll), "application/json", body)
		if err != nil {
			if ctx.Err() == nil {
				st.fail(soakCode(err))
			}
			continue
		}
		st.mu.Lock()
		st.works++
		st.split[st.phase()].works++
		if len(st.ids) < 1<<20 {
			st.ids = append(st.ids, id)
		} else {
			st.ids[i%len(st.ids)] = id
		}
		st.mu.Unlock()
		if c.UploadEvery < 0 || i%c.UploadEvery != 0 {
			continue
		}
		if err := soakUpload(ctx, client, api, id, c.Seed, i/c.UploadEvery, st); err != nil {
			if ctx.Err() == nil {
				st.fail(soakCode(err))
			}
			continue
		}
		st.mu.Lock()
		st.uploads++
		if st.paged == "" && (i/c.UploadEvery)%4 != 0 { // a page image, not a PDF
			st.paged = id
		}
		st.mu.Unlock()
	}
}

// soakUpload adds a file set to work with upload k: a scanned page image
// (gen.PageImage: a PNG whose words OCR reads back), or every fourth a
// one-page PDF. A file refused with 503 and Retry-After is sent again
// after that wait (counted in st as paced).
func soakUpload(ctx context.Context, client *http.Client, api, work string, seed uint64, k int, st *soakState) error {
	fs, err := soakCreate(ctx, client, api+"/filesets", "application/json", fmt.Appendf(nil, `{"parent": %q}`, work))
	if err != nil {
		return err
	}
	name, ctype, data := "page.png", "image/png", gen.PageImage(seed, k, soakPageWords(seed, k))
	if k%4 == 0 {
		name, ctype, data = "page.pdf", "application/pdf", gen.PDF(seed, k, fmt.Sprintf("Soak page %d of a harbour survey", k))
	}
	for {
		_, err = soakCreate(ctx, client, api+"/resources/"+url.PathEscape(fs)+"/files?name="+name, ctype, data)
		var h *soakHTTPError
		if !errors.As(err, &h) || h.status != http.StatusServiceUnavailable || h.retryAfter <= 0 {
			return err
		}
		t0 := time.Now()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(h.retryAfter):
		}
		st.mu.Lock()
		st.paced++
		st.pacedFor += time.Since(t0)
		st.mu.Unlock()
	}
}

// soakHTTPError is an answer other than the one expected.
type soakHTTPError struct {
	status     int
	retryAfter time.Duration // its Retry-After, when it had one
}

func (e *soakHTTPError) Error() string { return "HTTP " + strconv.Itoa(e.status) }

func soakCode(err error) string {
	var h *soakHTTPError
	if errors.As(err, &h) {
		return strconv.Itoa(h.status)
	}
	return "transport"
}

// soakCreate POSTs body and returns the id of the resource created (201).
func soakCreate(ctx context.Context, client *http.Client, target, ctype string, body []byte) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", ctype)
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusCreated {
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return "", &soakHTTPError{status: resp.StatusCode, retryAfter: time.Duration(secs) * time.Second}
	}
	var out struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &out); err != nil || out.ID == "" {
		return "", fmt.Errorf("no id in %.200s", b)
	}
	return out.ID, nil
}

// soakGet GETs target and reads the body; any status but 200 is an error.
func soakGet(ctx context.Context, client *http.Client, target, accept string, buf *bytes.Buffer) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	buf.Reset()
	if _, err := io.Copy(buf, resp.Body); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return &soakHTTPError{status: resp.StatusCode}
	}
	return nil
}

// soakWords are words of the works' titles, searched for at random.
var soakWords = []string{"apparatus", "storage", "shelfmarks", "variant"}

// soakReader loops GET JSON, GET Turtle, a members page and a search
// until ctx ends, at pace's rate.
func soakReader(ctx context.Context, client *http.Client, api, coll string, st *soakState, r *rand.Rand, pace *pacer) {
	buf := &bytes.Buffer{}
	for k := 0; pace.wait(ctx); k++ {
		var target, accept string
		kind := k % 4
		switch kind {
		case 0, 1:
			st.mu.Lock()
			n := len(st.ids)
			id := ""
			if n > 0 {
				id = st.ids[r.IntN(n)]
			}
			st.mu.Unlock()
			if id == "" {
				kind = 2
				target = api + "/resources/" + url.PathEscape(coll) + "/members"
				break
			}
			target, accept = api+"/resources/"+url.PathEscape(id), "application/json"
			if kind == 1 {
				accept = "text/turtle"
			}
		case 2:
			target = api + "/resources/" + url.PathEscape(coll) + "/members"
		case 3:
			target = api + "/search?q=" + url.QueryEscape(soakWords[r.IntN(len(soakWords))])
		}
		t0 := time.Now()
		during := st.phase()
		if err := soakGet(ctx, client, target, accept, buf); err != nil {
			if ctx.Err() == nil {
				st.fail(soakCode(err))
				st.mu.Lock()
				st.split[during].readErrors++
				st.mu.Unlock()
			}
			continue
		}
		d := time.Since(t0)
		st.mu.Lock()
		st.reads = append(st.reads, d)
		st.split[during].reads = append(st.split[during].reads, d)
		if kind == 3 {
			st.search = append(st.search, d)
		}
		st.mu.Unlock()
	}
}

// soakHarvester loops full ListRecords (oai_dc) harvests until ctx ends,
// a page at pace's rate.
func soakHarvester(ctx context.Context, client *http.Client, base string, st *soakState, pace *pacer) {
	buf := &bytes.Buffer{}
	for ctx.Err() == nil {
		q := "verb=ListRecords&metadataPrefix=oai_dc"
		for pace.wait(ctx) {
			t0 := time.Now()
			if err := soakGet(ctx, client, base+"?"+q, "", buf); err != nil {
				if ctx.Err() == nil {
					st.fail(soakCode(err))
				}
				break
			}
			d := time.Since(t0)
			body := buf.Bytes()
			if bytes.Contains(body, []byte(`<error code="noRecordsMatch"`)) {
				// nothing harvestable yet
				st.mu.Lock()
				st.harvests++
				st.mu.Unlock()
				break
			}
			if bytes.Contains(body, []byte("<error ")) {
				st.fail("oai-error")
				break
			}
			n := int64(bytes.Count(body, []byte("<record>")))
			tok := tokenOf(body)
			st.mu.Lock()
			st.pages = append(st.pages, d)
			st.records += n
			if tok == "" {
				st.harvests++
			}
			st.mu.Unlock()
			if tok == "" {
				break
			}
			q = "verb=ListRecords&resumptionToken=" + url.QueryEscape(tok)
		}
	}
}

// soakBacklog reads the jobs queued or running per queue.
func soakBacklog(ctx context.Context, client *http.Client, api string) (map[string]int64, error) {
	buf := &bytes.Buffer{}
	if err := soakGet(ctx, client, api+"/jobs", "application/json", buf); err != nil {
		return nil, err
	}
	var out struct {
		Queues []struct {
			Queue   string `json:"queue"`
			Queued  int64  `json:"queued"`
			Running int64  `json:"running"`
		} `json:"queues"`
	}
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	m := map[string]int64{}
	for _, q := range out.Queues {
		m[q.Queue] = q.Queued + q.Running
	}
	return m, nil
}

// currentRSS returns a process's resident set size now (VmRSS).
func currentRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		var kb int64
		if _, err := fmt.Sscanf(line, "VmRSS: %d kB", &kb); err == nil {
			return kb * 1024
		}
	}
	return 0
}

// diskWalkEvery is the least time between two walks of the data
// directory (the database and its WAL are measured at every sample; the
// blobs and the rest are what the last walk found).
const diskWalkEvery = time.Minute

// fileSize is the size of a file (0 when there is none).
func fileSize(name string) int64 {
	fi, err := os.Stat(name)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// diskUse sums a data directory's files: the SQLite database, its WAL,
// the blobs, and the rest (file sizes).
func diskUse(dir string) (db, wal, blobs, other int64) {
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		n := info.Size()
		rel, _ := filepath.Rel(dir, path)
		switch {
		case rel == "shelfmark.db":
			db += n
		case rel == "shelfmark.db-wal":
			wal += n
		case strings.HasPrefix(rel, "blobs"+string(filepath.Separator)):
			blobs += n
		default:
			other += n
		}
		return nil
	})
	return db, wal, blobs, other
}

// SeedWorks stores n public works of triples statements each (the soak's
// own kind of work, without files) in repo, in batches of a few hundred,
// so that a soak starts on a repository in service rather than an empty
// one: its database larger than its caches, its harvests long from the
// first. progress, when set, is told the works stored so far.
func SeedWorks(ctx context.Context, repo *shelfmark.Repository, n, triples int, seed uint64, progress func(done int)) error {
	const batch = 500
	nrs := make([]*shelfmark.NewResource, 0, batch)
	for done := 0; done < n; {
		k := min(batch, n-done)
		nrs = nrs[:0]
		for i := range k {
			// statements of a seed of their own, unlike the writers' works
			nrs = append(nrs, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: patentStatements(seed+1, done+i, triples)})
		}
		if _, errs := repo.CreateResources(ctx, nrs); errors.Join(errs...) != nil {
			return fmt.Errorf("seed works %d–%d: %w", done+1, done+k, errors.Join(errs...))
		}
		done += k
		if progress != nil {
			progress(done)
		}
	}
	return nil
}

// pacer spaces a client's requests 1/rate apart with a ticker, as the
// ingest pipeline paces its reads; nil (rate 0) does not wait. A client
// that fell behind (the server slower than the rate) goes on at once, the
// ticker having kept one tick, but does not ask in a burst to catch up.
type pacer struct{ tick *time.Ticker }

// newPacer returns the pacer of rate requests a second (nil for 0).
func newPacer(rate float64) *pacer {
	if rate <= 0 {
		return nil
	}
	return &pacer{time.NewTicker(time.Duration(float64(time.Second) / rate))}
}

// wait waits for the next request's time; false once ctx has ended.
func (p *pacer) wait(ctx context.Context) bool {
	if p == nil || ctx.Err() != nil {
		return ctx.Err() == nil
	}
	select {
	case <-ctx.Done():
		return false
	case <-p.tick.C:
		return ctx.Err() == nil
	}
}
