package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBenchIIIFCommand: bench iiif at a tiny size ingests its book until
// the manifest lists every page with its image service, serves every tile
// it asks for (no errors), and writes a JSON report with the fields every
// report has and the scenario's own, and an HTML report.
func TestBenchIIIFCommand(t *testing.T) {
	if _, err := exec.LookPath("vips"); err != nil {
		t.Skip("vips is not installed (apt-get install libvips-tools)")
	}
	t.Setenv("SHELFMARK_DATABASE_URL", "")
	dir := t.TempDir()
	jsonPath, reportDir := filepath.Join(dir, "iiif.json"), filepath.Join(dir, "report")
	out, err := runCLI(t, "iiif", "--pages", "6", "--books", "2", "--viewers", "2", "--requests", "60", "--regions", "40", "--manifest-requests", "5",
		"--vips-pages", "2", "--derive", "1", "--durability", "relaxed", "--json", jsonPath, "--report", reportDir)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"Plum's job, derive concurrency 1: 6 pages ready in ", "disk per page: original ", "tiles over HTTP: 60 in ",
		"manifest (6 pages, ", "anonymous (cached), uncompressed:", "iiif sqlite: 6 pages: ready in "} {
		if !strings.Contains(out, want) {
			t.Fatalf("no %q in the output:\n%s", want, out)
		}
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
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
	var rep struct {
		Scenario     string  `json:"scenario"`
		Items        int     `json:"items"`
		Errors       int     `json:"errors"`
		RawLimitPerS float64 `json:"raw_limit_per_s"`
		Steps        []struct {
			Items  int `json:"items"`
			Errors int `json:"errors"`
		} `json:"steps"`
		Params struct {
			Runs []struct {
				DeriveConcurrency int     `json:"derive_concurrency"`
				Pages             int     `json:"pages"`
				Seconds           float64 `json:"seconds"`
				VipsAlonePerS     float64 `json:"vips_alone_per_s"`
				Derived           int     `json:"derived"`
			} `json:"runs"`
			Disk struct {
				Original, Thumbnail, Access, Tiles float64
				TilesPerPage                       float64 `json:"tiles_per_page"`
				OCRPages                           int     `json:"ocr_pages"`
			} `json:"disk_per_page_bytes"`
			Tiles struct {
				Items  int `json:"items"`
				Errors int `json:"errors"`
			} `json:"tiles_http"`
			Raw struct {
				Items int `json:"items"`
			} `json:"tiles_raw"`
			FirstError string `json:"tiles_first_error"`
			Manifests  []struct {
				Name     string
				Requests int
				Bytes    int
				Errors   int
				Server   struct{ P50 float64 }       `json:"server_ms"`
				Floor    *struct{ P50, P99 float64 } `json:"floor_ms"`
				Target   float64                     `json:"floor_target_ms"`
			} `json:"manifests"`
		} `json:"params"`
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	p := rep.Params
	// steps: the run of Plum's job, the tiles, the manifest uncached and
	// cached, the composed regions
	if rep.Scenario != "iiif" || rep.Items != 60 || rep.Errors != 0 || len(rep.Steps) != 5 || rep.RawLimitPerS <= 0 ||
		rep.Steps[4].Items != 40 || rep.Steps[4].Errors != 0 {
		t.Fatalf("report: %s", b)
	}
	if p.Tiles.Items != 60 || p.Tiles.Errors != 0 || p.Raw.Items != 60 || p.FirstError != "" {
		t.Fatalf("tiles: %+v %+v %q", p.Tiles, p.Raw, p.FirstError)
	}
	if len(p.Runs) != 1 || p.Runs[0].DeriveConcurrency != 1 || p.Runs[0].Pages != 6 || p.Runs[0].Seconds <= 0 || p.Runs[0].VipsAlonePerS <= 0 ||
		p.Runs[0].Derived != 6 {
		t.Fatalf("runs: %+v", p.Runs)
	}
	if p.Disk.Original <= 0 || p.Disk.Thumbnail <= 0 || p.Disk.Access <= 0 || p.Disk.Tiles <= 0 || p.Disk.TilesPerPage < 1 {
		t.Fatalf("disk: %+v", p.Disk)
	}
	// four kinds, and a fifth, a copy of the book with OCR on every page,
	// when OCR read some page while the pyramids were made (OCR runs at
	// idle priority, so whether it does depends on the machine's load)
	kinds := 4
	if p.Disk.OCRPages > 0 {
		kinds++
	}
	if len(p.Manifests) != kinds || (kinds == 5 && p.Manifests[4].Name != "signed in, OCR on every page, gzip") {
		t.Fatalf("manifests (OCR read %d pages): %+v", p.Disk.OCRPages, p.Manifests)
	}
	for _, m := range p.Manifests {
		if m.Requests != 5 || m.Bytes <= 0 || m.Errors != 0 || m.Server.P50 <= 0 {
			t.Errorf("manifest %+v", m)
		}
		// the floor beside the manifests built at every request (signed
		// in), none beside the cached ones
		signedIn := strings.HasPrefix(m.Name, "signed in")
		if floored := m.Floor != nil && m.Floor.P50 > 0 && m.Floor.P99 >= m.Floor.P50 && m.Target > 0; floored != signedIn {
			t.Errorf("manifest %q: floor %+v, target %v", m.Name, m.Floor, m.Target)
		}
	}
	if !strings.Contains(out, "  the floor, fixed work of ") {
		t.Errorf("no floor in the output:\n%s", out)
	}
	for i, s := range rep.Steps {
		if s.Items <= 0 || s.Errors != 0 {
			t.Errorf("step %d: %+v", i, s)
		}
	}
	html, err := os.ReadFile(filepath.Join(reportDir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "pages derived (tiles ready)") || !strings.Contains(string(html), "<svg") {
		t.Fatal("the HTML report has no chart of the pages derived")
	}
}
