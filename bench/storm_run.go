package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// StormRunConfig configures the storm scenario: readers measure the
// pages a person reads while crawler storms of every size in Conns ×
// Addrs hit the server in turn, each for Phase, between a quiet phase
// (the reader alone) at the start and another at the end.
type StormRunConfig struct {
	// Base is the server's root URL; PID its process id, for its memory
	// (0: not sampled).
	Base    string
	PID     int
	Archive *StormArchive
	// Phase is how long each phase lasts (default 20 s), and longer when
	// the readers have not yet started a request of each kind of page in
	// it (a machine so busy that a page takes most of a short phase), by
	// at most ReaderTimeout a kind; Settle is the
	// pause between phases, measured by nobody (default 1 s), so that
	// what a storm left running is not counted to the next phase.
	Phase, Settle time.Duration
	// Onset is how long each storm runs before its phase begins (0:
	// none): its connections open and its first requests arrive at
	// once, a moment of its own that the phase's reader figures leave
	// out and StormPhase.Onset reports apart.
	Onset time.Duration
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
	// ReaderAddr is the first reader's X-Forwarded-For (default
	// 192.0.2.10, none of the storm's; the others' follow it, 192.0.2.11
	// and on); "-" sends none.
	ReaderAddr string
	// Readers is how many readers read at once (default 1), each over a
	// connection and from an address of its own.
	Readers int
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
	// Slowest is the slowest answer of the phase as the server timed it.
	Slowest *StormSlowest `json:"slowest,omitempty"`
}

// StormSlowest is a reader's slowest answer of a kind in a phase, split
// by the server's Server-Timing header: the time the request waited for
// admission and the handler's time to the answer's header; the rest of
// the reader's time (Outside) went to the network, the connection and
// the processors' run queues, outside the handler (a load generator on
// the server's own processors shows there).
type StormSlowest struct {
	// At is when it was sent, in seconds from the phase's start.
	At      float64 `json:"at_s"`
	MS      float64 `json:"ms"`
	AdmitMS float64 `json:"admit_ms"`
	AppMS   float64 `json:"app_ms"`
	// Timed is false when the answer had no Server-Timing.
	Timed bool `json:"timed"`
}

// Outside is the time of the answer outside the server's handler and
// admission, in milliseconds.
func (s StormSlowest) Outside() float64 { return max(0, s.MS-s.AdmitMS-s.AppMS) }

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
	// Onset is what the readers saw in the storm's onset, before the
	// phase began (nil in a quiet phase or without an onset).
	Onset *StormOnset `json:"onset,omitempty"`
	// RSSMax is the largest VmRSS of the server sampled in the phase
	// and its storm's onset (every 200 ms).
	RSSMax int64 `json:"rss_max_bytes"`
}

// StormOnset is what the readers saw while a storm's connections opened,
// before its phase began: their requests, errors and slowest answer.
type StormOnset struct {
	Seconds    float64       `json:"seconds"`
	Requests   int           `json:"requests"`
	Errors     int64         `json:"errors"`
	FirstError string        `json:"first_error,omitempty"`
	Slowest    *StormSlowest `json:"slowest,omitempty"`
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
	kind  int
	start time.Time
	d     time.Duration
	err   string
	// admit and app are the server's Server-Timing, when it sent one
	admit, app float64
	timed      bool
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
	if c.Readers <= 0 {
		c.Readers = 1
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

	// the readers: each one connection from an address of its own, asking
	// in turn for a work page, the collection page and a search, its
	// requests counted to the phase in which they started (none between
	// phases)
	var phase atomic.Int64
	phase.Store(-1)
	// the readers' requests in flight, and done, by phase; those of the
	// onset of phase i at len(plans)+i
	busy := make([]atomic.Int64, 2*len(plans))
	// the kinds of page the readers started a request of, by phase
	asked := make([][stormReaderKinds]atomic.Int64, 2*len(plans))
	var mu sync.Mutex
	reads := make([][]stormRead, 2*len(plans))
	rss := make([]int64, len(plans))
	done := make(chan struct{})
	var stopOnce sync.Once
	stopReader := func() { stopOnce.Do(func() { close(done) }) }
	defer stopReader()
	var wg sync.WaitGroup
	for j := range c.Readers {
		tr := &http.Transport{MaxIdleConnsPerHost: 1, MaxConnsPerHost: 1}
		defer tr.CloseIdleConnections()
		reader := &http.Client{Transport: tr, Timeout: c.ReaderTimeout}
		addr := c.ReaderAddr
		if addr != "-" && j > 0 {
			addr = fmt.Sprintf("192.0.2.%d", 10+j)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := c.Archive
			// readers start a pause apart, so they do not ask in step
			if j > 0 && c.ReaderPause > 0 {
				select {
				case <-done:
					return
				case <-time.After(c.ReaderPause * time.Duration(j) / time.Duration(c.Readers)):
				}
			}
			for i := j; ; i++ {
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
				if i > j && c.ReaderPause > 0 {
					select {
					case <-done:
						return
					case <-ctx.Done():
						return
					case <-time.After(c.ReaderPause):
					}
				}
				mu.Lock() // with the phase's end: a request of the phase is in flight before it ends
				p := phase.Load()
				if p >= 0 {
					busy[p].Add(1)
					asked[p][kind].Add(1)
				}
				mu.Unlock()
				sent := time.Now()
				rd := stormReaderGet(ctx, reader, c.Base+path, addr)
				rd.kind, rd.start = kind, sent
				if p >= 0 {
					if ctx.Err() == nil {
						mu.Lock()
						reads[p] = append(reads[p], rd)
						mu.Unlock()
					}
					busy[p].Add(-1)
				}
			}
		}()
	}
	wg.Add(1)
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
				p %= int64(len(plans)) // an onset's memory counts to its phase
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
		var onset *StormOnset
		if storm != nil && c.Onset > 0 {
			o0 := time.Now()
			phase.Store(int64(len(plans) + i))
			select {
			case <-ctx.Done():
			case <-time.After(c.Onset):
			}
			onset = &StormOnset{Seconds: time.Since(o0).Seconds()}
			mu.Lock()
			phase.Store(-1)
			mu.Unlock()
			// the onset's requests count to it, however long they take
			for busy[len(plans)+i].Load() > 0 && ctx.Err() == nil {
				time.Sleep(5 * time.Millisecond)
			}
			mu.Lock()
			onset.fill(reads[len(plans)+i], o0)
			mu.Unlock()
		}
		t0 := time.Now()
		phase.Store(int64(i))
		select {
		case <-ctx.Done():
		case <-time.After(c.Phase):
		}
		// every kind of page asked in the phase, unless the machine holds
		// the readers past any sense
		for limit := c.Phase + stormReaderKinds*c.ReaderTimeout; ctx.Err() == nil && time.Since(t0) < limit; {
			all := true
			for k := range asked[i] {
				all = all && asked[i][k].Load() > 0
			}
			if all {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		mu.Lock()
		phase.Store(-1)
		mu.Unlock()
		ph := StormPhase{Name: pl.name, Seconds: time.Since(t0).Seconds(), Onset: onset}
		if storm != nil {
			counts := storm.Stop()
			ph.Storm = &counts
		}
		// the readers' requests started in the phase count to it, however
		// long they take (at most ReaderTimeout)
		for busy[i].Load() > 0 && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		mu.Lock()
		ph.RSSMax = rss[i]
		rs := reads[i]
		mu.Unlock()
		ph.fillReader(rs, t0)
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

// fillReader sums the reader's requests of a phase that began at t0.
func (ph *StormPhase) fillReader(rs []stormRead, t0 time.Time) {
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
		if sl := pg.Slowest; sl == nil || ms(r.d) > sl.MS {
			pg.Slowest = r.slowest(t0)
		}
	}
	for k := range ph.Reader {
		ph.Reader[k].Latency = *percentiles(byKind[k])
	}
	ph.ReaderAll = *percentiles(all)
}

// fill sums the readers' requests of an onset that began at o0.
func (o *StormOnset) fill(rs []stormRead, o0 time.Time) {
	for _, r := range rs {
		o.Requests++
		if r.err != "" {
			o.Errors++
			if o.FirstError == "" {
				o.FirstError = r.err
			}
			continue
		}
		if o.Slowest == nil || ms(r.d) > o.Slowest.MS {
			o.Slowest = r.slowest(o0)
		}
	}
}

// slowest is r as the slowest answer of a span that began at t0.
func (r stormRead) slowest(t0 time.Time) *StormSlowest {
	return &StormSlowest{At: max(0, r.start.Sub(t0).Seconds()), MS: ms(r.d), AdmitMS: r.admit, AppMS: r.app, Timed: r.timed}
}

// stormReaderGet asks for a page as a browser does and reads it all; an
// answer other than a 200 with HTML is an error, described. It keeps the
// answer's Server-Timing.
func stormReaderGet(ctx context.Context, client *http.Client, target, xff string) stormRead {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return stormRead{err: err.Error()}
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
		return stormRead{d: time.Since(t0), err: err.Error()}
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	rd := stormRead{d: time.Since(t0)}
	rd.admit, rd.app, rd.timed = parseServerTiming(resp.Header.Get("Server-Timing"))
	switch {
	case err != nil:
		rd.err = "reading the answer: " + err.Error()
	case resp.StatusCode != http.StatusOK:
		rd.err = fmt.Sprintf("GET %s: status %d (Retry-After %q)", req.URL.RequestURI(), resp.StatusCode, resp.Header.Get("Retry-After"))
	case !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html"):
		rd.err = fmt.Sprintf("GET %s: Content-Type %s", req.URL.RequestURI(), resp.Header.Get("Content-Type"))
	}
	return rd
}

// parseServerTiming reads the "admit" and "app" durations (milliseconds)
// of a Server-Timing header; ok is false unless both are there.
func parseServerTiming(h string) (admit, app float64, ok bool) {
	var seen int
	for _, m := range strings.Split(h, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(m), ";")
		for _, p := range strings.Split(params, ";") {
			k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
			if k != "dur" {
				continue
			}
			d, err := strconv.ParseFloat(v, 64)
			if err != nil {
				continue
			}
			switch name {
			case "admit":
				admit, seen = d, seen|1
			case "app":
				app, seen = d, seen|2
			}
		}
	}
	return admit, app, seen == 3
}
