package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark/internal/testkit"
)

// TestBenchStormCommand: bench storm at a tiny size runs end to end
// against a serve it starts and prints, and writes as JSON, every phase
// (quiet, one per storm, quiet again) with the reader's figures per page,
// the storm's counts by status and the server's RSS, and the goal lines;
// and an HTML report. The figures' values are the benchmark's business,
// not the test's: only that the quiet phase's pages were answered right.
func TestBenchStormCommand(t *testing.T) {
	t.Setenv("SHELFMARK_DATABASE_URL", "")
	t.Setenv("SHELFMARK_BINARY", filepath.Join(testkit.Build(t, "shelfmark"), "shelfmark"))
	dir := t.TempDir()
	jsonPath, reportDir := filepath.Join(dir, "storm.json"), filepath.Join(dir, "report")
	out, err := runCLI(t, "storm", "--works", "3", "--pages", "2", "--phase", "1s", "--settle", "100ms",
		"--storm-conns", "4", "--storm-addrs", "1,2", "--reader-pause", "10ms", "--durability", "relaxed", "--json", jsonPath, "--report", reportDir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"quiet ", "storm 4 conns from 1 addr", "storm 4 conns from 2 addr", "quiet again", "work page", "collection page", "search page",
		"answers/s", "onset (the storm's first", "Retry-After on every 429/503", "server RSS max", "reader p99 / quiet p99", "abusers refused with Retry-After", "memory: largest RSS", "storm sqlite: reader p99"} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Scenario string           `json:"scenario"`
		Backend  string           `json:"backend"`
		Steps    []map[string]any `json:"steps"`
		Params   struct {
			Phases []struct {
				Name    string  `json:"name"`
				Seconds float64 `json:"seconds"`
				Reader  []struct {
					Name     string             `json:"name"`
					Requests int                `json:"requests"`
					Latency  map[string]float64 `json:"latency_ms"`
					Errors   *int64             `json:"errors"`
					Slowest  *struct {
						MS      float64 `json:"ms"`
						AdmitMS float64 `json:"admit_ms"`
						AppMS   float64 `json:"app_ms"`
						Timed   bool    `json:"timed"`
					} `json:"slowest"`
				} `json:"reader"`
				ReaderErrors *int64 `json:"reader_errors"`
				Storm        *struct {
					Conns        int              `json:"conns"`
					Addrs        int              `json:"addrs"`
					Requests     int64            `json:"requests"`
					OK           *int64           `json:"ok_200"`
					TooMany      *int64           `json:"too_many_429"`
					Unavailable  *int64           `json:"unavailable_503"`
					NoRetryAfter *int64           `json:"refused_without_retry_after"`
					Other        *int64           `json:"other"`
					Timeouts     *int64           `json:"timeouts"`
					ConnErrors   *int64           `json:"conn_errors"`
					RatePerS     float64          `json:"rate_per_s"`
					ByKind       map[string]int64 `json:"by_kind"`
				} `json:"storm"`
				Onset *struct {
					Seconds  float64 `json:"seconds"`
					Requests int     `json:"requests"`
					Errors   int64   `json:"errors"`
				} `json:"onset"`
				RSSMax int64 `json:"rss_max_bytes"`
			} `json:"phases"`
			Goals []struct {
				Name, Goal, Value string
				Met               *bool
			} `json:"goal_lines"`
		} `json:"params"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	ph := rep.Params.Phases
	if rep.Scenario != "storm" || rep.Backend != "sqlite" || len(ph) != 4 || len(rep.Steps) != 4 {
		t.Fatalf("report: %s", b)
	}
	if ph[0].Name != "quiet" || ph[3].Name != "quiet again" || ph[0].Storm != nil || ph[3].Storm != nil {
		t.Errorf("phases %s, %s, %s, %s", ph[0].Name, ph[1].Name, ph[2].Name, ph[3].Name)
	}
	for i, p := range ph {
		if p.Seconds <= 0 || p.RSSMax <= 0 || p.ReaderErrors == nil || len(p.Reader) != 3 {
			t.Errorf("phase %d %q: %+v", i, p.Name, p)
		}
		for _, pg := range p.Reader {
			if pg.Requests <= 0 || pg.Errors == nil {
				t.Errorf("phase %q, %s: %+v", p.Name, pg.Name, pg)
			}
			// the slowest answer, split by the server's Server-Timing: the
			// server's part lies within what the reader measured
			if sl := pg.Slowest; *pg.Errors == 0 && (sl == nil || !sl.Timed || sl.AppMS <= 0 || sl.AdmitMS < 0 || sl.AdmitMS+sl.AppMS > sl.MS+0.01 || sl.MS != pg.Latency["max"]) {
				t.Errorf("phase %q, %s: slowest %+v (max %v)", p.Name, pg.Name, sl, pg.Latency["max"])
			}
			for _, k := range []string{"p50", "p95", "p99", "max"} {
				if _, ok := pg.Latency[k]; !ok {
					t.Errorf("phase %q, %s: no %s", p.Name, pg.Name, k)
				}
			}
		}
		if i == 0 || i == 3 {
			if *p.ReaderErrors != 0 || p.Onset != nil {
				t.Errorf("the reader alone got wrong answers (or an onset without a storm): %+v, %+v", p.Reader, p.Onset)
			}
			continue
		}
		s := p.Storm
		if s == nil {
			t.Fatalf("phase %q has no storm", p.Name)
		}
		// the storm's onset (--onset, 1 s by default), reported apart
		if o := p.Onset; o == nil || o.Seconds < 1 || o.Requests <= 0 {
			t.Errorf("phase %q: onset %+v", p.Name, o)
		}
		if s.Conns != 4 || s.Addrs != i || s.Requests <= 0 || s.RatePerS <= 0 || len(s.ByKind) != 4 || s.OK == nil || s.TooMany == nil || s.Unavailable == nil ||
			s.NoRetryAfter == nil || s.Other == nil || s.Timeouts == nil || s.ConnErrors == nil {
			t.Errorf("phase %q: storm %+v", p.Name, s)
		}
	}
	// per storm: ratio, p99, errors, refusals; and memory
	if len(rep.Params.Goals) != 2*4+1 {
		t.Errorf("%d goal lines: %+v", len(rep.Params.Goals), rep.Params.Goals)
	}
	for _, g := range rep.Params.Goals {
		if g.Name == "" || g.Goal == "" || g.Value == "" || g.Met == nil {
			t.Errorf("goal %+v", g)
		}
	}
	if _, err := os.Stat(filepath.Join(reportDir, "index.html")); err != nil {
		t.Fatal(err)
	}
}
