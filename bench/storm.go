package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// StormTargets is what a crawler storm asks for: searches of words the
// archive holds, prefix searches, facet filters and browsing of a
// collection, and search inside a book (IIIF Content Search). Every
// request is a valid one that a crawler following the site's links, or
// a client hammering its search, would make.
type StormTargets struct {
	// Words are searched for (and their first letters as prefixes).
	Words []string
	// Collection is a collection's id, for facet filters and browsing
	// ("": none of those).
	Collection string
	// Book is a work with OCR text, for search inside it ("": none).
	Book string
}

// StormConfig configures a crawler storm: Conns connections, each asking
// again as soon as it has read the last answer, whatever the answer
// (429 and 503 included) unless HonourRetryAfter.
type StormConfig struct {
	// Base is the server's root URL (http://127.0.0.1:port).
	Base    string
	Targets StormTargets
	// Conns is the number of connections (each one request at a time).
	Conns int
	// Addrs is how many client addresses they come from: connection k
	// sends X-Forwarded-For: StormAddr(k % Addrs), which the server
	// takes as the client when it trusts the connection's address as a
	// proxy (serve --trusted-proxy 127.0.0.1). 0 sends no header: every
	// connection is the loopback address.
	Addrs int
	// HonourRetryAfter makes a connection answered 429 or 503 wait as
	// long as Retry-After says (at most 60 s) before asking again; by
	// default it asks again at once, as an abusive crawler does.
	HonourRetryAfter bool
	// Timeout bounds each request (default 10 s): a request not answered
	// by then counts as a timeout, and its connection is dropped.
	Timeout time.Duration
	// UserAgent is the storm's User-Agent (default StormBrowserAgent: a
	// crawler that passes for a browser, so that only its behaviour can
	// tell it from a reader).
	UserAgent string
	Seed      uint64
}

// StormBrowserAgent is a desktop browser's User-Agent.
const StormBrowserAgent = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"

// StormAddr is the X-Forwarded-For address of the storm's client k:
// 10.9.x.y, distinct for k below 65,536.
func StormAddr(k int) string { return fmt.Sprintf("10.9.%d.%d", (k>>8)&0xff, k&0xff) }

// StormCounts is what a storm got back.
type StormCounts struct {
	Conns int `json:"conns"`
	Addrs int `json:"addrs"`
	// HonourRetryAfter is whether the storm waited as Retry-After said.
	HonourRetryAfter bool    `json:"honour_retry_after"`
	Seconds          float64 `json:"seconds"`
	// Requests were sent; the rest of the counts split them.
	Requests int64 `json:"requests"`
	OK       int64 `json:"ok_200"`
	// TooMany are 429 answers, Unavailable 503 ones; NoRetryAfter counts
	// those of both without a Retry-After header.
	TooMany      int64 `json:"too_many_429"`
	Unavailable  int64 `json:"unavailable_503"`
	NoRetryAfter int64 `json:"refused_without_retry_after"`
	// Other counts the other statuses, by status in OtherCodes.
	Other      int64            `json:"other"`
	OtherCodes map[string]int64 `json:"other_codes,omitempty"`
	// Timeouts were not answered within the storm's Timeout; ConnErrors
	// failed otherwise (connection refused or reset, a body cut short).
	Timeouts   int64 `json:"timeouts"`
	ConnErrors int64 `json:"conn_errors"`
	// FirstError describes the first timeout or connection error.
	FirstError string `json:"first_error,omitempty"`
	// RatePerS is answered requests (any status) per second, OKPerS the
	// 200s per second.
	RatePerS float64 `json:"rate_per_s"`
	OKPerS   float64 `json:"ok_per_s"`
	// OKLatency and RefusedLatency are those of the answered requests,
	// by kind of answer, from a uniform sample of at most 4,096 of each
	// connection's.
	OKLatency      Latency `json:"ok_latency_ms"`
	RefusedLatency Latency `json:"refused_latency_ms"`
	// ByKind counts the requests of each kind (search, prefix, facet,
	// book).
	ByKind map[string]int64 `json:"by_kind"`
}

// Refused is the 429 and 503 answers.
func (c *StormCounts) Refused() int64 { return c.TooMany + c.Unavailable }

// Storm is a running crawler storm.
type Storm struct {
	c     StormConfig
	stop  chan struct{}
	wg    sync.WaitGroup
	start time.Time
	tr    *http.Transport

	mu                 sync.Mutex
	okLat, refusedLat  []time.Duration
	other, byKind      map[string]int64
	firstErr           string
	requests, ok, many atomic.Int64
	unavail, noRetry   atomic.Int64
	others, timeouts   atomic.Int64
	connErrs           atomic.Int64
	stopOnce           sync.Once
	result             StormCounts
}

// StartStorm starts the storm's connections; they run until Stop (or
// until ctx ends, which abandons their requests in flight). It talks only
// to c.Base.
func StartStorm(ctx context.Context, c StormConfig) (*Storm, error) {
	if c.Conns <= 0 {
		return nil, errors.New("storm: the number of connections must be positive")
	}
	if c.Addrs < 0 {
		return nil, errors.New("storm: the number of addresses must be 0 or more")
	}
	if len(c.Targets.Words) == 0 {
		return nil, errors.New("storm: no words to search for")
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	if c.UserAgent == "" {
		c.UserAgent = StormBrowserAgent
	}
	s := &Storm{c: c, stop: make(chan struct{}), start: time.Now(), other: map[string]int64{}, byKind: map[string]int64{},
		tr: &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
			MaxIdleConns:        c.Conns,
			MaxIdleConnsPerHost: c.Conns,
		}}
	for k := range c.Conns {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.conn(ctx, k)
		}()
	}
	return s, nil
}

// stormKinds are the kinds of request, asked in turn.
var stormKinds = []string{"search", "prefix", "facet", "book"}

// target returns the path and query of a request of kind, chosen by r.
func (t StormTargets) target(kind string, r *rand.Rand) string {
	word := t.Words[r.IntN(len(t.Words))]
	prefix := word[:1] + "*"
	if r.IntN(2) == 0 && len(word) > 1 {
		prefix = word[:2] + "*"
	}
	switch kind {
	case "prefix":
		if r.IntN(3) == 0 {
			return "/api/v1/search?q=" + url.QueryEscape(prefix)
		}
		return "/search?q=" + url.QueryEscape(prefix)
	case "facet":
		switch n := r.IntN(4); {
		case n == 0 && t.Collection != "":
			return "/search?collection=" + url.QueryEscape(t.Collection)
		case n == 1 && t.Collection != "":
			return "/search?q=" + url.QueryEscape(word) + "&collection=" + url.QueryEscape(t.Collection)
		case n == 2:
			return "/api/v1/search?q=" + url.QueryEscape(word) + "&kind=work"
		default:
			return "/search?q=" + url.QueryEscape(word) + "&kind=work"
		}
	case "book":
		if t.Book != "" {
			v, q := "1", word
			if r.IntN(2) == 0 {
				v, q = "2", prefix
			}
			return "/iiif/" + url.PathEscape(t.Book) + "/search/" + v + "?q=" + url.QueryEscape(q)
		}
	}
	return "/search?q=" + url.QueryEscape(word)
}

// conn is storm connection k: one request at a time until ctx ends.
func (s *Storm) conn(ctx context.Context, k int) {
	r := rand.New(rand.NewPCG(s.c.Seed, uint64(k)))
	client := &http.Client{Transport: s.tr, Timeout: s.c.Timeout}
	xff := ""
	if s.c.Addrs > 0 {
		xff = StormAddr(k % s.c.Addrs)
	}
	var okLat, refusedLat []time.Duration // samples of at most stormSamples
	var nOK, nRefused int64
	byKind := map[string]int64{}
	defer func() {
		s.mu.Lock()
		s.okLat, s.refusedLat = append(s.okLat, okLat...), append(s.refusedLat, refusedLat...)
		for kind, n := range byKind {
			s.byKind[kind] += n
		}
		s.mu.Unlock()
	}()
	for i := k; ; i++ {
		select {
		case <-s.stop:
			return
		case <-ctx.Done():
			return
		default:
		}
		kind := stormKinds[i%len(stormKinds)]
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.c.Base+s.c.Targets.target(kind, r), nil)
		if err != nil {
			s.fail(&s.connErrs, err)
			return
		}
		req.Header.Set("Accept", browserAccept)
		req.Header.Set("User-Agent", s.c.UserAgent)
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		t0 := time.Now()
		resp, err := client.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		d := time.Since(t0)
		if ctx.Err() != nil {
			return // the run was interrupted: this request is not counted
		}
		s.requests.Add(1)
		byKind[kind]++
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded) {
				s.fail(&s.timeouts, err)
			} else {
				s.fail(&s.connErrs, err)
			}
			continue
		}
		switch resp.StatusCode {
		case http.StatusOK:
			s.ok.Add(1)
			nOK++
			okLat = keepSample(okLat, nOK, d, r)
			continue
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			if resp.StatusCode == http.StatusTooManyRequests {
				s.many.Add(1)
			} else {
				s.unavail.Add(1)
			}
			nRefused++
			refusedLat = keepSample(refusedLat, nRefused, d, r)
			ra := resp.Header.Get("Retry-After")
			if ra == "" {
				s.noRetry.Add(1)
			}
			if s.c.HonourRetryAfter {
				wait := time.Second
				if n, err := strconv.Atoi(ra); err == nil && n >= 0 {
					wait = time.Duration(min(n, 60)) * time.Second
				} else if t, err := http.ParseTime(ra); err == nil {
					wait = min(time.Until(t), time.Minute)
				}
				select {
				case <-ctx.Done():
				case <-s.stop:
				case <-time.After(wait):
				}
			}
		default:
			s.others.Add(1)
			s.mu.Lock()
			s.other[strconv.Itoa(resp.StatusCode)]++
			s.mu.Unlock()
		}
	}
}

// fail counts err in n and keeps the first error's text.
func (s *Storm) fail(n *atomic.Int64, err error) {
	n.Add(1)
	s.mu.Lock()
	if s.firstErr == "" {
		s.firstErr = err.Error()
	}
	s.mu.Unlock()
}

// Stop ends the storm: each connection sends no more requests, reads the
// answer to the one in flight (within the storm's Timeout) and counts it.
// It returns what the storm got back; Seconds runs from the start to the
// call. Calling it again returns the same counts.
func (s *Storm) Stop() StormCounts {
	s.stopOnce.Do(func() {
		secs := time.Since(s.start).Seconds()
		close(s.stop)
		s.wg.Wait()
		s.tr.CloseIdleConnections()
		s.mu.Lock()
		defer s.mu.Unlock()
		c := StormCounts{Conns: s.c.Conns, Addrs: s.c.Addrs, HonourRetryAfter: s.c.HonourRetryAfter, Seconds: secs,
			Requests: s.requests.Load(), OK: s.ok.Load(), TooMany: s.many.Load(), Unavailable: s.unavail.Load(),
			NoRetryAfter: s.noRetry.Load(), Other: s.others.Load(), Timeouts: s.timeouts.Load(), ConnErrors: s.connErrs.Load(),
			FirstError: s.firstErr, ByKind: s.byKind}
		if len(s.other) > 0 {
			c.OtherCodes = s.other
		}
		if secs > 0 {
			c.RatePerS = float64(c.Requests-c.Timeouts-c.ConnErrors) / secs
			c.OKPerS = float64(c.OK) / secs
		}
		c.OKLatency, c.RefusedLatency = *percentiles(slices.Clip(s.okLat)), *percentiles(slices.Clip(s.refusedLat))
		s.result = c
	})
	return s.result
}

// stormSamples bounds the latencies a storm connection keeps of each kind
// of answer, so that a long storm of fast refusals costs bounded memory.
const stormSamples = 4096

// keepSample adds d, the n-th of its kind, to a uniform sample of at most
// stormSamples of them (reservoir sampling): it appends while there is
// room, and then replaces a random element with probability
// stormSamples/n.
func keepSample(sample []time.Duration, n int64, d time.Duration, r *rand.Rand) []time.Duration {
	if len(sample) < stormSamples {
		return append(sample, d)
	}
	if i := r.Int64N(max(n, stormSamples)); i < stormSamples {
		sample[i] = d
	}
	return sample
}
