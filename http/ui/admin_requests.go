package ui

// This file holds the dashboard's account of admission (package
// admission): by class, the requests running and waiting now and those
// admitted and refused a second over the last minute, and a chart of both.

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark/http/admission"
)

// adminRequestRow is one class of requests on the dashboard.
type adminRequestRow struct {
	Class string
	// Running and Waiting are the requests of the class now (every
	// group); Budget the anonymous callers' budget.
	Running, Waiting, Budget int
	// Admitted and Refused are a second over the last minute, written
	// for the page's language ("" until known).
	Admitted, Refused string
}

// adminRequests is the admission part of the dashboard's status.
type adminRequests struct {
	// Off: the server has no admission to show.
	Off  bool
	Rows []adminRequestRow
	// Admitted and Refused are the chart's lines (points of SVG
	// polylines in a box of sparkW × sparkH, on one scale); Text says
	// what it shows.
	Admitted, Refused, Text string
	// Shared says the state of the budget the expensive classes share for
	// anonymous callers ("" when there is none).
	Shared string
}

// requestCounts turns the admission's state into counts that only grow,
// by class: "a.CLASS" admitted (at once or after waiting), "r.CLASS"
// refused, every group together.
func requestCounts(stats []admission.Stats) map[string]float64 {
	out := map[string]float64{}
	for _, st := range stats {
		out["a."+st.Class.String()] += float64(st.Admitted + st.Queued)
		for _, n := range st.Refused {
			out["r."+st.Class.String()] += float64(n)
		}
	}
	return out
}

// adminRequestStatus reads the admission's state and rates at now.
func (s adminPages) adminRequestStatus(p *uiPage, now time.Time) adminRequests {
	if s.opts.Admission == nil {
		return adminRequests{Off: true}
	}
	stats := s.opts.Admission()
	if len(stats) == 0 {
		return adminRequests{Off: true}
	}
	rates := s.dash.requests.observe(now, requestCounts(stats))
	out := adminRequests{}
	if s.opts.AdmissionShared != nil {
		if sh := s.opts.AdmissionShared(); sh.Limit > 0 {
			out.Shared = p.T("admin.requests.shared", sh.Limit, sh.Running, sh.Waiting)
		}
	}
	index := map[admission.Class]int{}
	for i, c := range admission.Classes() {
		out.Rows = append(out.Rows, adminRequestRow{Class: c.String()})
		index[c] = i
	}
	for _, st := range stats {
		i, ok := index[st.Class]
		if !ok {
			continue
		}
		row := &out.Rows[i]
		row.Running += st.Running
		row.Waiting += st.Waiting
		if st.Group == admission.Anonymous {
			row.Budget = st.Limit
		}
	}
	for i := range out.Rows {
		row := &out.Rows[i]
		if rates.Known {
			row.Admitted = formatRate(p.Lang, rates.PerQueue["a."+row.Class])
			row.Refused = formatRate(p.Lang, rates.PerQueue["r."+row.Class])
		}
	}
	admitted, refused := s.dash.requests.series("a."), s.dash.requests.series("r.")
	if !rates.Known || len(admitted) == 0 {
		out.Text = p.T("admin.requests.none")
		return out
	}
	top := 0.0
	for i := range admitted {
		top = max(top, admitted[i], refused[i])
	}
	out.Admitted, out.Refused = polyline(admitted, top), polyline(refused, top)
	n := len(admitted)
	out.Text = p.T("admin.requests.text", int(math.Round(rates.Span)), formatRate(p.Lang, admitted[n-1]), formatRate(p.Lang, refused[n-1]), formatRate(p.Lang, top))
	return out
}

// series is the rate between successive samples of the counts whose
// names begin with prefix, oldest first.
func (a *sampler) series(prefix string) []float64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	sum := func(d doneSample) float64 {
		t := 0.0
		for k, v := range d.done {
			if strings.HasPrefix(k, prefix) {
				t += v
			}
		}
		return t
	}
	var out []float64
	for i := 1; i < len(a.samples); i++ {
		dt := a.samples[i].at.Sub(a.samples[i-1].at).Seconds()
		if dt > 0 {
			out = append(out, max(0, sum(a.samples[i])-sum(a.samples[i-1]))/dt)
		}
	}
	return out
}

// polyline draws values as the points of a polyline across the chart's
// box, scaled to top.
func polyline(values []float64, top float64) string {
	var b strings.Builder
	n := len(values)
	for i, v := range values {
		x := 0.0
		if n > 1 {
			x = float64(i) * sparkW / float64(n-1)
		}
		y := float64(sparkH - 2)
		if top > 0 {
			y = 2 + (1-v/top)*(sparkH-4)
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%.1f,%.1f", x, y)
	}
	if n == 1 {
		fmt.Fprintf(&b, " %d,%s", sparkW, strings.SplitN(b.String(), ",", 2)[1])
	}
	return b.String()
}

// requestEvent adds the admission's state to a dashboard event.
func (r adminRequests) requestEvent(ev *adminEvent) {
	ev.Text["requests"] = r.Text
	ev.Text["req.shared"] = r.Shared
	ev.ReqAdmitted, ev.ReqRefused = r.Admitted, r.Refused
	for _, row := range r.Rows {
		k := "req." + row.Class + "."
		ev.Text[k+"running"] = strconv.Itoa(row.Running)
		ev.Text[k+"waiting"] = strconv.Itoa(row.Waiting)
		ev.Text[k+"admitted"] = row.Admitted
		ev.Text[k+"refused"] = row.Refused
	}
}
