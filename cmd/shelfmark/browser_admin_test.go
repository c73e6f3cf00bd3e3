package main

import (
	"net/http"
	"testing"
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
