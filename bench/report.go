// Package bench replays the field reports' experiments against Shelfmark
// and reports them in one JSON shape shared by every scenario (docs/design.md),
// with the raw limit of the same work measured in the same run.
package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"time"
)

// Latency holds request latency percentiles in milliseconds.
type Latency struct {
	P50 float64 `json:"p50"`
	P95 float64 `json:"p95"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Step is one client count or time bucket of a run.
type Step struct {
	Clients    int              `json:"clients,omitempty"`
	Items      int64            `json:"items"`
	Seconds    float64          `json:"seconds"`
	RatePerS   float64          `json:"rate_per_s"`
	LatencyMS  *Latency         `json:"latency_ms,omitempty"`
	Errors     int64            `json:"errors"`
	Flatness   float64          `json:"flatness,omitempty"`
	PeakRSS    int64            `json:"peak_rss_bytes,omitempty"`
	RawLimit   float64          `json:"raw_limit_per_s,omitempty"`
	Fraction   float64          `json:"fraction_of_limit,omitempty"`
	ErrorCodes map[string]int64 `json:"error_codes,omitempty"`
	// AuthCost compares this step with and without authentication (rest).
	AuthCost *AuthCost `json:"auth_cost,omitempty"`
	// Servers and Storage name the configuration of a run that compares
	// several (bench rest and patents with --servers or --storage).
	Servers int    `json:"servers,omitempty"`
	Storage string `json:"storage,omitempty"`
	// CPU is the processor time the step cost, per item.
	CPU *CPU `json:"cpu,omitempty"`
	// LoadAvg is the machine's one-minute load average when the step
	// ended (other work on the machine shares its cores).
	LoadAvg float64 `json:"load_avg,omitempty"`
	// SettleSeconds is how long the step waited, before its warmup, for
	// the server to finish the background work of the steps before it
	// (rest with RestConfig.Settle).
	SettleSeconds float64 `json:"settle_seconds,omitempty"`
}

// CPU is processor time spent during a measured span, in total and per
// item, by the server processes, by the PostgreSQL processes, by an S3
// server the run started and by the load generator (the bench process
// itself, which shares the machine).
type CPU struct {
	ServerSeconds   float64 `json:"server_seconds"`
	DatabaseSeconds float64 `json:"database_seconds"`
	ClientSeconds   float64 `json:"client_seconds"`
	// StoreSeconds is the time of an S3 server the run started itself
	// (0 for local files, which cost the servers' and the kernel's time).
	StoreSeconds float64 `json:"store_seconds,omitempty"`
	// ServerMS, DatabaseMS and ClientMS are milliseconds per item.
	ServerMS   float64 `json:"server_ms_per_item"`
	DatabaseMS float64 `json:"database_ms_per_item"`
	ClientMS   float64 `json:"client_ms_per_item"`
	StoreMS    float64 `json:"store_ms_per_item,omitempty"`
	// DatabaseBackendMS is the part of DatabaseMS spent by the backends
	// of the servers' own connections; the rest is the cluster's shared
	// processes (WAL writer, checkpointer, background writer,
	// autovacuum), which other users of the cluster may also keep busy.
	DatabaseBackendMS float64 `json:"database_backend_ms_per_item"`
	// Database is false when the PostgreSQL processes could not be read
	// (the server runs on another machine): the database figures are 0.
	Database bool `json:"database_measured"`
}

// Configuration is one setup of a run that compares several (number of
// servers on one PostgreSQL, content store) with its own steps.
type Configuration struct {
	Servers int    `json:"servers"`
	Storage string `json:"storage"`
	Items   int64  `json:"items"`
	Errors  int64  `json:"errors"`
	// Stored is the number of works the configuration's store held when
	// it ended, counted in its database: the measured items, and any
	// made in unmeasured warmups.
	Stored        int64   `json:"stored"`
	Seconds       float64 `json:"seconds"`
	RatePerS      float64 `json:"rate_per_s"`
	BestRatePerS  float64 `json:"best_rate_per_s"`
	RawLimitPerS  float64 `json:"raw_limit_per_s"`
	FractionLimit float64 `json:"fraction_of_limit"`
	LatencyMS     Latency `json:"latency_ms"`
	CPU           *CPU    `json:"cpu,omitempty"`
	// LoadBefore is the machine's one-minute load average before the
	// configuration started.
	LoadBefore float64 `json:"load_before"`
	Steps      []Step  `json:"steps"`
}

// Side is one half of a comparison: what one kind of request achieved.
type Side struct {
	Items     int64   `json:"items"`
	Seconds   float64 `json:"seconds"`
	RatePerS  float64 `json:"rate_per_s"`
	LatencyMS Latency `json:"latency_ms"`
	Errors    int64   `json:"errors"`
}

// AuthCost compares the same load with a token on every request (Auth)
// and without authentication (NoAuth: a listener of the same server that
// reads no credential and gives every request the token's user), measured
// in alternating rounds of the same run so that the machine's noise falls
// on both.
type AuthCost struct {
	Auth   Side `json:"auth"`
	NoAuth Side `json:"noauth"`
	// RateRatio is Auth's throughput over NoAuth's: 1 means
	// authentication costs nothing, 0.95 that it costs 5% of throughput.
	RateRatio float64 `json:"rate_ratio"`
	// RateRatioLow and RateRatioHigh bound a 95% interval of RateRatio
	// from the ratios of the rounds taken in pairs (one of each side,
	// one after the other; a normal approximation of their logarithms).
	// An interval that holds 1 means the run could not tell the sides
	// apart: the machine's noise was larger than the cost. It takes the
	// rounds as independent; on a machine whose load from other work
	// changes over seconds they are not, and the interval is narrower
	// than the truth.
	RateRatioLow  float64 `json:"rate_ratio_low"`
	RateRatioHigh float64 `json:"rate_ratio_high"`
	// P50Ratio and P99Ratio are Auth's latency percentiles over NoAuth's
	// (above 1: authenticated requests are slower).
	P50Ratio float64 `json:"p50_ratio"`
	P99Ratio float64 `json:"p99_ratio"`
	// Rounds is the number of rounds of each side (alternating auth,
	// noauth, noauth, auth, …), each of RoundSeconds.
	Rounds       int     `json:"rounds"`
	RoundSeconds float64 `json:"round_seconds"`
}

// ratios fills in the ratios of a from its sides, and the interval of the
// rate ratio from the logarithms of the paired rounds' ratios.
func (a *AuthCost) ratios(logPairs []float64) {
	if n := float64(len(logPairs)); n >= 2 {
		var sum, sq float64
		for _, x := range logPairs {
			sum += x
		}
		mean := sum / n
		for _, x := range logPairs {
			sq += (x - mean) * (x - mean)
		}
		half := 1.96 * math.Sqrt(sq/(n-1)/n)
		a.RateRatioLow, a.RateRatioHigh = math.Exp(mean-half), math.Exp(mean+half)
	}
	div := func(x, y float64) float64 {
		if y <= 0 {
			return 0
		}
		return x / y
	}
	a.RateRatio = div(a.Auth.RatePerS, a.NoAuth.RatePerS)
	a.P50Ratio = div(a.Auth.LatencyMS.P50, a.NoAuth.LatencyMS.P50)
	a.P99Ratio = div(a.Auth.LatencyMS.P99, a.NoAuth.LatencyMS.P99)
}

// Report is the result of one scenario run; the top-level fields are the
// same for every scenario so reports can be compared by one script.
type Report struct {
	Scenario      string         `json:"scenario"`
	Backend       string         `json:"backend"`
	Target        string         `json:"target,omitempty"`
	Items         int64          `json:"items"`
	Seconds       float64        `json:"seconds"`
	RatePerS      float64        `json:"rate_per_s"`
	Flatness      float64        `json:"flatness"`
	RawLimitPerS  float64        `json:"raw_limit_per_s"`
	RawLimitWhat  string         `json:"raw_limit_what"`
	FractionLimit float64        `json:"fraction_of_limit"`
	LatencyMS     Latency        `json:"latency_ms"`
	PeakRSSBytes  int64          `json:"peak_rss_bytes"`
	Errors        int64          `json:"errors"`
	Steps         []Step         `json:"steps"`
	Params        map[string]any `json:"params,omitempty"`
	Started       time.Time      `json:"started"`
	// AuthCost, in a rest report, compares the whole run with and without
	// authentication (each step's comparison is in its step).
	AuthCost *AuthCost `json:"auth_cost,omitempty"`
	// Versus, in a rest report, is the same ramp against another
	// repository in the same run, step by step (RunVersusFedora).
	Versus *Versus `json:"versus,omitempty"`
	// Configurations, in a run that compares several servers or content
	// stores, holds each with its own steps (Steps holds them all, in
	// order, each naming its configuration).
	Configurations []Configuration `json:"configurations,omitempty"`
}

// WriteJSON writes the report to path.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// percentiles computes latency percentiles of durations (sorted in place).
func percentiles(ds []time.Duration) *Latency {
	if len(ds) == 0 {
		return &Latency{}
	}
	slices.Sort(ds)
	at := func(q float64) float64 {
		i := int(q*float64(len(ds))+0.5) - 1
		i = max(0, min(i, len(ds)-1))
		return float64(ds[i].Microseconds()) / 1000
	}
	return &Latency{P50: at(0.50), P95: at(0.95), P99: at(0.99), Max: float64(ds[len(ds)-1].Microseconds()) / 1000}
}

// PeakRSS returns the peak resident set size of a process (VmHWM).
func PeakRSS(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	var kb int64
	for _, line := range strings.Split(string(b), "\n") {
		if _, err := fmt.Sscanf(line, "VmHWM: %d kB", &kb); err == nil {
			return kb * 1024
		}
	}
	return 0
}
