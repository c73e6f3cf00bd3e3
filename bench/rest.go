package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
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
	// Fedora sends the same Turtle as an LDP POST to a Fedora container.
	Fedora bool
	// Format is "turtle" or "json" (Shelfmark only).
	Format string
	// Generator is "go" (built in) or "wrk" (the Debian package, which
	// must be installed; it is what Fedora's figures were measured with).
	Generator string
	// Clients lists the concurrency of each step (default 1,2,4,…,64).
	Clients []int
	// StepDuration is how long each step measures (after Warmup).
	StepDuration, Warmup time.Duration
	// Triples per work (default 54).
	Triples int
	// Seed makes the generated works the same in every run.
	Seed uint64
	// Progress, when set, is told after each step.
	Progress func(s Step)
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
	if c.Triples <= 0 {
		c.Triples = 54
	}
	if c.Format == "" {
		c.Format = "turtle"
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
		MaxIdleConns:        maxClients * 2,
		MaxIdleConnsPerHost: maxClients * 2,
		MaxConnsPerHost:     maxClients * 2,
		DisableCompression:  true,
	}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	rep := &Report{Scenario: "rest", Target: c.Target, Started: time.Now().UTC(),
		Params: map[string]any{"clients": c.Clients, "step_seconds": c.StepDuration.Seconds(), "triples": c.Triples, "format": c.Format, "fedora": c.Fedora, "generator": c.Generator}}
	if c.Generator == "" {
		c.Generator = "go"
	} else if c.Generator != "go" && c.Generator != "wrk" {
		return nil, fmt.Errorf("generator must be go or wrk, not %q", c.Generator)
	}
	var all []time.Duration
	var totalItems int64
	var totalSecs float64
	for _, n := range c.Clients {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var st Step
		if c.Generator == "wrk" {
			if c.Warmup > 0 {
				if _, err := runWrk(ctx, c.Target, body, ctype, n, c.Warmup); err != nil {
					return nil, err
				}
			}
			if st, err = runWrk(ctx, c.Target, body, ctype, n, c.StepDuration); err != nil {
				return nil, err
			}
			// wrk gives percentiles, not samples: the run's figures are
			// the worst of its steps
			rep.LatencyMS = worst(rep.LatencyMS, *st.LatencyMS)
		} else {
			if c.Warmup > 0 {
				runClients(ctx, client, c.Target, body, ctype, n, c.Warmup)
			}
			var lat []time.Duration
			st, lat = runClients(ctx, client, c.Target, body, ctype, n, c.StepDuration)
			all = append(all, lat...)
		}
		rep.Steps = append(rep.Steps, st)
		totalItems += st.Items
		totalSecs += st.Seconds
		rep.Errors += st.Errors
		if c.Progress != nil {
			c.Progress(st)
		}
	}
	rep.Items, rep.Seconds = totalItems, totalSecs
	if totalSecs > 0 {
		rep.RatePerS = float64(totalItems) / totalSecs
	}
	if c.Generator != "wrk" {
		rep.LatencyMS = *percentiles(all)
	}
	// flatness of a ramp: the rate of the last step over the first
	if len(rep.Steps) > 1 && rep.Steps[0].RatePerS > 0 {
		rep.Flatness = rep.Steps[len(rep.Steps)-1].RatePerS / rep.Steps[0].RatePerS
	}
	return rep, nil
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

// runClients runs n clients for d and returns the step and its latencies.
func runClients(ctx context.Context, client *http.Client, target string, body []byte, ctype string, n int, d time.Duration) (Step, []time.Duration) {
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
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := make([]time.Duration, 0, 4096)
			for ctx.Err() == nil {
				t0 := time.Now()
				req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, target, bytes.NewReader(body))
				req.Header.Set("Content-Type", ctype)
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
