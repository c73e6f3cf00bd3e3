package ui

// This file serves the administrators' report of use (COUNTER's metrics,
// counted off the request path by shelfmark.UsageCounter): the
// repository's investigations and requests month by month as a chart
// and a table, the most looked-at works of a month, and the months as CSV.

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
)

// usageMonths is how many months the report shows by default (the last
// ones, this month included); usageTopN how many works it ranks.
const (
	usageMonths = 12
	usageTopN   = 20
)

// Sizes of the report's chart, in SVG user units.
const (
	usageChartH   = 160
	usageChartBar = 14
	usageChartGap = 12
	// usageChartLabel is the room under the bars for the months' numbers.
	usageChartLabel = 18
)

// adminUsageData is the content of the usage report.
type adminUsageData struct {
	Section string
	// NoUsage is set when the server counts no use.
	NoUsage bool
	// From and To are the months shown (YYYY-MM), Month the month whose
	// most used works are listed.
	From, To, Month string
	Report          *shelfmark.UsageReport
	Rows            []adminUsageRow
	Top             []adminUsageItem
	// ChartW and ChartH are the chart's size, Axis the height of its base
	// line; CSV the address of the months as CSV.
	ChartW, ChartH, Axis int
	CSV                  string
}

// adminUsageRow is one month of the report, with its bars.
type adminUsageRow struct {
	Month string
	shelfmark.UsageTotals
	// ViewBar and TakeBar are the bars of investigations and requests;
	// Label is the month's number under them, at LabelX.
	ViewBar, TakeBar usageBar
	Label            string
	LabelX           int
}

// usageBar is one bar of the chart.
type usageBar struct{ X, Y, W, H int }

// adminUsageItem is one of the most used works.
type adminUsageItem struct {
	ID    shelfmark.ID
	Title string
	N     int64
}

// usageRange reads the months of a report (from, to: YYYY-MM,
// shelfmark.ParseUsageMonth), the last
// usageMonths by default; the month of its ranking is month, or to.
func usageRange(r *http.Request, now time.Time) (from, to, month int, err error) {
	q := r.URL.Query()
	to = shelfmark.UsageMonth(now)
	from = shelfmark.UsageMonth(now.UTC().AddDate(0, -(usageMonths - 1), 0))
	read := func(name string, into *int) (err error) {
		if v := q.Get(name); strings.TrimSpace(v) != "" {
			*into, err = shelfmark.ParseUsageMonth(name, v)
		}
		return err
	}
	if err = read("from", &from); err == nil {
		err = read("to", &to)
	}
	month = to
	if err == nil {
		err = read("month", &month)
	}
	return from, to, month, err
}

// monthText writes a month (YYYYMM) as YYYY-MM.
func monthText(m int) string { return fmt.Sprintf("%04d-%02d", m/100, m%100) }

// adminUsage handles GET /admin/usage?from=&to=&month=: the report. Cost:
// two statements for the months (the repository's row over the primary
// key) and three for the ranking (usage.go of the engine).
func (s adminPages) adminUsage(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdminPage(r); err != nil {
		return err
	}
	from, to, month, err := usageRange(r, s.now())
	if err != nil {
		return err
	}
	ctx := r.Context()
	d := &adminUsageData{Section: "usage", From: monthText(from), To: monthText(to), Month: monthText(month), ChartH: usageChartH + usageChartLabel}
	rep, err := s.deps.Resources.UsageReport(ctx, "", from, to)
	switch {
	case shelfmark.ErrorCode(err) == shelfmark.EUNAVAILABLE:
		d.NoUsage = true
	case err != nil:
		return err
	default:
		d.Report = rep
		d.Rows, d.ChartW = usageChart(rep)
		d.Axis = usageChartH
		top, err := s.deps.Resources.UsageTop(ctx, month, shelfmark.TotalInvestigations, usageTopN)
		if err != nil {
			return err
		}
		p := s.page(w, r, "admin.usage.title")
		for _, it := range top {
			title := readTitle(it.Metadata, p.Lang)
			if title == "" {
				title = string(it.ID)
			}
			d.Top = append(d.Top, adminUsageItem{ID: it.ID, Title: title, N: it.N})
		}
		d.CSV = "/admin/usage.csv?from=" + d.From + "&to=" + d.To
		p.Nav = "admin"
		p.Data = d
		return s.render(w, r, http.StatusOK, "admin_usage", p)
	}
	p := s.page(w, r, "admin.usage.title")
	p.Nav = "admin"
	p.Data = d
	return s.render(w, r, http.StatusOK, "admin_usage", p)
}

// usageChart lays out the report's months as pairs of bars (looked at,
// taken), scaled to the highest count, and returns the rows and the
// chart's width.
func usageChart(rep *shelfmark.UsageReport) ([]adminUsageRow, int) {
	top := int64(1)
	for _, m := range rep.Months {
		top = max(top, m.Investigations, m.Requests)
	}
	bar := func(x int, n int64) usageBar {
		h := int(n * (usageChartH - 2) / top)
		if n > 0 {
			h = max(h, 1)
		}
		return usageBar{X: x, Y: usageChartH - h, W: usageChartBar, H: h}
	}
	rows := make([]adminUsageRow, len(rep.Months))
	x := usageChartGap
	for i, m := range rep.Months {
		rows[i] = adminUsageRow{Month: monthText(m.Month), UsageTotals: m.UsageTotals,
			ViewBar: bar(x, m.Investigations), TakeBar: bar(x+usageChartBar, m.Requests),
			Label: fmt.Sprintf("%02d", m.Month%100), LabelX: x + usageChartBar}
		x += 2*usageChartBar + usageChartGap
	}
	return rows, x
}

// adminUsageCSV handles GET /admin/usage.csv?from=&to=: the repository's
// months as CSV, a column a metric (COUNTER's names).
func (s adminPages) adminUsageCSV(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdminPage(r); err != nil {
		return err
	}
	from, to, _, err := usageRange(r, s.now())
	if err != nil {
		return err
	}
	rep, err := s.deps.Resources.UsageReport(r.Context(), "", from, to)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="usage-%s-%s.csv"`, monthText(from), monthText(to)))
	h.Set("Cache-Control", "private, no-store")
	cw := csv.NewWriter(w)
	head := []string{"Month"}
	for _, m := range shelfmark.UsageMetrics {
		head = append(head, m.String())
	}
	cw.Write(head)
	for _, m := range rep.Months {
		cw.Write([]string{monthText(m.Month), strconv.FormatInt(m.Investigations, 10), strconv.FormatInt(m.UniqueInvestigations, 10),
			strconv.FormatInt(m.Requests, 10), strconv.FormatInt(m.UniqueRequests, 10)})
	}
	cw.Flush()
	return nil
}
