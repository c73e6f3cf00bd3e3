package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// settleEvery is how often settleOnPreservation reads the server's
// metrics; settleLimit bounds its wait, so a preservation copy that
// cannot catch up (a full disk) fails the run rather than hangs it.
const (
	settleEvery = 200 * time.Millisecond
	settleLimit = 5 * time.Minute
)

// preservationLag is the metric settleOnPreservation waits on.
const preservationLag = "shelfmark_preservation_lag_seconds"

// settleOnPreservation returns bench.RestConfig.Settle for a server at
// base: it reads base's /metrics with token (an administrator's, which
// /metrics asks for on the server's address) until the preservation
// copy has nothing waiting (its lag is 0). A work's copy is written a
// few seconds after its create (the preserver's window), so without it
// each step of the ramp would pay for the copies of the step before:
// the step after one client's, the fastest per client, measured a
// fraction of its own rate.
func settleOnPreservation(base, token string) func(ctx context.Context) (time.Duration, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	return func(ctx context.Context) (time.Duration, error) {
		start := time.Now()
		for {
			lag, err := readMetric(ctx, client, base+"/metrics", token, preservationLag)
			if err != nil {
				return time.Since(start), err
			}
			if lag == 0 {
				return time.Since(start), nil
			}
			if time.Since(start) > settleLimit {
				return time.Since(start), fmt.Errorf("the preservation copy is still %.1f s behind after %s", lag, settleLimit)
			}
			select {
			case <-ctx.Done():
				return time.Since(start), ctx.Err()
			case <-time.After(settleEvery):
			}
		}
	}
}

// readMetric returns the value of the unlabelled metric name in the
// Prometheus text exposition at url.
func readMetric(ctx context.Context, client *http.Client, url, token, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("read %s: %s", url, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		v, ok := strings.CutPrefix(sc.Text(), name+" ")
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, fmt.Errorf("%s in %s: %w", name, url, err)
		}
		return f, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("read %s: %w", url, err)
	}
	return 0, fmt.Errorf("%s has no %s (is the preservation copy off?)", url, name)
}
