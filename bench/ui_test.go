package bench

import (
	"context"
	"encoding/json"
	"github.com/shelfmark/shelfmark"
	"os"
	"path/filepath"
	"testing"
)

// TestRunUI: the scenario stores a small book and collection, serves them,
// and every page answers 200 with what it should show (the book's title;
// the collection's first member, and its member at 90% depth; links to the
// common word's works; the rare word's works; the common word's works to
// the signed-in reader, named on her page; the book, once, for the word
// on each of its pages) every time it is asked; the report has the fields
// every report has, one step per page; the two servers of the cost of
// counting both answered, and the counting one stored the reader's views
// of the book.
func TestRunUI(t *testing.T) {
	repo, blobs := labRepo(t)
	res, err := RunUI(context.Background(), repo, repo.Storage(), blobs, UIConfig{Pages: 30, Members: 500, Batch: 100, Requests: 5, Warmup: 1, PageSize: 20, UsageSeconds: 2})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	if len(res.Pages) != 7 || len(r.Steps) != 7 {
		t.Fatalf("%d pages, %d steps, want 7", len(res.Pages), len(r.Steps))
	}
	for i, p := range res.Pages {
		if !p.Available {
			t.Errorf("%s: %s", p.Name, p.Unavailable)
			continue
		}
		if p.Requests != 5 || p.Errors != 0 || p.Bytes == 0 || p.Server.P50 <= 0 || p.Raw.P50 <= 0 {
			t.Errorf("%s: %+v", p.Name, p)
		}
		if s := r.Steps[i]; s.Items != 5 || s.Errors != 0 || s.LatencyMS == nil || s.RawLimit <= 0 {
			t.Errorf("step %d (%s): %+v", i, p.Name, s)
		}
	}
	if u := res.Usage; u == nil || u.PlainPerS <= 0 || u.CountedPerS <= 0 || u.Ratio <= 0 || u.Recorded < UIUsageRate/2 || u.Errors != 0 {
		t.Fatalf("the cost of counting: %+v", u)
	}
	var book shelfmark.ID
	if m := uiWorkLink.FindString(res.Pages[UIWork].Path); m != "" {
		book = shelfmark.ID(m[len("/works/"):])
	}
	sys := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
	totals, err := repo.UsageTotalsOf(sys, book)
	if err != nil || totals == nil || totals.Investigations == 0 {
		t.Fatalf("the views of the book stored by the counting server: %+v, %v", totals, err)
	}
	if r.Scenario != "ui" || r.Backend != "sqlite" || r.Items != 35 || r.Errors != 0 || r.RatePerS <= 0 || r.RawLimitPerS <= 0 ||
		r.FractionLimit <= 0 || r.LatencyMS.P99 <= 0 || res.DeepOverFirstP50 <= 0 || res.StaffOverAnonymousP50 <= 0 {
		t.Fatalf("report: %+v", r)
	}
	// the JSON report holds the fields every scenario's report holds
	path := filepath.Join(t.TempDir(), "ui.json")
	if err := r.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"scenario", "backend", "items", "seconds", "rate_per_s", "flatness", "raw_limit_per_s", "fraction_of_limit", "latency_ms", "peak_rss_bytes", "errors", "steps"} {
		if _, ok := m[k]; !ok {
			t.Errorf("the JSON report has no %q", k)
		}
	}
}

// TestUICheck: an answer is judged wrong for its status, its type, a
// missing text or too few links to works.
func TestUICheck(t *testing.T) {
	page := []byte(`<a href="/works/a1">A</a> <a href="/works/b2">B</a> <a href="/works/a1">A again</a>`)
	c := uiCheck{contains: []string{"a1"}, anyOf: []string{"zz", "b2"}, links: 2}
	if why := c.judge(200, "text/html; charset=utf-8", page); why != "" {
		t.Fatal(why)
	}
	for _, tc := range []struct {
		c      uiCheck
		status int
		ctype  string
	}{
		{c, 404, "text/html"},
		{c, 200, "application/json"},
		{uiCheck{contains: []string{"c3"}}, 200, "text/html"},
		{uiCheck{anyOf: []string{"c3", "d4"}}, 200, "text/html"},
		{uiCheck{links: 3}, 200, "text/html"},
	} {
		if why := tc.c.judge(tc.status, tc.ctype, page); why == "" {
			t.Errorf("%+v %d %s: judged right", tc.c, tc.status, tc.ctype)
		}
	}
}
