package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchUICommand: bench ui at a tiny size prints its table and summary,
// and writes a JSON report with the fields every report has (one step per
// page, each page answered right) and an HTML report; it measures the cost
// of counting uses.
func TestBenchUICommand(t *testing.T) {
	t.Setenv("SHELFMARK_DATABASE_URL", "")
	dir := t.TempDir()
	jsonPath, reportDir := filepath.Join(dir, "ui.json"), filepath.Join(dir, "report")
	out, err := runCLI(t, "ui", "--pages", "12", "--members", "300", "--requests", "3", "--warmup", "1", "--durability", "relaxed",
		"--usage-seconds", "2", "--json", jsonPath, "--report", reportDir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "ui sqlite: 300 members, server time: work page (12 pages) p99 ") || !strings.Contains(out, "collection page at 90% depth") ||
		!strings.Contains(out, "search, a word on every page of the book (grouped under the one work): p99 ") || !strings.Contains(out, "counting uses (1000 other views/s recorded") {
		t.Fatalf("output:\n%s", out)
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Scenario string           `json:"scenario"`
		Items    int              `json:"items"`
		Errors   int              `json:"errors"`
		Steps    []map[string]any `json:"steps"`
		Params   struct {
			Pages []struct {
				Name        string `json:"name"`
				Available   bool   `json:"available"`
				Unavailable string `json:"unavailable"`
				Requests    int    `json:"requests"`
				Errors      int    `json:"errors"`
			} `json:"pages_measured"`
		} `json:"params"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	var all map[string]any
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"scenario", "backend", "items", "seconds", "rate_per_s", "flatness", "raw_limit_per_s", "fraction_of_limit", "latency_ms", "peak_rss_bytes", "errors", "steps"} {
		if _, ok := all[k]; !ok {
			t.Errorf("the JSON report has no %q", k)
		}
	}
	if rep.Scenario != "ui" || rep.Items != 21 || rep.Errors != 0 || len(rep.Steps) != 7 || len(rep.Params.Pages) != 7 {
		t.Fatalf("report: %s", b)
	}
	for _, p := range rep.Params.Pages {
		if !p.Available || p.Requests != 3 || p.Errors != 0 {
			t.Errorf("%s: %+v", p.Name, p)
		}
	}
	if _, err := os.Stat(filepath.Join(reportDir, "index.html")); err != nil {
		t.Fatal(err)
	}
}
