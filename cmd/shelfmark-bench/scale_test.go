package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchScaleCommand: bench scale at a tiny size on SQLite prints a
// block per checkpoint and the summary, and leaves the JSON report (with
// every checkpoint), the HTML report and the SVG charts.
func TestBenchScaleCommand(t *testing.T) {
	t.Setenv("SHELFMARK_DATABASE_URL", "")
	dir := t.TempDir()
	jsonPath, reportDir := filepath.Join(dir, "scale.json"), filepath.Join(dir, "report")
	out, err := runCLI(t, "scale", "--objects", "300", "--checkpoint", "150", "--samples", "3", "--file-bytes", "shared",
		"--durability", "relaxed", "--data", filepath.Join(dir, "data"), "--json", jsonPath, "--report", reportDir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.Count(out, "checkpoint ") != 2 || !strings.Contains(out, "checkpoint 300 works: ") || !strings.Contains(out, "scale sqlite: 300 works in ") {
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
		RawLimit float64          `json:"raw_limit_per_s"`
		Steps    []map[string]any `json:"steps"`
		Params   struct {
			FileBytes   string `json:"file_bytes"`
			Checkpoints []struct {
				Works   int              `json:"works"`
				Queries []map[string]any `json:"queries"`
			} `json:"checkpoints"`
		} `json:"params"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Scenario != "scale" || rep.Items != 300 || rep.Errors != 0 || rep.RawLimit <= 0 || len(rep.Steps) != 2 ||
		rep.Params.FileBytes != "shared" || len(rep.Params.Checkpoints) != 2 || rep.Params.Checkpoints[1].Works != 300 || len(rep.Params.Checkpoints[1].Queries) != 6 {
		t.Fatalf("report: %s", b)
	}
	for _, f := range []string{"index.html", "scale-rate.svg", "scale-cpu.svg", "scale-bytes.svg", "scale-latency.svg", "scale-latency-p50.svg"} {
		if _, err := os.Stat(filepath.Join(reportDir, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := runCLI(t, "scale", "--file-bytes", "some", "--data", filepath.Join(dir, "bad")); err == nil || !strings.Contains(err.Error(), "--file-bytes must be unique or shared") {
		t.Fatalf("--file-bytes some: %v", err)
	}
}
