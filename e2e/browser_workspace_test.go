package e2e

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserWorkspace: a curator signs in, opens "My works" from the
// navigation and, with the keyboard alone, narrows the list to the works
// without a title, ticks two works of the full list (Space), makes them
// private and follows the change to its end, where the page says how
// many works changed; then edits a work's title in a spreadsheet: the
// list written out as CSV (read here as the browser would save it), a
// cell changed, the file chosen in the import form, a preview that shows
// the change before it is applied, and the change applied from the
// keyboard. Each page is clean, passes axe-core in English and in
// German, and the list reflows on a phone (375 px) without sticking out.
func TestBrowserWorkspace(t *testing.T) {
	chromiumPath(t)
	axe := axeSource(t)
	s := startBrowserServer(t)
	var res struct{ ID string }
	var works []string
	for i := range 5 {
		md := map[string]any{"dc:title": fmt.Sprintf("Ship's log %d", i+1), "dc:date": fmt.Sprint(1850 + i)}
		if i == 2 {
			md = map[string]any{"dc:date": "1852"}
		}
		s.api(t, "POST", "/works", map[string]any{"metadata": md, "visibility": "public"}, http.StatusCreated, &res)
		works = append(works, res.ID)
	}

	b := newBrowser(t, s.base)
	b.signIn("admin", browserAdminPassword, "/")
	b.tabTo("My works in the navigation", `header nav a[href="/workspace"]`, false, 20)
	b.expect("open My works with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	if n := b.nodeCount("input.ws-pick"); n != 5 {
		t.Fatalf("My works lists %d works, want 5: %.600s", n, b.text())
	}
	b.shot("workspace")
	b.checkClean("My works")
	b.axe("My works", axe)

	// the works without a title, from the keyboard: the filter's select
	// moves with the arrow keys, the form goes with Enter on its button
	b.tabTo("the lacking filter", "#ws-missing", false, 30)
	b.press("choose: a title", []string{"ArrowDown"})
	b.tabTo("Show", "#ws-show", false, 12) // past the dates of deposit, three stops each
	b.expect("show with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	if n := b.nodeCount("input.ws-pick"); n != 1 || !strings.Contains(b.text(), "No title") {
		t.Errorf("the works without a title: %d, %.600s", n, b.text())
	}

	// tick two works and make them private
	b.open("/workspace", http.StatusOK)
	for _, id := range []string{works[4], works[3]} {
		b.tabTo("the box of "+id, "#ws-id-"+id, false, 60)
		b.press("tick "+id, []string{" "})
	}
	var ticked int
	b.eval("the ticked boxes", `document.querySelectorAll("input.ws-pick:checked").length`, &ticked)
	if ticked != 2 {
		t.Fatalf("%d works ticked, want 2", ticked)
	}
	b.tabTo("the change", "#ws-what", false, 30)
	b.press("choose: make private", []string{"ArrowDown", "ArrowDown"})
	var what string
	b.eval("the change chosen", `document.getElementById("ws-what").value`, &what)
	if what != "private" {
		t.Fatalf("the change chosen is %q, want private", what)
	}
	if shown := b.nodeCount(`.ws-arg:not([hidden])`); shown != 0 {
		t.Errorf("the script leaves %d of the change's extra fields shown for a visibility", shown)
	}
	b.tabTo("Apply", "#ws-apply", false, 10)
	b.expect("apply with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	b.waitFor("the change's end", `document.getElementById("ws-run-summary") !== null && document.getElementById("ws-run-summary").textContent.includes("Done:")`,
		`document.querySelector("main").innerText.slice(0, 400)`, browserBackground)
	if text := b.text(); !strings.Contains(text, "Done: 2 changed, 0 refused.") {
		t.Errorf("the change's page: %.600s", text)
	}
	b.shot("workspace-run")
	b.checkClean("the change's page")
	b.axe("the change's page", axe)
	b.open("/workspace?visibility=private", http.StatusOK)
	if n := b.nodeCount("input.ws-pick"); n != 2 {
		t.Errorf("%d private works after the change, want 2", n)
	}

	// a title changed in a spreadsheet
	status, body, err := do(s.hc, "GET", s.base+"/workspace/export.csv", "", nil, http.Header{"Authorization": {"Bearer " + s.token}})
	if err != nil || status != http.StatusOK {
		t.Fatalf("the CSV: %d %v", status, err)
	}
	rows, err := csv.NewReader(strings.NewReader(string(body))).ReadAll()
	if err != nil || len(rows) != 6 {
		t.Fatalf("the CSV: %v %q", err, rows)
	}
	for _, r := range rows[1:] {
		if r[0] == works[2] {
			r[2] = "Ship's log 3 (untitled until now)"
		}
	}
	file := filepath.Join(t.TempDir(), "works.csv")
	f, _ := os.Create(file)
	csv.NewWriter(f).WriteAll(rows)
	f.Close()
	b.open("/workspace", http.StatusOK)
	b.tabTo("the CSV file", "#ws-csv", false, 80)
	b.chooseFiles("choose the CSV with Enter", []string{file}, "Enter")
	b.tabTo("read the file", "#ws-read", false, 5)
	b.expect("read it with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	if text := b.text(); !strings.Contains(text, "Works that would change: 1. Unchanged: 4. Rows refused: 0.") ||
		!strings.Contains(text, "Ship's log 3 (untitled until now)") {
		t.Errorf("the preview: %.800s", text)
	}
	b.shot("workspace-preview")
	b.checkClean("the preview")
	b.axe("the preview", axe)
	b.tabTo("apply the changes", "#ws-confirm-apply", false, 40)
	b.expect("apply with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	b.waitFor("the edit's end", `document.getElementById("ws-run-summary") !== null && document.getElementById("ws-run-summary").textContent.includes("Done:")`,
		`document.querySelector("main").innerText.slice(0, 400)`, browserBackground)
	b.open("/works/"+works[2], http.StatusOK)
	if !strings.Contains(b.text(), "untitled until now") {
		t.Errorf("the work after the edit: %.400s", b.text())
	}

	// German, and a phone
	b.open("/workspace?lang=de", http.StatusOK)
	if !strings.Contains(b.text(), "Meine Werke") {
		t.Errorf("the German list: %.300s", b.text())
	}
	b.axe("My works in German", axe)
	if width, out := b.reflow(); width > 320 || len(out) > 0 {
		t.Errorf("at 320 px My works is %d px wide: %v", width, out)
	}
	b.run("a phone's window", chromedp.EmulateViewport(375, 800))
	b.open("/workspace", http.StatusOK)
	b.shot("workspace-phone")
	b.run("the window as it was", chromedp.EmulateViewport(1280, 900))
}
