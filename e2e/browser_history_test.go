package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// historyTimeMap is the part of a TimeMap the history check reads.
type historyTimeMap struct {
	Mementos []struct {
		Version int `json:"version"`
	} `json:"mementos"`
}

// waitVersions polls a work's TimeMap until it lists n versions (the
// preserver keeps a change once its window has passed).
func (s *browserServer) waitVersions(t *testing.T, work string, n int) {
	t.Helper()
	deadline := time.Now().Add(browserStep)
	for {
		// 404 until the first version is kept
		var tm historyTimeMap
		status, body, err := do(s.hc, "GET", s.base+"/api/v1/resources/"+work+"/versions", "", nil, http.Header{"Authorization": {"Bearer " + s.token}})
		if err == nil && status == http.StatusOK {
			if err := json.Unmarshal(body, &tm); err != nil {
				t.Fatal(err)
			}
			if len(tm.Mementos) >= n {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the TimeMap of %s lists %d versions after %s, want %d (last answer %d %s %v)", work, len(tm.Mementos), browserStep, n, status, body, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// testBrowserHistory: a curator opens a work's History from its page,
// sees the two versions its edit made compared (the old title struck
// out, the new one marked added), compares them the other way round with
// the form, restores the first version by its button (keyboard: Tab to
// it, Enter), and finds the work's title back and a new version equal to
// the first; the page passes axe-core and shows its keyboard focus.
func testBrowserHistory(t *testing.T, s *browserServer, axe string) {
	var res struct{ ID string }
	s.api(t, "POST", "/works", map[string]any{"metadata": map[string]any{"dc:title": "Harbour ledger", "dc:date": "1901"},
		"visibility": "public"}, http.StatusCreated, &res)
	work := res.ID
	s.waitVersions(t, work, 1)
	s.api(t, "PATCH", "/resources/"+work, map[string]any{"add": map[string]any{"dc:title": "Harbour ledger, revised", "dc:subject": "Shipping"},
		"remove": map[string]any{"dc:title": "Harbour ledger"}}, http.StatusOK, nil)
	s.waitVersions(t, work, 2)

	b := newBrowser(t, s.base)
	defer b.close()
	b.signIn("admin", browserAdminPassword, "/")
	b.open("/works/"+work, http.StatusOK)
	b.expect("open the History", http.StatusOK, chromedp.Click(`main a[href$="/history"]`, chromedp.ByQuery))
	if got := b.location(); got != "/works/"+work+"/history" {
		t.Fatalf("History at %s", got)
	}
	// the two newest compared: version 1 against version 2
	var diff struct{ Removed, Added []string }
	b.eval("read the comparison", `({Removed: [...document.querySelectorAll(".history-diff del")].map(e => e.innerText.trim()),
  Added: [...document.querySelectorAll(".history-diff ins")].map(e => e.innerText.trim())})`, &diff)
	if !containsText(diff.Removed, "Harbour ledger") || !containsText(diff.Added, "Harbour ledger, revised") || !containsText(diff.Added, "Shipping") {
		t.Fatalf("comparison: removed %q, added %q", diff.Removed, diff.Added)
	}
	b.shot("history")
	b.axe("history", axe)
	if _, unseen := b.tabWalk(150); len(unseen) > 0 {
		t.Errorf("history: the keyboard focus is not drawn on %v", unseen)
	}
	b.checkClean("history")

	// the other way round, with the form
	b.run("choose the versions", chromedp.SetValue("#cmp-a", "2", chromedp.ByQuery), chromedp.SetValue("#cmp-b", "1", chromedp.ByQuery))
	b.expect("compare", http.StatusOK, chromedp.Click(`form.history-compare button[type="submit"]`, chromedp.ByQuery))
	if got := b.location(); !strings.Contains(got, "a=2") || !strings.Contains(got, "b=1") {
		t.Fatalf("compared at %s", got)
	}
	b.eval("read the comparison", `({Removed: [...document.querySelectorAll(".history-diff del")].map(e => e.innerText.trim()),
  Added: [...document.querySelectorAll(".history-diff ins")].map(e => e.innerText.trim())})`, &diff)
	if !containsText(diff.Added, "Harbour ledger") || !containsText(diff.Removed, "Shipping") {
		t.Fatalf("comparison 2 with 1: removed %q, added %q", diff.Removed, diff.Added)
	}
	b.shot("history-compared")

	// restore version 1 by keyboard
	restore := `form[action$="/history/1/restore"] button`
	b.tabTo("reach the restore button", restore, false, 150)
	b.expect("restore version 1", http.StatusOK, chromedp.KeyEvent("\r"))
	if text := b.text(); !strings.Contains(text, "The version was restored") {
		t.Fatalf("after restoring: %s", text)
	}
	b.shot("history-restored")
	b.checkClean("history restored")

	var cur struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
	}
	s.api(t, "GET", "/resources/"+work, nil, http.StatusOK, &cur)
	if got := string(cur.Metadata["dc:title"]); !strings.Contains(got, `"Harbour ledger"`) || cur.Metadata["dc:subject"] != nil {
		t.Fatalf("after the restore the work's metadata is %s", fmt.Sprint(cur.Metadata))
	}
	s.waitVersions(t, work, 3)
	var m1, m3 struct {
		Metadata json.RawMessage `json:"metadata"`
	}
	s.api(t, "GET", "/resources/"+work+"/versions/1", nil, http.StatusOK, &m1)
	s.api(t, "GET", "/resources/"+work+"/versions/3", nil, http.StatusOK, &m3)
	if string(m1.Metadata) != string(m3.Metadata) {
		t.Fatalf("version 3 %s, want version 1's %s", m3.Metadata, m1.Metadata)
	}
}

// containsText reports whether one of the texts is want, after the
// words for screen readers ("removed:", "added:") on a line of their own.
func containsText(texts []string, want string) bool {
	for _, s := range texts {
		if i := strings.LastIndexAny(s, "\n:"); i >= 0 {
			s = strings.TrimSpace(s[i+1:])
		}
		if s == want {
			return true
		}
	}
	return false
}
