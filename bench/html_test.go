package bench

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func htmlTestReport() *Report {
	r := &Report{
		Scenario: "rest", Backend: "sqlite", Target: "http://localhost:8080/api/v1/works",
		Items: 70000, Seconds: 70, RatePerS: 1000, Flatness: 0.97,
		RawLimitPerS: 5000, RawLimitWhat: "plain inserts <of the same rows>", FractionLimit: 0.2,
		LatencyMS: Latency{P50: 1.2, P95: 4, P99: 9.5, Max: 180}, PeakRSSBytes: 300 << 20,
		Errors: 3, Params: map[string]any{"triples": 54, "note": `<script>alert("x")</script>`},
		Started: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	for k, c := range []int{1, 2, 4, 8, 16, 32, 64} {
		r.Steps = append(r.Steps, Step{
			Clients: c, Items: 10000, Seconds: 10, RatePerS: float64(500 + 300*k),
			LatencyMS: &Latency{P50: 0.5 * float64(c), P95: float64(c), P99: 2 * float64(c), Max: 3*float64(c) + 20},
			PeakRSS:   int64(100+10*k) << 20, RawLimit: 5000, Fraction: float64(500+300*k) / 5000,
		})
	}
	r.Steps[3].Errors = 3
	r.Steps[3].ErrorCodes = map[string]int64{"503": 2, "timeout": 1}
	return r
}

// svgInfo is what the test reads from one <svg>: its title and the point
// count of each polyline.
type svgInfo struct {
	title  string
	points []int
}

// parseReport reads index.html with encoding/xml in its HTML mode and
// returns the charts, failing on external references.
func parseReport(t *testing.T, path string) []svgInfo {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d := xml.NewDecoder(f)
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	var svgs []svgInfo
	inSVG, inTitle := false, false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			switch tok.Name.Local {
			case "script", "link", "img", "iframe", "object", "embed", "image", "use", "foreignObject":
				t.Errorf("report has a <%s> element", tok.Name.Local)
			case "svg":
				inSVG = true
				svgs = append(svgs, svgInfo{})
			case "title":
				inTitle = inSVG && svgs[len(svgs)-1].title == ""
			case "polyline":
				if inSVG {
					for _, a := range tok.Attr {
						if a.Name.Local == "points" {
							svgs[len(svgs)-1].points = append(svgs[len(svgs)-1].points, len(strings.Fields(a.Value)))
						}
					}
				}
			}
			for _, a := range tok.Attr {
				v := strings.ToLower(a.Value)
				if strings.Contains(v, "http://") || strings.Contains(v, "https://") || strings.Contains(v, "url(") || strings.HasPrefix(v, "//") {
					t.Errorf("<%s %s=%q> references an external resource", tok.Name.Local, a.Name.Local, a.Value)
				}
			}
		case xml.EndElement:
			if tok.Name.Local == "svg" {
				inSVG = false
			}
			if tok.Name.Local == "title" {
				inTitle = false
			}
		case xml.CharData:
			if inTitle {
				svgs[len(svgs)-1].title += string(tok)
			}
		}
	}
	return svgs
}

func TestWriteHTML(t *testing.T) {
	r := htmlTestReport()
	var over Series
	over.Name, over.Unit = "Throughput over time", "items/s"
	for k := range 50 {
		over.X, over.Y = append(over.X, float64(k)*1.4), append(over.Y, 1000+float64(k%7)*10)
	}
	rss := Series{Name: "RSS", Unit: "bytes"}
	for k := range 7 {
		rss.X, rss.Y = append(rss.X, float64(10*k)), append(rss.Y, float64(int64(200+k)<<20))
	}
	dir := filepath.Join(t.TempDir(), "report")
	if err := r.WriteHTML(dir, rss, over); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "index.html")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(raw)

	svgs := parseReport(t, path)
	want := []struct {
		title  string
		points int
	}{
		{"Throughput per step", 7}, {"Latency percentiles per step", 7}, {"RSS", 7}, {"Throughput over time", 50},
	}
	if len(svgs) != len(want) {
		t.Fatalf("%d charts %+v, want %d", len(svgs), svgs, len(want))
	}
	for k, w := range want {
		s := svgs[k]
		if s.title != w.title {
			t.Errorf("chart %d titled %q, want %q", k, s.title, w.title)
		}
		found := false
		for _, n := range s.points {
			found = found || n == w.points
		}
		if !found {
			t.Errorf("chart %q: polylines with %v points, want one with %d", s.title, s.points, w.points)
		}
	}
	// Throughput has rate and raw limit; latency p50, p95, p99, max.
	if n := len(svgs[0].points); n != 2 {
		t.Errorf("throughput chart has %d lines, want 2", n)
	}
	if n := len(svgs[1].points); n != 4 {
		t.Errorf("latency chart has %d lines, want 4", n)
	}

	for _, s := range []string{
		"<td>rest</td>", "<td>sqlite</td>", "<td>70000</td>", "<td>1000 /s</td>", "0.97", "5000 /s",
		"20.0%", "300.0 MiB", `class="bad">3<`, "1.2 / 4 / 9.5 / 180 ms", "503×2 timeout×1",
		"plain inserts &lt;of the same rows&gt;", "&lt;script&gt;", "rate (items/s)", "latency (ms) (log scale)",
		"clients (log scale)", `)">MiB</text>`, "seconds", "2025-01-02 03:04:05 UTC",
	} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	if strings.Contains(page, "<script") {
		t.Error("unescaped <script> in page")
	}
	if strings.Count(page, "<tr><td>") != len(r.Steps) {
		t.Errorf("steps table has %d rows, want %d", strings.Count(page, "<tr><td>"), len(r.Steps))
	}

	t.Run("chromium", func(t *testing.T) {
		const bin = "/usr/bin/chromium"
		if _, err := os.Stat(bin); err != nil {
			if os.Getenv("SHELFMARK_REQUIRE_TOOLS") != "" {
				t.Fatalf("no %s (scripts/testdeps.sh installs Debian's chromium)", bin)
			}
			t.Skip("no " + bin)
		}
		png := filepath.Join(t.TempDir(), "page.png")
		cmd := exec.Command(bin, "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
			"--window-size=1280,2400", "--screenshot="+png, "file://"+path)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("chromium: %v\n%s", err, out)
		}
		fi, err := os.Stat(png)
		if err != nil || fi.Size() == 0 {
			t.Fatalf("no screenshot: %v", err)
		}
	})
}

func TestWriteHTMLEmptyAndSteady(t *testing.T) {
	// No steps at all: one empty throughput chart.
	dir := t.TempDir()
	if err := (&Report{Scenario: "oai", Backend: "postgres"}).WriteHTML(dir); err != nil {
		t.Fatal(err)
	}
	svgs := parseReport(t, filepath.Join(dir, "index.html"))
	if len(svgs) != 1 {
		t.Fatalf("%d charts for an empty report, want 1", len(svgs))
	}

	// Time buckets at one client count: X is the step number, linear
	// latency axis for a narrow range, peak RSS per step from the steps.
	r := &Report{Scenario: "soak", Backend: "sqlite"}
	for k := range 7 {
		r.Steps = append(r.Steps, Step{Clients: 8, Items: 100, Seconds: 1, RatePerS: 100,
			LatencyMS: &Latency{P50: 2, P95: 3, P99: 4, Max: 5}, PeakRSS: int64(k+1) << 20})
	}
	dir = t.TempDir()
	if err := r.WriteHTML(dir); err != nil {
		t.Fatal(err)
	}
	svgs = parseReport(t, filepath.Join(dir, "index.html"))
	if len(svgs) != 3 || svgs[2].title != "Peak RSS per step" {
		t.Fatalf("charts %+v, want throughput, latency and peak RSS", svgs)
	}
	for _, s := range svgs {
		if len(s.points) == 0 || s.points[0] != 7 {
			t.Errorf("chart %q: points %v, want 7", s.title, s.points)
		}
	}
	page, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	if strings.Contains(string(page), "log scale") {
		t.Error("log scale used for a narrow range / constant clients")
	}
	if !strings.Contains(string(page), ">step<") {
		t.Error("X axis not labelled step")
	}
}

func TestFmtNumAndAxis(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 0.5: "0.5", 1: "1", 2.5: "2.5", 12.34: "12.3", 950: "950", 9999: "9999",
		12000: "12k", 3.5e6: "3.5M", 2e9: "2G", 0.0123: "0.0123", -250: "-250",
	} {
		if got := fmtNum(v); got != want {
			t.Errorf("fmtNum(%v) = %q, want %q", v, got, want)
		}
	}
	a := newAxis([]float64{3, 97}, false, true, 0, 100, nil)
	if a.ticks[0] != 0 || a.ticks[len(a.ticks)-1] < 97 {
		t.Errorf("linear ticks %v do not cover 0..97", a.ticks)
	}
	if p := a.pos(a.ticks[0]); p != 0 {
		t.Errorf("first tick at %v, want 0", p)
	}
	l := newAxis([]float64{0.4, 180}, true, true, 0, 100, nil)
	if l.ticks[0] != 0.1 || l.ticks[len(l.ticks)-1] != 1000 {
		t.Errorf("log ticks %v, want 0.1..1000", l.ticks)
	}
	if got := fmt.Sprintf("%.0f", l.pos(10)); got != "50" {
		t.Errorf("log pos(10) = %s, want 50", got)
	}
}

// TestChartLegendWraps checks that a legend too long for one row wraps
// inside the chart (six long series names once ran past its right edge)
// and that the plot moves down, below the last legend row.
func TestChartLegendWraps(t *testing.T) {
	var c chart
	c.title = "six series"
	for k := range 6 {
		c.lines = append(c.lines, line{name: fmt.Sprintf("series number %d with a long name", k), xs: []float64{1, 2}, ys: []float64{1, 2}})
	}
	svg := string(c.svg())
	var doc struct {
		Height float64 `xml:"height,attr"`
		Texts  []struct {
			X    float64 `xml:"x,attr"`
			Y    float64 `xml:"y,attr"`
			Body string  `xml:",chardata"`
		} `xml:"text"`
		Rects []struct {
			Y      float64 `xml:"y,attr"`
			Stroke string  `xml:"stroke,attr"`
		} `xml:"rect"`
	}
	if err := xml.Unmarshal([]byte(svg), &doc); err != nil {
		t.Fatal(err)
	}
	lastRow := 0.0
	for _, tx := range doc.Texts {
		if !strings.HasPrefix(tx.Body, "series number") {
			continue
		}
		if right := tx.X + 7*float64(len(tx.Body)); right > chartW {
			t.Errorf("legend %q ends at x=%.0f, past the chart's width %d", tx.Body, right, chartW)
		}
		lastRow = max(lastRow, tx.Y)
	}
	if lastRow <= 40 {
		t.Fatalf("six long names fit one legend row (last row at y=%.0f)", lastRow)
	}
	for _, r := range doc.Rects {
		if r.Stroke == "#888" && r.Y <= lastRow {
			t.Errorf("the plot starts at y=%.0f, above the last legend row at y=%.0f", r.Y, lastRow)
		}
	}
	if doc.Height <= chartH {
		t.Errorf("height %.0f: the chart did not grow for its second legend row", doc.Height)
	}
}
