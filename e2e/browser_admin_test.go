package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// testBrowserDashboard watches the administrators' dashboard while a
// queue is paused and resumed through the REST API: the page shows each
// change by itself (its event stream), without being reloaded.
func testBrowserDashboard(t *testing.T, s *browserServer) {
	b := newBrowser(t, s.base)
	b.signIn("admin", browserAdminPassword, "/admin")
	b.eval("mark the page", `window.__sameDocument = true`, nil)
	paused := `!document.querySelector('[data-show="ocr.paused"]').hidden && document.querySelector('[data-hide="ocr.paused"]').hidden`
	var was bool
	b.eval("the ocr queue's state", paused, &was)
	if was {
		t.Fatal("the ocr queue is paused before the test paused it")
	}

	s.api(t, "POST", "/jobs/ocr/pause", nil, http.StatusOK, nil)
	t.Cleanup(func() {
		// the queue works again whatever became of the test
		_, _, _ = do(s.hc, "POST", s.base+"/api/v1/jobs/ocr/resume", "", nil, http.Header{"Authorization": {"Bearer " + s.token}})
	})
	b.waitFor("the dashboard shows the ocr queue paused", paused,
		`document.querySelector('[data-show="ocr.paused"]').closest("tr").innerText`, browserStep)
	b.shot("admin-live-paused")
	s.api(t, "POST", "/jobs/ocr/resume", nil, http.StatusOK, nil)
	b.waitFor("the dashboard shows the ocr queue active again", "!("+paused+")",
		`document.querySelector('[data-show="ocr.paused"]').closest("tr").innerText`, browserStep)

	var same bool
	b.eval("the same page", `window.__sameDocument === true`, &same)
	if !same {
		t.Error("the dashboard was reloaded to show the change")
	}
	b.checkClean("the live dashboard")
}

// browserBulkRows is the length of the bulk manifest: long enough that the
// run is seen in progress on a quick machine, short for a slow one.
const browserBulkRows = 300

// testBrowserBulk uploads a CSV manifest, reads its preview, starts the
// ingest and watches its page until it says the run is done: the page
// follows the run by itself (the test never reloads it), and the works
// are stored.
func testBrowserBulk(t *testing.T, s *browserServer) {
	var csv strings.Builder
	csv.WriteString("source_identifier,title,creator,date\n")
	for i := 1; i <= browserBulkRows; i++ {
		fmt.Fprintf(&csv, "reg-%d,Register volume %d,Town clerk,%d\n", i, i, 1800+i%100)
	}
	manifest := filepath.Join(t.TempDir(), "registers.csv")
	if err := os.WriteFile(manifest, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	b := newBrowser(t, s.base)
	b.signIn("admin", browserAdminPassword, "/bulk")
	b.setFiles("choose the manifest", "#bulk-manifest", []string{manifest})
	b.expect("check the manifest", http.StatusOK, chromedp.Click(`main form[action="/bulk"] button[type="submit"]`, chromedp.ByQuery))
	if text := b.text(); !strings.Contains(text, strconv.Itoa(browserBulkRows)) {
		t.Errorf("the preview does not count %d works: %.600s", browserBulkRows, text)
	}
	b.shot("bulk-preview-long")
	b.expect("start the ingest", http.StatusOK, chromedp.Click(`main form[action$="/start"] button[type="submit"]`, chromedp.ByQuery))
	b.shot("bulk-started")
	b.waitFor("the run done", `document.querySelector("#bulk-run") && document.querySelector("#bulk-run").dataset.state === "done"`,
		`(document.querySelector("main") || document.body).innerText`, browserBackground)
	b.shot("bulk-done")
	if text := b.text(); !strings.Contains(text, strconv.Itoa(browserBulkRows)) {
		t.Errorf("the finished run does not count %d works: %.600s", browserBulkRows, text)
	}
	b.checkClean("the bulk ingest's pages")
	b.open("/search?q=register", http.StatusOK)
	if text := b.text(); !strings.Contains(text, "Register volume") {
		t.Errorf("the ingested works are not found: %.600s", text)
	}
}
