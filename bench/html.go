package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Series is an extra chart for WriteHTML: a series the Report does not
// hold, such as throughput per time bucket or RSS over time.
type Series struct {
	// Name titles the chart and labels the line.
	Name string
	// Unit is the unit of Y ("items/s", "bytes", …); "bytes" is drawn in
	// MiB.
	Unit string
	// XLabel labels the X axis; "seconds" when empty.
	XLabel string
	// X and Y are the points; when X is empty, Y is drawn against its
	// index.
	X, Y []float64
}

// WriteHTML writes dir/index.html: a page readable offline (no external
// resources) with the report's summary, a table of its steps and SVG
// charts of throughput and latency percentiles per step, one chart for
// each extra series (memory over time, throughput over time, …), and, when
// no extra series is in bytes but the steps carry peak RSS, peak RSS per
// step. dir is created if needed.
func (r *Report) WriteHTML(dir string, extra ...Series) error {
	var charts []template.HTML
	for _, c := range r.configurationCharts() {
		charts = append(charts, c.svg())
	}
	charts = append(charts, r.throughputChart().svg())
	if c, ok := r.latencyChart(); ok {
		charts = append(charts, c.svg())
	}
	hasBytes := false
	for _, s := range extra {
		hasBytes = hasBytes || s.Unit == "bytes"
		charts = append(charts, seriesChart(s).svg())
	}
	if !hasBytes {
		if s, ok := r.stepRSS(); ok {
			charts = append(charts, seriesChart(s).svg())
		}
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	var params []string
	for _, k := range slices.Sorted(maps.Keys(r.Params)) {
		params = append(params, fmt.Sprintf("%s=%v", k, r.Params[k]))
	}
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, map[string]any{
		"R": r, "Charts": charts, "JSON": string(js), "Params": strings.Join(params, " "),
	}); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "index.html"), b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	return nil
}

// stepX returns the X of each step: the client counts when they rise
// step by step, otherwise the step number (from 1).
func (r *Report) stepX() (xs []float64, label string, logX bool) {
	rising := len(r.Steps) > 0
	for k, s := range r.Steps {
		rising = rising && s.Clients > 0 && (k == 0 || s.Clients > r.Steps[k-1].Clients)
	}
	for k, s := range r.Steps {
		if rising {
			xs = append(xs, float64(s.Clients))
		} else {
			xs = append(xs, float64(k+1))
		}
	}
	if rising {
		return xs, "clients", xs[len(xs)-1]/xs[0] >= 8
	}
	return xs, "step", false
}

func (r *Report) throughputChart() chart {
	xs, label, logX := r.stepX()
	c := chart{title: "Throughput per step", xlabel: label, ylabel: "rate (items/s)", logX: logX, xticks: xs}
	rate := line{name: "rate"}
	limit := line{name: "raw limit", dashed: true}
	for k, s := range r.Steps {
		rate.xs, rate.ys = append(rate.xs, xs[k]), append(rate.ys, s.RatePerS)
		if s.RawLimit > 0 {
			limit.xs, limit.ys = append(limit.xs, xs[k]), append(limit.ys, s.RawLimit)
		}
	}
	c.lines = append(c.lines, rate)
	if len(limit.xs) > 0 {
		c.lines = append(c.lines, limit)
	}
	return c
}

func (r *Report) latencyChart() (chart, bool) {
	xs, label, logX := r.stepX()
	c := chart{title: "Latency percentiles per step", xlabel: label, ylabel: "latency (ms)", logX: logX, xticks: xs}
	names := []string{"p50", "p95", "p99", "max"}
	lines := make([]line, len(names))
	for k := range lines {
		lines[k].name = names[k]
	}
	lo, hi := math.Inf(1), 0.0
	for k, s := range r.Steps {
		if s.LatencyMS == nil {
			continue
		}
		for j, v := range []float64{s.LatencyMS.P50, s.LatencyMS.P95, s.LatencyMS.P99, s.LatencyMS.Max} {
			lines[j].xs, lines[j].ys = append(lines[j].xs, xs[k]), append(lines[j].ys, v)
			if v > 0 {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	if len(lines[0].xs) == 0 {
		return c, false
	}
	c.lines = lines
	c.logY = hi/lo > 20
	return c, true
}

func (r *Report) stepRSS() (Series, bool) {
	xs, label, _ := r.stepX()
	s := Series{Name: "Peak RSS per step", Unit: "bytes", XLabel: label}
	for k, st := range r.Steps {
		if st.PeakRSS > 0 {
			s.X, s.Y = append(s.X, xs[k]), append(s.Y, float64(st.PeakRSS))
		}
	}
	return s, len(s.Y) > 0
}

func seriesChart(s Series) chart {
	n := len(s.Y)
	if len(s.X) > 0 {
		n = min(n, len(s.X))
	}
	l := line{name: s.Name}
	unit, scale := s.Unit, 1.0
	if unit == "bytes" {
		unit, scale = "MiB", 1.0/(1<<20)
	}
	for k := range n {
		x := float64(k)
		if len(s.X) > 0 {
			x = s.X[k]
		}
		l.xs, l.ys = append(l.xs, x), append(l.ys, s.Y[k]*scale)
	}
	xl := s.XLabel
	if xl == "" {
		xl = "seconds"
	}
	// the title names the series; the axis says its unit (the name
	// again, rotated along the axis, would run past the chart's edge)
	yl := s.Name
	if unit != "" {
		yl = unit
	}
	return chart{title: s.Name, xlabel: xl, ylabel: yl, lines: []line{l}}
}

// line is one polyline of a chart.
type line struct {
	name   string
	xs, ys []float64
	dashed bool
}

// chart is a line chart drawn as inline SVG.
type chart struct {
	title, xlabel, ylabel string
	logX, logY            bool
	xticks                []float64 // X ticks to use instead of computed ones
	lines                 []line
}

// Chart geometry in SVG user units.
const (
	chartW, chartH                = 720, 340
	padL, padR, padTop, padBottom = 72, 20, 52, 48
)

var lineColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"}

// axis maps data values to pixels, linearly or logarithmically.
type axis struct {
	log        bool
	lo, hi     float64 // domain (in log10 when log)
	from, to   float64 // pixel range
	ticks      []float64
	tickLabels []string
}

func (a axis) pos(v float64) float64 {
	if a.log {
		v = math.Log10(v)
	}
	return a.from + (v-a.lo)/(a.hi-a.lo)*(a.to-a.from)
}

func (a axis) ok(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && (!a.log || v > 0) }

// newAxis fits an axis to vs; with zero it includes 0 on linear axes.
func newAxis(vs []float64, logScale, zero bool, from, to float64, fixed []float64) axis {
	a := axis{log: logScale, from: from, to: to}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vs {
		if a.ok(v) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		lo, hi = 1, 10
	}
	if logScale {
		a.lo, a.hi = math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
		if a.hi == a.lo {
			a.hi++
		}
		mults := []float64{1, 2, 5}
		if a.hi-a.lo > 3 {
			mults = []float64{1}
		}
		for e := a.lo; e <= a.hi; e++ {
			for _, m := range mults {
				if v := m * math.Pow(10, e); math.Log10(v) <= a.hi+1e-9 {
					a.ticks = append(a.ticks, v)
				}
			}
		}
	} else {
		if zero {
			lo, hi = min(lo, 0), max(hi, 0)
		}
		if hi == lo {
			lo, hi = lo-1, hi+1
		}
		step := niceStep((hi - lo) / 5)
		a.lo, a.hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
		for v := a.lo; v <= a.hi+step/2; v += step {
			a.ticks = append(a.ticks, math.Round(v/step)*step)
		}
	}
	if fixed != nil && len(fixed) <= 16 {
		if logScale {
			a.lo, a.hi = math.Log10(lo), math.Log10(hi)
		} else {
			a.lo, a.hi = lo, hi
		}
		if a.hi == a.lo {
			a.lo, a.hi = a.lo-1, a.hi+1
		}
		pad := (a.hi - a.lo) * 0.04
		a.lo, a.hi = a.lo-pad, a.hi+pad
		a.ticks = fixed
	}
	for _, t := range a.ticks {
		a.tickLabels = append(a.tickLabels, fmtNum(t))
	}
	return a
}

// niceStep rounds a tick step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// fmtNum formats a number compactly for axes and tables.
func fmtNum(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return strconv.FormatFloat(v/1e9, 'g', 3, 64) + "G"
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 3, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'g', 3, 64) + "k"
	case a >= 1:
		prec := 2
		if a >= 100 {
			prec = 0
		} else if a >= 10 {
			prec = 1
		}
		s := strconv.FormatFloat(v, 'f', prec, 64)
		if strings.Contains(s, ".") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
		return s
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

func (c chart) svg() template.HTML {
	var xs, ys []float64
	for _, l := range c.lines {
		xs, ys = append(xs, l.xs...), append(ys, l.ys...)
	}
	// The legend runs in rows above the plot; a row that would pass the
	// plot's right edge wraps, and each further row moves the plot down.
	type legendEntry struct{ x, y float64 }
	legend := make([]legendEntry, len(c.lines))
	lx, ly := float64(padL), 36.0
	for k, l := range c.lines {
		w := 34 + 7*float64(len(l.name))
		if lx > padL && lx+w-12 > chartW-padR {
			lx, ly = padL, ly+16
		}
		legend[k] = legendEntry{lx, ly}
		lx += w
	}
	extra := int(ly - 36)
	top, chartH := padTop+extra, chartH+extra
	ax := newAxis(xs, c.logX, false, padL, chartW-padR, c.xticks)
	ay := newAxis(ys, c.logY, true, float64(chartH-padBottom), float64(top), nil)
	esc := template.HTMLEscapeString
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`,
		chartW, chartH, chartW, chartH, esc(c.title))
	fmt.Fprintf(&b, `<title>%s</title>`, esc(c.title))
	fmt.Fprintf(&b, `<rect x="0" y="0" width="%d" height="%d" fill="#fff"/>`, chartW, chartH)
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="15" font-weight="bold">%s</text>`, padL, esc(c.title))
	// Grid and ticks.
	for k, t := range ay.ticks {
		y := ay.pos(t)
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#e3e3e3"/>`, padL, chartW-padR, y, y)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="11" text-anchor="end" dominant-baseline="middle">%s</text>`, padL-6, y, esc(ay.tickLabels[k]))
	}
	for k, t := range ax.ticks {
		if !ax.ok(t) {
			continue
		}
		x := ax.pos(t)
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#e3e3e3"/>`, x, x, top, chartH-padBottom)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="11" text-anchor="middle">%s</text>`, x, chartH-padBottom+16, esc(ax.tickLabels[k]))
	}
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>`, padL, top, chartW-padL-padR, chartH-top-padBottom)
	// Axis labels.
	xl, yl := c.xlabel, c.ylabel
	if c.logX {
		xl += " (log scale)"
	}
	if c.logY {
		yl += " (log scale)"
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="12" text-anchor="middle">%s</text>`, (padL+chartW-padR)/2, chartH-10, esc(xl))
	fmt.Fprintf(&b, `<text x="16" y="%d" font-size="12" text-anchor="middle" transform="rotate(-90 16 %d)">%s</text>`, (top+chartH-padBottom)/2, (top+chartH-padBottom)/2, esc(yl))
	// Lines, point markers with tooltips, legend.
	for k, l := range c.lines {
		col := lineColors[k%len(lineColors)]
		dash := ""
		if l.dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		var pts []string
		var marks strings.Builder
		for j := range l.xs {
			if !ax.ok(l.xs[j]) || !ay.ok(l.ys[j]) {
				continue
			}
			x, y := ax.pos(l.xs[j]), ay.pos(l.ys[j])
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
			if len(l.xs) <= 64 {
				fmt.Fprintf(&marks, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"><title>%s, %s %s: %s</title></circle>`,
					x, y, col, esc(l.name), esc(c.xlabel), esc(fmtNum(l.xs[j])), esc(fmtNum(l.ys[j])))
			}
		}
		fmt.Fprintf(&b, `<polyline class="series" data-name="%s" fill="none" stroke="%s" stroke-width="2"%s points="%s"/>`,
			esc(l.name), col, dash, strings.Join(pts, " "))
		b.WriteString(marks.String())
		e := legend[k]
		fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%.0f" y2="%.0f" stroke="%s" stroke-width="2"%s/>`, e.x, e.x+18, e.y, e.y, col, dash)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" font-size="12">%s</text>`, e.x+22, e.y+4, esc(l.name))
	}
	if len(xs) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="13" text-anchor="middle" fill="#888">no data</text>`, chartW/2, chartH/2)
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // every text above is escaped
}

func fmtBytes(n int64) string {
	switch {
	case n <= 0:
		return "–"
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	default:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
}

func fmtLatency(l *Latency) string {
	if l == nil || *l == (Latency{}) {
		return "–"
	}
	return fmt.Sprintf("%s / %s / %s / %s", fmtNum(l.P50), fmtNum(l.P95), fmtNum(l.P99), fmtNum(l.Max))
}

func fmtCodes(m map[string]int64) string {
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, fmt.Sprintf("%s×%d", k, m[k]))
	}
	return strings.Join(out, " ")
}

var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"num":   fmtNum,
	"bytes": fmtBytes,
	"lat":   fmtLatency,
	"codes": fmtCodes,
	"pct":   func(f float64) string { return fmt.Sprintf("%.1f%%", 100*f) },
	"inc":   func(k int) int { return k + 1 },
	"opt": func(f float64) string {
		if f == 0 {
			return "–"
		}
		return fmtNum(f)
	},
	"date": func(r *Report) string {
		if r.Started.IsZero() {
			return "–"
		}
		return r.Started.Format("2006-01-02 15:04:05 MST")
	},
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>shelfmark-bench {{.R.Scenario}} ({{.R.Backend}})</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1200px; }
h1 { font-size: 20px; margin: 0 0 12px; }
table { border-collapse: collapse; margin: 8px 0 20px; }
th, td { padding: 3px 10px; text-align: right; border-bottom: 1px solid #ddd; }
th { background: #f4f4f4; }
table.summary th { text-align: left; }
table.summary td { text-align: left; }
.charts svg { margin: 0 16px 16px 0; border: 1px solid #ddd; }
.bad { color: #b00; font-weight: bold; }
pre { background: #f7f7f7; padding: 8px; overflow: auto; }
</style>
</head>
<body>
<h1>shelfmark-bench {{.R.Scenario}}</h1>
<table class="summary">
<tr><th>scenario</th><td>{{.R.Scenario}}</td></tr>
<tr><th>backend</th><td>{{.R.Backend}}</td></tr>
{{- if .R.Target}}<tr><th>target</th><td>{{.R.Target}}</td></tr>{{end}}
<tr><th>started</th><td>{{date .R}}</td></tr>
<tr><th>items</th><td>{{.R.Items}}</td></tr>
<tr><th>seconds</th><td>{{num .R.Seconds}}</td></tr>
<tr><th>rate</th><td>{{num .R.RatePerS}} /s</td></tr>
<tr><th>flatness</th><td>{{num .R.Flatness}} (rate in the last tenth over the first)</td></tr>
<tr><th>raw limit</th><td>{{opt .R.RawLimitPerS}} /s{{if .R.RawLimitWhat}} ({{.R.RawLimitWhat}}){{end}}</td></tr>
<tr><th>fraction of raw limit</th><td>{{pct .R.FractionLimit}}</td></tr>
<tr><th>latency p50 / p95 / p99 / max</th><td>{{lat .R.LatencyMS}} ms</td></tr>
<tr><th>peak RSS</th><td>{{bytes .R.PeakRSSBytes}}</td></tr>
<tr><th>errors</th><td{{if .R.Errors}} class="bad"{{end}}>{{.R.Errors}}</td></tr>
{{- if .Params}}<tr><th>parameters</th><td>{{.Params}}</td></tr>{{end}}
</table>
<div class="charts">
{{range .Charts}}{{.}}
{{end}}</div>
<h2>Steps</h2>
<table class="steps">
<tr><th>#</th><th>clients</th><th>items</th><th>seconds</th><th>rate /s</th><th>latency p50 / p95 / p99 / max (ms)</th><th>errors</th><th>flatness</th><th>peak RSS</th><th>raw limit /s</th><th>fraction</th><th>error codes</th></tr>
{{range $k, $s := .R.Steps}}<tr><td>{{inc $k}}</td><td>{{if $s.Clients}}{{$s.Clients}}{{else}}–{{end}}</td><td>{{$s.Items}}</td><td>{{num $s.Seconds}}</td><td>{{num $s.RatePerS}}</td><td>{{lat $s.LatencyMS}}</td><td{{if $s.Errors}} class="bad"{{end}}>{{$s.Errors}}</td><td>{{opt $s.Flatness}}</td><td>{{bytes $s.PeakRSS}}</td><td>{{opt $s.RawLimit}}</td><td>{{if $s.Fraction}}{{pct $s.Fraction}}{{else}}–{{end}}</td><td>{{codes $s.ErrorCodes}}</td></tr>
{{end}}</table>
<details><summary>JSON report</summary><pre>{{.JSON}}</pre></details>
</body>
</html>
`))
