package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// TestBrowserUsage: a reader opens a work's page in Chromium and a
// crawler (Googlebot's user agent) asks for the same page; once the
// server has flushed its counts, the administrators' usage report shows
// the work viewed once (the crawler is not counted), with a chart of the
// months and the numbers in a table, and the work's page says so. The
// report passes axe-core.
func TestBrowserUsage(t *testing.T) {
	chromiumPath(t)
	axe := axeSource(t)
	s := startBrowserServer(t)
	var res struct{ ID string }
	s.api(t, "POST", "/works", map[string]any{"metadata": map[string]any{"dc:title": "A chart of the harbour"}, "visibility": "public"}, http.StatusCreated, &res)
	work := res.ID

	b := newBrowser(t, s.base)
	b.open("/works/"+work, http.StatusOK)
	status, _, err := do(s.hc, "GET", s.base+"/works/"+work, "", nil, http.Header{"User-Agent": {"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"}})
	if err != nil || status != http.StatusOK {
		t.Fatalf("the crawler's look: %d %v", status, err)
	}
	b.signIn("admin", browserAdminPassword, "/")
	b.open("/admin/usage", http.StatusOK)
	// the server flushes its counts every few seconds
	b.reloadUntil("the reader's look in the report", `document.querySelector("ol.usage-top") !== null`,
		`document.querySelector("main").innerText.slice(0, 600)`, browserBackground)
	if text := b.text(); !strings.Contains(text, "A chart of the harbour — 1") {
		t.Errorf("the report counts the crawler or misses the reader: %.1200s", text)
	}
	if n := b.nodeCount("figure.usage-chart svg rect"); n != 24 {
		t.Errorf("the chart has %d bars, want two for each of 12 months", n)
	}
	b.shot("usage")
	b.checkClean("the usage report")
	b.axe("the usage report", axe)
	b.open("/works/"+work, http.StatusOK)
	if text := b.text(); !strings.Contains(text, "Viewed 1 times (1 sessions)") {
		t.Errorf("the work's page: %.800s", text)
	}
}
