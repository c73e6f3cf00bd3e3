package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shelfmark/shelfmark"
)

// RestConfig configures the rest scenario: clients create one work per
// request, in steps of rising concurrency.
type RestConfig struct {
	// Target is the URL to create works at (".../api/v1/works" for
	// Shelfmark, an LDP container for Fedora).
	Target string
	// Targets, when it has more than one URL, are the same endpoint on
	// several servers of one store: client i of a step sends every request
	// to Targets[i mod len(Targets)], so the clients spread round-robin
	// over the servers without a load balancer. It replaces Target (the
	// go generator only; no comparison without authentication).
	Targets []string
	// Token, when set, is sent as "Authorization: Bearer TOKEN" with
	// every request to Target.
	Token string
	// NoAuthTarget, when set, is the same URL on a listener of the same
	// server that reads no credential (every request is the token's
	// user): each step is then measured against both, in alternating
	// rounds, and the report compares them (AuthCost).
	NoAuthTarget string
	// Round is the length of one round of that comparison (default 1 s).
	Round time.Duration
	// Fedora sends the same Turtle as an LDP POST to a Fedora container.
	Fedora bool
	// Format is "turtle" or "json" (Shelfmark only).
	Format string
	// Generator is "go" (built in) or "wrk" (the Debian package, which
	// must be installed; it is what Fedora's figures were measured with).
	Generator string
	// Clients lists the concurrency of each step (default 1,2,4,…,64).
	Clients []int
	// StepDuration is how long each step measures (after Warmup); with
	// NoAuthTarget, each side of the comparison measures that long.
	StepDuration, Warmup time.Duration
	// Triples per work (default 54).
	Triples int
	// Seed makes the generated works the same in every run.
	Seed uint64
	// Progress, when set, is told after each step.
	Progress func(s Step)
	// Around, when set, is called before each step is measured (after
	// its warmup); the function it returns is called with the step once
	// it is measured, before Progress, and may add to it (CPU spent).
	Around func(clients int) func(*Step)
	// Settle, when set, is called before each step's warmup and returns
	// once the server has done the background work the steps before it
	// left (a work's preservation copy is written seconds after its
	// create), so that a step does not pay for the one before; it
	// returns how long it waited (Step.SettleSeconds).
	Settle func(ctx context.Context) (time.Duration, error)
}

// RunRest runs the ramp and returns a report (backend, raw limit and peak
// RSS are for the caller to fill in, as it knows the server).
func RunRest(ctx context.Context, c RestConfig) (*Report, error) {
	if len(c.Clients) == 0 {
		c.Clients = []int{1, 2, 4, 8, 16, 32, 64}
	}
	if c.StepDuration <= 0 {
		c.StepDuration = 5 * time.Second
	}
	if c.Round <= 0 {
		c.Round = time.Second
	}
	if c.Triples <= 0 {
		c.Triples = 54
	}
	if c.Format == "" {
		c.Format = "turtle"
	}
	if c.Generator == "" {
		c.Generator = "go"
	} else if c.Generator != "go" && c.Generator != "wrk" {
		return nil, fmt.Errorf("generator must be go or wrk, not %q", c.Generator)
	}
	if c.NoAuthTarget != "" && c.Token == "" {
		return nil, fmt.Errorf("a comparison without authentication needs a token for the other side")
	}
	targets := c.Targets
	if len(targets) == 0 {
		targets = []string{c.Target}
	} else if c.Target == "" {
		c.Target = targets[0]
	}
	if len(targets) > 1 && (c.Generator == "wrk" || c.NoAuthTarget != "") {
		return nil, fmt.Errorf("several targets need the go generator and no comparison without authentication")
	}
	body, ctype, err := restBody(c)
	if err != nil {
		return nil, err
	}
	maxClients := 0
	for _, n := range c.Clients {
		maxClients = max(maxClients, n)
	}
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        maxClients * 4, // two listeners
		MaxIdleConnsPerHost: maxClients * 2,
		MaxConnsPerHost:     maxClients * 2,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	rep := &Report{Scenario: "rest", Target: strings.Join(targets, " "), Started: time.Now().UTC(),
		Params: map[string]any{"clients": c.Clients, "step_seconds": c.StepDuration.Seconds(), "triples": c.Triples, "format": c.Format, "fedora": c.Fedora,
			"generator": c.Generator, "token": c.Token != "", "compare_noauth": c.NoAuthTarget != "", "warmup_seconds": c.Warmup.Seconds(), "settle": c.Settle != nil}}
	sides := []restSide{{targets: targets, token: c.Token}}
	rounds, round := 1, c.StepDuration
	if c.NoAuthTarget != "" {
		sides = append(sides, restSide{targets: []string{c.NoAuthTarget}})
		rounds = max(1, int((c.StepDuration+c.Round/2)/c.Round))
		round = c.StepDuration / time.Duration(rounds)
		if c.Generator == "wrk" { // wrk runs whole seconds
			round = max(time.Second, round.Round(time.Second))
			rounds = max(1, int((c.StepDuration+round/2)/round))
		}
		rep.Params["round_seconds"] = round.Seconds()
	}
	measure := func(s restSide, n int, d time.Duration) (Step, []time.Duration, error) {
		if c.Generator == "wrk" {
			st, err := runWrk(ctx, s.targets[0], s.token, body, ctype, n, d)
			return st, nil, err
		}
		st, lat := runClients(ctx, client, s.targets, s.token, body, ctype, n, d)
		return st, lat, nil
	}
	whole := make([]tally, len(sides))
	var wholePairs []float64 // log(auth rate / noauth rate) of each pair of rounds
	for _, n := range c.Clients {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var settled time.Duration
		if c.Settle != nil {
			if settled, err = c.Settle(ctx); err != nil {
				return nil, fmt.Errorf("settle before the step of %d clients: %w", n, err)
			}
		}
		if c.Warmup > 0 {
			for _, s := range sides {
				if _, _, err := measure(s, n, c.Warmup); err != nil {
					return nil, err
				}
			}
		}
		var done func(*Step)
		if c.Around != nil {
			done = c.Around(n)
		}
		step := make([]tally, len(sides))
		var pairs []float64
		for r := 0; r < rounds; r++ {
			rates := make([]float64, len(sides))
			// auth, noauth, then noauth, auth: neither side always goes
			// first (after the other's load, or as the store has grown)
			for k := range sides {
				if r%2 == 1 {
					k = len(sides) - 1 - k
				}
				st, lat, err := measure(sides[k], n, round)
				if err != nil {
					return nil, err
				}
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				step[k].add(st, lat)
				whole[k].add(st, lat)
				rates[k] = st.RatePerS
			}
			if len(sides) > 1 && rates[0] > 0 && rates[1] > 0 {
				pairs = append(pairs, math.Log(rates[0]/rates[1]))
			}
		}
		wholePairs = append(wholePairs, pairs...)
		st := step[0].step(n)
		st.SettleSeconds = settled.Seconds()
		if len(sides) > 1 {
			st.AuthCost = authCost(step[0], step[1], rounds, round, pairs)
		}
		if done != nil {
			done(&st)
		}
		rep.Steps = append(rep.Steps, st)
		rep.Errors += st.Errors
		if c.Progress != nil {
			c.Progress(st)
		}
	}
	all := whole[0].side()
	rep.Items, rep.Seconds, rep.RatePerS = all.Items, all.Seconds, all.RatePerS
	if c.Generator == "wrk" {
		// wrk gives percentiles, not samples: the run's figures are the
		// worst of its steps
		for _, st := range rep.Steps {
			rep.LatencyMS = worst(rep.LatencyMS, *st.LatencyMS)
		}
	} else {
		rep.LatencyMS = all.LatencyMS
	}
	if len(sides) > 1 {
		// the pairs of every step: each compares the sides at one load
		rep.AuthCost = authCost(whole[0], whole[1], rounds*len(c.Clients), round, wholePairs)
	}
	// flatness of a ramp: the rate of the last step over the first
	if len(rep.Steps) > 1 && rep.Steps[0].RatePerS > 0 {
		rep.Flatness = rep.Steps[len(rep.Steps)-1].RatePerS / rep.Steps[0].RatePerS
	}
	return rep, nil
}

// restSide is where one side of the scenario sends its requests: client
// i to targets[i mod len(targets)].
type restSide struct {
	targets []string
	token   string
}

// tally sums the rounds of one side.
type tally struct {
	items, errors int64
	secs          float64
	codes         map[string]int64
	lat           []time.Duration // the go generator's samples
	// wrk gives percentiles only: their sums weighted by requests
	wrk    Latency
	wrkMax float64
}

// add counts one round.
func (t *tally) add(st Step, lat []time.Duration) {
	t.items += st.Items
	t.errors += st.Errors
	t.secs += st.Seconds
	for k, v := range st.ErrorCodes {
		if t.codes == nil {
			t.codes = map[string]int64{}
		}
		t.codes[k] += v
	}
	t.lat = append(t.lat, lat...)
	if lat == nil && st.LatencyMS != nil {
		w := float64(st.Items)
		t.wrk.P50 += w * st.LatencyMS.P50
		t.wrk.P95 += w * st.LatencyMS.P95
		t.wrk.P99 += w * st.LatencyMS.P99
		t.wrkMax = max(t.wrkMax, st.LatencyMS.Max)
	}
}

// side returns the figures of the rounds counted.
func (t *tally) side() Side {
	s := Side{Items: t.items, Seconds: t.secs, Errors: t.errors}
	if t.secs > 0 {
		s.RatePerS = float64(t.items) / t.secs
	}
	switch {
	case len(t.lat) > 0:
		s.LatencyMS = *percentiles(slices.Clone(t.lat))
	case t.items > 0:
		w := float64(t.items)
		s.LatencyMS = Latency{P50: t.wrk.P50 / w, P95: t.wrk.P95 / w, P99: t.wrk.P99 / w, Max: t.wrkMax}
	}
	return s
}

// step returns the rounds counted as one step of n clients.
func (t *tally) step(n int) Step {
	s := t.side()
	return Step{Clients: n, Items: s.Items, Seconds: s.Seconds, RatePerS: s.RatePerS, LatencyMS: &s.LatencyMS, Errors: s.Errors, ErrorCodes: t.codes}
}

// authCost compares the authenticated side with the other; logPairs are
// the logarithms of the ratios of its pairs of rounds.
func authCost(auth, noauth tally, rounds int, round time.Duration, logPairs []float64) *AuthCost {
	a := &AuthCost{Auth: auth.side(), NoAuth: noauth.side(), Rounds: rounds, RoundSeconds: round.Seconds()}
	a.ratios(logPairs)
	return a
}

func restBody(c RestConfig) ([]byte, string, error) {
	stmts := patentStatements(c.Seed, 0, c.Triples)
	if c.Fedora || c.Format == "turtle" {
		return []byte(turtleOf(stmts)), "text/turtle", nil
	}
	if c.Format != "json" {
		return nil, "", fmt.Errorf("format must be turtle or json, not %q", c.Format)
	}
	b, err := workJSON(stmts)
	return b, "application/json", err
}

// workJSON is the API's JSON body of a work with these statements.
func workJSON(stmts []shelfmark.Statement) ([]byte, error) {
	meta := map[string][]map[string]string{}
	for _, s := range stmts {
		v := map[string]string{"@value": s.Object.Value}
		if s.Object.Kind == 0 {
			v = map[string]string{"@id": s.Object.Value}
		} else if s.Object.Lang != "" {
			v["@language"] = s.Object.Lang
		} else if s.Object.Datatype != "" {
			v["@type"] = s.Object.Datatype
		}
		meta[s.Predicate] = append(meta[s.Predicate], v)
	}
	return json.Marshal(map[string]any{"metadata": meta})
}

// bearer sends a token as "Authorization: Bearer …" with every request
// (none when the token is "").
type bearer struct {
	token string
	next  http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	if b.token != "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.next.RoundTrip(r)
}

// runClients runs n clients for d and returns the step and its latencies;
// client i sends to targets[i mod len(targets)]; with a token, every
// request carries it.
func runClients(ctx context.Context, client *http.Client, targets []string, token string, body []byte, ctype string, n int, d time.Duration) (Step, []time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var (
		mu    sync.Mutex
		lat   []time.Duration
		errs  atomic.Int64
		codes sync.Map
		wg    sync.WaitGroup
	)
	start := time.Now()
	for i := 0; i < n; i++ {
		target := targets[i%len(targets)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 4096)
			for ctx.Err() == nil {
				t0 := time.Now()
				req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, target, bytes.NewReader(body))
				req.Header.Set("Content-Type", ctype)
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				resp, err := client.Do(req)
				if err != nil {
					errs.Add(1)
					v, _ := codes.LoadOrStore("transport", new(atomic.Int64))
					v.(*atomic.Int64).Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusCreated {
					errs.Add(1)
					v, _ := codes.LoadOrStore(strconv.Itoa(resp.StatusCode), new(atomic.Int64))
					v.(*atomic.Int64).Add(1)
					continue
				}
				local = append(local, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	st := Step{Clients: n, Items: int64(len(lat)), Seconds: secs, RatePerS: float64(len(lat)) / secs, Errors: errs.Load()}
	codes.Range(func(k, v any) bool {
		if st.ErrorCodes == nil {
			st.ErrorCodes = map[string]int64{}
		}
		st.ErrorCodes[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	st.LatencyMS = percentiles(lat)
	return st, lat
}

func worst(a, b Latency) Latency {
	return Latency{P50: max(a.P50, b.P50), P95: max(a.P95, b.P95), P99: max(a.P99, b.P99), Max: max(a.Max, b.Max)}
}

// FixedCaller is an authenticator (http.Authenticator) that makes its
// caller the caller of every request and reads no credential. It is the
// lab's: bench rest serves it on a loopback listener of its own to
// measure what authentication costs. Its caller's token is checked once,
// by whoever builds it.
type FixedCaller struct{ Caller *shelfmark.Caller }

// Authenticate returns the fixed caller.
func (f FixedCaller) Authenticate(*http.Request) (*shelfmark.Caller, error) { return f.Caller, nil }
