// Package bench replays the field reports' experiments against Shelfmark
// and reports them in one JSON shape shared by every scenario (docs/design.md),
// with the raw limit of the same work measured in the same run.
package bench

import (
	"encoding/json"
	"fmt"
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
