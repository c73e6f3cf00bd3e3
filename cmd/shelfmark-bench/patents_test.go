package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/shelfmark/shelfmark/internal/testkit"
)

// TestBenchPatentsInProcess: bench patents on SQLite in this process
// reports its rate against the raw limit of the same rows measured on a
// fresh store (the report's raw limit) and at the run's end, and against
// the works' own rows alone, and draws the rate against both raw limits
// of the same rows.
func TestBenchPatentsInProcess(t *testing.T) {
	bin := filepath.Join(testkit.Build(t, "shelfmark", "shelfmark-bench"), "shelfmark-bench")
	chart := filepath.Join(t.TempDir(), "patents.svg")
	rep := runBench(t, bin, "patents", "--objects", "300", "--durability", "relaxed", "--chart", chart)
	if rep.Items != 300 || rep.Errors != 0 || rep.RawLimitPerS <= 0 || rep.FractionLimit <= 0 {
		t.Fatalf("items %d, errors %d, raw limit %v, fraction %v", rep.Items, rep.Errors, rep.RawLimitPerS, rep.FractionLimit)
	}
	for _, k := range []string{"raw_work_rows_per_s", "fraction_of_work_rows_limit", "raw_limit_at_end_per_s"} {
		if v, ok := rep.Params[k].(float64); !ok || v <= 0 {
			t.Errorf("params %s = %v", k, rep.Params[k])
		}
	}
	// a run this short may store its last work before its last tenth of
	// wall time (the pipeline's shutdown is in it), so that tenth's rate
	// may be 0 on a busy machine
	if v, ok := rep.Params["last_tenth_fraction_of_limit_at_end"].(float64); !ok || v < 0 {
		t.Errorf("params last_tenth_fraction_of_limit_at_end = %v", rep.Params["last_tenth_fraction_of_limit_at_end"])
	}
	b, err := os.ReadFile(chart)
	if err != nil || !bytes.Contains(b, []byte("<polyline")) || !bytes.Contains(b, []byte("raw limit of the same rows, fresh store")) {
		t.Errorf("the chart: %v, no line or no raw limit drawn", err)
	}
}
