package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark/internal/testkit"
)

// TestBenchSoakStorm: a short soak with a crawler storm in its middle runs
// end to end against a serve it starts, marks the samples the storm
// touched, prints the readers and writers during the storm and outside
// it and where the drift's tenths lie, and writes the storm's part to the
// JSON report.
func TestBenchSoakStorm(t *testing.T) {
	t.Setenv("SHELFMARK_DATABASE_URL", "")
	t.Setenv("SHELFMARK_BINARY", filepath.Join(testkit.Build(t, "shelfmark"), "shelfmark"))
	jsonPath := filepath.Join(t.TempDir(), "soak.json")
	out, err := runCLI(t, "soak", "--minutes", "0.15", "--storm", "3s", "--sample", "1s", "--storm-conns", "4", "--storm-addrs", "2",
		"--writers", "2", "--triples", "10", "--durability", "relaxed", "--pause", "ocr,derive", "--json", jsonPath)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"STORM", "crawler storm ", "4 connections from 2 addresses", "outside the storm: readers", "during the storm : readers",
		"the storm (3s–6s) did not touch", "soak sqlite: ", "RSS median "} {
		if !strings.Contains(out, want) {
			t.Errorf("the output lacks %q:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Params struct {
			Storm struct {
				From   float64 `json:"from_s"`
				To     float64 `json:"to_s"`
				Counts struct {
					Requests int64 `json:"requests"`
				} `json:"counts"`
				During struct {
					Reads int `json:"reads"`
				} `json:"during"`
			} `json:"storm"`
			StormSeconds float64 `json:"storm_seconds"`
			Samples      []struct {
				Storm bool `json:"storm"`
			} `json:"samples"`
		} `json:"params"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	p := rep.Params
	stormy := 0
	for _, s := range p.Samples {
		if s.Storm {
			stormy++
		}
	}
	if p.StormSeconds != 3 || p.Storm.To <= p.Storm.From || p.Storm.Counts.Requests <= 0 || p.Storm.During.Reads <= 0 || stormy == 0 || stormy == len(p.Samples) {
		t.Errorf("storm in the report: %s", b)
	}
}

// TestSoakStormDefault: 10 minutes of storm in a run of 30 minutes or
// more, a third of a shorter run.
func TestSoakStormDefault(t *testing.T) {
	for run, want := range map[string]string{"60m": "10m0s", "30m": "10m0s", "29m": "9m40s", "3m": "1m0s", "10s": "3s"} {
		d, err := time.ParseDuration(run)
		if err != nil {
			t.Fatal(err)
		}
		if got := soakStormDefault(d).String(); got != want {
			t.Errorf("a run of %s: a storm of %s, want %s", run, got, want)
		}
	}
}
