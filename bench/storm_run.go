package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// StormRunConfig configures the storm scenario: one reader measures the
// pages a person reads while crawler storms of every size in Conns ×
// Addrs hit the server in turn, each for Phase, between a quiet phase
// (the reader alone) at the start and another at the end.
type StormRunConfig struct {
	// Base is the server's root URL; PID its process id, for its memory
	// (0: not sampled).
	Base    string
	PID     int
	Archive *StormArchive
	// Phase is how long each phase lasts (default 20 s); Settle is the
	// pause between phases, measured by nobody (default 1 s), so that
	// what a storm left running is not counted to the next phase.
	Phase, Settle time.Duration
	// Conns and Addrs are the storms' connections and client addresses
	// (default 64,256 and 1,50): one storm phase for each pair.
	Conns, Addrs []int
	// HonourRetryAfter makes the storms wait as Retry-After says.
	HonourRetryAfter bool
	// ReaderPause is the reader's pause between two requests (0: none):
	// a person reads a page before asking for the next, and a reader
	// asking without pause may itself pass a server's share of searches
	// per client.
	ReaderPause time.Duration
	// ReaderAddr is the reader's X-Forwarded-For (default 192.0.2.10,
	// none of the storm's); "-" sends none.
	ReaderAddr string
	// StormTimeout bounds each storm request (default 10 s), ReaderTimeout
	// each of the reader's (default 30 s); a request past it is a timeout.
	StormTimeout, ReaderTimeout time.Duration
	// StormAgent is the storm's User-Agent (default StormBrowserAgent);
	// the reader sends StormBrowserAgent.
	StormAgent string
	Seed       uint64
	// Progress, when set, is told of each phase when it ends.
	Progress func(p StormPhase)
}

// Kinds of the reader's pages, in the order it asks for them.
const (
	StormReaderWork = iota
	StormReaderCollection
	StormReaderSearch
	stormReaderKinds
)

// StormReaderNames name the reader's pages.
var StormReaderNames = [stormReaderKinds]string{"work page", "collection page", "search page"}

// StormReaderPage is what the reader measured of one kind of page in a
// phase: the time from sending the request to reading the answer's last
// byte, over its own connection, and the answers that were not a 200
// with HTML (a refusal, a timeout or a broken connection included).
type StormReaderPage struct {
	Name       string  `json:"name"`
	Requests   int     `json:"requests"`
	Latency    Latency `json:"latency_ms"`
	Errors     int64   `json:"errors"`
	FirstError string  `json:"first_error,omitempty"`
}

// StormPhase is one phase of the run.
type StormPhase struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	// Reader holds the reader's pages, in StormReaderNames' order;
	// ReaderAll all its requests together.
	Reader       []StormReaderPage `json:"reader"`
	ReaderAll    Latency           `json:"reader_all_ms"`
	ReaderErrors int64             `json:"reader_errors"`
	// Storm is nil in a quiet phase.
	Storm *StormCounts `json:"storm,omitempty"`
	// RSSMax is the largest VmRSS of the server sampled in the phase
	// (every 200 ms).
	RSSMax int64 `json:"rss_max_bytes"`
}

// StormGoal is one goal line of the run.
type StormGoal struct {
	Name  string `json:"name"`
	Goal  string `json:"goal"`
	Value string `json:"value"`
	Met   bool   `json:"met"`
}

// StormResult is a storm run.
type StormResult struct {
	Report *Report
	Phases []StormPhase
	Goals  []StormGoal
}

// stormRead is one request of the reader.
type stormRead struct {
	kind int
	d    time.Duration
	err  string
}

// RunStorm runs the storm scenario against c.Base, whose archive is
// c.Archive. It talks only to c.Base.
func RunStorm(ctx context.Context, c StormRunConfig) (*StormResult, error) {
	if c.Archive == nil || len(c.Archive.Works) == 0 {
		return nil, errors.New("storm: no archive")
	}
	if c.Phase <= 0 {
		c.Phase = 20 * time.Second
	}
	if c.Settle <= 0 {
		c.Settle = time.Second
	}
	if len(c.Conns) == 0 {
		c.Conns = []int{64, 256}
	}
	if len(c.Addrs) == 0 {
		c.Addrs = []int{1, 50}
	}
	for _, n := range append(append([]int{}, c.Conns...), c.Addrs...) {
		if n <= 0 {
			return nil, fmt.Errorf("storm: connections and addresses must be positive, not %d", n)
		}
	}
	if c.ReaderAddr == "" {
		c.ReaderAddr = "192.0.2.10"
	}
	if c.ReaderTimeout <= 0 {
		c.ReaderTimeout = 30 * time.Second
	}
	type plan struct {
		name         string
		conns, addrs int
	}
	plans := []plan{{name: "quiet"}}
	for _, n := range c.Conns {
		for _, a := range c.Addrs {
			plans = append(plans, plan{name: fmt.Sprintf("storm %d conns from %d addr", n, a), conns: n, addrs: a})
		}
	}
	plans = append(plans, plan{name: "quiet again"})

	// the reader: one connection, always asking, its requests counted to
	// the phase in which they started (none between phases)
	var phase atomic.Int64
	phase.Store(-1)
	var mu sync.Mutex
	reads := make([][]stormRead, len(plans))
	rss := make([]int64, len(plans))
	done := make(chan struct{})
	var stopOnce sync.Once
	stopReader := func() { stopOnce.Do(func() { close(done) }) }
	defer stopReader()
	tr := &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1}
	defer tr.CloseIdleConnections()
	reader := &http.Client{Transport: tr, Timeout: c.ReaderTimeout}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		a := c.Archive
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			default:
			}
			kind := i % stormReaderKinds
			var path string
			switch kind {
			case StormReaderWork:
				path = "/works/" + url.PathEscape(a.Works[(i/stormReaderKinds)%len(a.Works)])
			case StormReaderCollection:
				path = "/collections/" + url.PathEscape(a.Collection)
			default:
				path = "/search?q=" + url.QueryEscape(a.Words[(i/stormReaderKinds)%len(a.Words)])
			}
			if i > 0 && c.ReaderPause > 0 {
				select {
				case <-done:
					return
				case <-ctx.Done():
					return
				case <-time.After(c.ReaderPause):
				}
			}
			p := phase.Load()
			d, err := stormReaderGet(ctx, reader, c.Base+path, c.ReaderAddr)
			if p < 0 || ctx.Err() != nil {
				continue
			}
			mu.Lock()
			reads[p] = append(reads[p], stormRead{kind: kind, d: d, err: err})
			mu.Unlock()
		}
	}()
	go func() {
		defer wg.Done()
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if p := phase.Load(); p >= 0 && c.PID != 0 {
				v := currentRSS(c.PID)
				mu.Lock()
				rss[p] = max(rss[p], v)
				mu.Unlock()
			}
		}
	}()

	res := &StormResult{}
	for i, pl := range plans {
		var storm *Storm
		if pl.conns > 0 {
			var err error
			storm, err = StartStorm(ctx, StormConfig{Base: c.Base, Targets: c.Archive.Targets(), Conns: pl.conns, Addrs: pl.addrs,
				HonourRetryAfter: c.HonourRetryAfter, Timeout: c.StormTimeout, UserAgent: c.StormAgent, Seed: c.Seed + uint64(i)})
			if err != nil {
				return nil, err
			}
		}
		t0 := time.Now()
		phase.Store(int64(i))
		select {
		case <-ctx.Done():
		case <-time.After(c.Phase):
		}
		phase.Store(-1)
		ph := StormPhase{Name: pl.name, Seconds: time.Since(t0).Seconds()}
		if storm != nil {
			counts := storm.Stop()
			ph.Storm = &counts
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		mu.Lock()
		ph.RSSMax = rss[i]
		rs := reads[i]
		mu.Unlock()
		ph.fillReader(rs)
		if c.PID != 0 && ph.RSSMax == 0 {
			ph.RSSMax = currentRSS(c.PID)
		}
		res.Phases = append(res.Phases, ph)
		if c.Progress != nil {
			c.Progress(ph)
		}
		if i < len(plans)-1 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(c.Settle):
			}
		}
	}
	stopReader()
	wg.Wait()
	res.Goals = stormGoals(res.Phases)
	res.Report = stormReport(c, res)
	return res, nil
}

// fillReader sums the reader's requests of a phase.
func (ph *StormPhase) fillReader(rs []stormRead) {
	var all []time.Duration
	byKind := make([][]time.Duration, stormReaderKinds)
	ph.Reader = make([]StormReaderPage, stormReaderKinds)
	for k := range ph.Reader {
		ph.Reader[k].Name = StormReaderNames[k]
	}
	for _, r := range rs {
		pg := &ph.Reader[r.kind]
		pg.Requests++
		if r.err != "" {
			pg.Errors++
			ph.ReaderErrors++
			if pg.FirstError == "" {
				pg.FirstError = r.err
			}
			continue
		}
		byKind[r.kind] = append(byKind[r.kind], r.d)
		all = append(all, r.d)
	}
	for k := range ph.Reader {
		ph.Reader[k].Latency = *percentiles(byKind[k])
	}
	ph.ReaderAll = *percentiles(all)
}

// stormReaderGet asks for a page as a browser does and reads it all; an
// answer other than a 200 with HTML is an error, described.
func stormReaderGet(ctx context.Context, client *http.Client, target, xff string) (time.Duration, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Accept", browserAccept)
	req.Header.Set("Accept-Language", "en")
	req.Header.Set("User-Agent", StormBrowserAgent)
	if xff != "-" {
		req.Header.Set("X-Forwarded-For", xff)
	}
	t0 := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return time.Since(t0), err.Error()
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d := time.Since(t0)
	switch {
	case err != nil:
		return d, "reading the answer: " + err.Error()
	case resp.StatusCode != http.StatusOK:
		return d, fmt.Sprintf("GET %s: status %d (Retry-After %q)", req.URL.RequestURI(), resp.StatusCode, resp.Header.Get("Retry-After"))
	case !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html"):
		return d, fmt.Sprintf("GET %s: Content-Type %s", req.URL.RequestURI(), resp.Header.Get("Content-Type"))
	}
	return d, ""
}

// Goals of the storm scenario.
const (
	// StormGoalRatio is the most a storm may multiply the reader's p99
	// of any page over the quiet phase's.
	StormGoalRatio = 2.0
	// StormGoalP99MS is the most the reader's p99 of any page may be
	// under a storm, in milliseconds.
	StormGoalP99MS = 50.0
	// StormGoalRSSGrowth is the most the server's largest RSS under the
	// storms may be over its largest in the first quiet phase.
	StormGoalRSSGrowth = 2.0
)

// stormGoals judges the phases: for each storm, the reader's p99 against
// the quiet phase's and in absolute terms, its errors, and whether the
// abusers were refused with Retry-After rather than left to time out;
// then the server's memory over the run.
func stormGoals(phases []StormPhase) []StormGoal {
	if len(phases) == 0 {
		return nil
	}
	quiet := phases[0]
	var goals []StormGoal
	var stormRSS int64
	for _, ph := range phases {
		if ph.Storm == nil {
			if ph.ReaderErrors > 0 {
				goals = append(goals, StormGoal{Name: ph.Name + ": reader errors", Goal: "0", Value: fmt.Sprint(ph.ReaderErrors)})
			}
			continue
		}
		stormRSS = max(stormRSS, ph.RSSMax)
		worst, worstName, worstRatio, ratioName := 0.0, "", 0.0, ""
		for k, pg := range ph.Reader {
			if pg.Latency.P99 > worst {
				worst, worstName = pg.Latency.P99, pg.Name
			}
			if q := quiet.Reader[k].Latency.P99; q > 0 && pg.Latency.P99/q > worstRatio {
				worstRatio, ratioName = pg.Latency.P99/q, pg.Name
			}
		}
		goals = append(goals,
			StormGoal{Name: ph.Name + ": reader p99 / quiet p99", Goal: fmt.Sprintf("≤ %.0f×", StormGoalRatio),
				Value: fmt.Sprintf("%.1f× (%s)", worstRatio, ratioName), Met: worstRatio <= StormGoalRatio},
			StormGoal{Name: ph.Name + ": reader p99", Goal: fmt.Sprintf("≤ %.0f ms", StormGoalP99MS),
				Value: fmt.Sprintf("%.1f ms (%s)", worst, worstName), Met: worst <= StormGoalP99MS},
			StormGoal{Name: ph.Name + ": reader errors", Goal: "0", Value: fmt.Sprint(ph.ReaderErrors), Met: ph.ReaderErrors == 0})
		s := ph.Storm
		failed := s.Timeouts + s.ConnErrors
		goals = append(goals, StormGoal{Name: ph.Name + ": abusers refused with Retry-After, not timed out",
			Goal:  "429/503 > 0, all with Retry-After; 0 timeouts or connection errors",
			Value: fmt.Sprintf("%d of %d refused (429 %d, 503 %d), %d without Retry-After; %d timeouts, %d connection errors", s.Refused(), s.Requests, s.TooMany, s.Unavailable, s.NoRetryAfter, s.Timeouts, s.ConnErrors),
			Met:   s.Refused() > 0 && s.NoRetryAfter == 0 && failed == 0})
	}
	if quiet.RSSMax > 0 && stormRSS > 0 {
		g := float64(stormRSS) / float64(quiet.RSSMax)
		goals = append(goals, StormGoal{Name: "memory: largest RSS under the storms / largest quiet", Goal: fmt.Sprintf("≤ %.0f×", StormGoalRSSGrowth),
			Value: fmt.Sprintf("%.2f× (%.0f MiB / %.0f MiB)", g, float64(stormRSS)/(1<<20), float64(quiet.RSSMax)/(1<<20)), Met: g <= StormGoalRSSGrowth})
	}
	return goals
}

// stormReport is the common report of a run: one step per phase, whose
// items and rate are the storm's answered requests, latency and errors
// the reader's, error codes the storm's answers by status.
func stormReport(c StormRunConfig, res *StormResult) *Report {
	rep := &Report{Scenario: "storm", Target: c.Base, Started: time.Now().UTC(),
		Params: map[string]any{"phase_seconds": c.Phase.Seconds(), "settle_seconds": c.Settle.Seconds(), "storm_conns": c.Conns, "storm_addrs": c.Addrs,
			"honour_retry_after": c.HonourRetryAfter, "reader_addr": c.ReaderAddr, "reader_pause_seconds": c.ReaderPause.Seconds(), "storm_agent": c.StormAgent, "archive_works": len(c.Archive.Works), "book_pages": c.Archive.BookPages,
			"steps": "one per phase: items and rate are the storm's answered requests, latency and errors the reader's (client time, all its pages), error codes the storm's answers by status",
			"goals": fmt.Sprintf("under every storm the reader's p99 of each page ≤ %.0f× the quiet phase's and ≤ %.0f ms, 0 reader errors; abusers refused with 429/503 and Retry-After, not timed out; largest RSS under storms ≤ %.0f× the quiet one",
				StormGoalRatio, StormGoalP99MS, StormGoalRSSGrowth)}}
	for _, ph := range res.Phases {
		lat := ph.ReaderAll
		st := Step{Seconds: ph.Seconds, LatencyMS: &lat, Errors: ph.ReaderErrors, PeakRSS: ph.RSSMax}
		rep.Errors += ph.ReaderErrors
		for _, pg := range ph.Reader {
			rep.Items += int64(pg.Requests)
		}
		if s := ph.Storm; s != nil {
			st.Clients = s.Conns
			st.Items = s.Requests - s.Timeouts - s.ConnErrors
			st.RatePerS = s.RatePerS
			st.ErrorCodes = map[string]int64{"200": s.OK, "429": s.TooMany, "503": s.Unavailable, "other": s.Other, "timeout": s.Timeouts, "connection": s.ConnErrors}
		}
		rep.Steps = append(rep.Steps, st)
		rep.Seconds += ph.Seconds
		rep.PeakRSSBytes = max(rep.PeakRSSBytes, ph.RSSMax)
	}
	if rep.Seconds > 0 {
		rep.RatePerS = float64(rep.Items) / rep.Seconds
	}
	if n := len(res.Phases); n > 1 {
		first, last := res.Phases[0].ReaderAll.P50, res.Phases[n-1].ReaderAll.P50
		if last > 0 {
			rep.Flatness = first / last
		}
	}
	rep.RawLimitWhat = "the reader alone (the quiet phase) is the baseline each storm is weighed against"
	rep.LatencyMS = res.Phases[0].ReaderAll
	rep.Params["phases"] = res.Phases
	rep.Params["goal_lines"] = res.Goals
	rep.Params["archive"] = c.Archive
	met := 0
	for _, g := range res.Goals {
		if g.Met {
			met++
		}
	}
	rep.Params["goals_met"] = fmt.Sprintf("%d of %d", met, len(res.Goals))
	return rep
}

// Series are the charts of a run, by phase (numbered from 1 as in the
// table): the reader's p99 of each page, the storm's answers per second
// and the server's largest RSS.
func (r *StormResult) Series() []Series {
	var xs []float64
	for i := range r.Phases {
		xs = append(xs, float64(i+1))
	}
	of := func(name, unit string, f func(ph StormPhase) float64) Series {
		s := Series{Name: name, Unit: unit, XLabel: "phase", X: xs}
		for _, ph := range r.Phases {
			s.Y = append(s.Y, f(ph))
		}
		return s
	}
	var out []Series
	for k := range stormReaderKinds {
		out = append(out, of("Reader's "+StormReaderNames[k]+" p99 by phase", "ms", func(ph StormPhase) float64 { return ph.Reader[k].Latency.P99 }))
	}
	out = append(out,
		of("Storm: answers refused (429 and 503) per second by phase", "requests/s", func(ph StormPhase) float64 {
			if ph.Storm == nil || ph.Storm.Seconds == 0 {
				return 0
			}
			return float64(ph.Storm.Refused()) / ph.Storm.Seconds
		}),
		of("Server's largest RSS by phase", "bytes", func(ph StormPhase) float64 { return float64(ph.RSSMax) }))
	return out
}
