package e2e

import (
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark/bench/gen"
)

// TestBrowserHiddenShapes: what a reader sees in a real browser where the
// access of one thing hides another, on a real `shelfmark serve` whose
// workers make the derivatives: a public work of two pages whose second
// page image was uploaded private shows the reader the first page's
// thumbnail and not the second's (no request for a hidden derivative,
// none named in the page), while the administrator sees both; a public
// work held by a private work is found neither by the search page nor in
// its collection's page, and its own page is "not found"; no CSP
// violation, script error or failed request, and axe-core's rules pass.
func TestBrowserHiddenShapes(t *testing.T) {
	chromiumPath(t)
	if _, err := exec.LookPath("vipsthumbnail"); err != nil {
		if requireTools() {
			t.Fatal("vipsthumbnail is not installed (scripts/testdeps.sh installs it)")
		}
		t.Skip("vipsthumbnail is not installed")
	}
	axe := axeSource(t)
	s := startBrowserServer(t)

	var res struct{ ID string }
	s.api(t, "POST", "/collections", map[string]any{"metadata": map[string]any{"dc:title": "Harbour records"}, "visibility": "public"},
		http.StatusCreated, &res)
	coll := res.ID
	s.api(t, "POST", "/works", map[string]any{"metadata": map[string]any{"dc:title": "Tide tables of the harbour"},
		"memberOf": []string{coll}, "visibility": "public"}, http.StatusCreated, &res)
	work := res.ID
	// the second page's image is made private before any job runs on it
	s.api(t, "POST", "/jobs/characterize/pause", map[string]any{}, http.StatusOK, nil)
	var pages, images [2]string
	for i, words := range []string{"HIGH WATER", "SEALED PAGE"} {
		s.api(t, "POST", "/filesets", map[string]any{"parent": work, "visibility": "public"}, http.StatusCreated, &res)
		pages[i] = res.ID
		s.api(t, "POST", "/resources/"+pages[i]+"/files?name=page"+string(rune('1'+i))+".png",
			rawBody{"image/png", gen.PageImage(uint64(11+i), 1, strings.Fields(words))}, http.StatusCreated, &res)
		images[i] = res.ID
	}
	s.api(t, "PATCH", "/resources/"+images[1], map[string]any{"visibility": "private"}, http.StatusOK, nil)
	s.api(t, "POST", "/jobs/characterize/resume", map[string]any{}, http.StatusOK, nil)
	s.api(t, "POST", "/works", map[string]any{"metadata": map[string]any{"dc:title": "Sealed harbour archive"}, "visibility": "private"},
		http.StatusCreated, &res)
	parent := res.ID
	s.api(t, "POST", "/works", map[string]any{"metadata": map[string]any{"dc:title": "Pilotage logbook"}, "parent": parent,
		"memberOf": []string{coll}, "visibility": "public"}, http.StatusCreated, &res)
	child := res.ID

	// the pipeline made both pages' derivatives (the administrator sees
	// them)
	derived := func(page string) []string {
		var children struct{ Items []struct{ ID string } }
		s.api(t, "GET", "/resources/"+page+"/children?limit=100", nil, http.StatusOK, &children)
		var out []string
		for _, c := range children.Items {
			var f struct{ File struct{ Use string } }
			s.api(t, "GET", "/resources/"+c.ID, nil, http.StatusOK, &f)
			if f.File.Use == "thumbnail" {
				out = append(out, c.ID)
			}
		}
		return out
	}
	deadline := time.Now().Add(browserBackground)
	for len(derived(pages[0])) == 0 || len(derived(pages[1])) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the pages' thumbnails are not made after %v", browserBackground)
		}
		time.Sleep(time.Second)
	}
	hiddenThumb := derived(pages[1])[0]

	b := newBrowser(t, s.base)
	b.open("/works/"+work, http.StatusOK)
	if n := b.nodeCount("#work-pages img"); n != 1 {
		t.Errorf("the reader sees %d page thumbnails, want 1 (the second page's image is private)", n)
	}
	var html string
	b.eval("the page", `document.documentElement.outerHTML`, &html)
	for _, id := range []string{images[1], hiddenThumb} {
		if strings.Contains(html, id) {
			t.Errorf("the work page names the hidden file %s", id)
		}
	}
	var requested []string
	b.eval("the requests", `performance.getEntriesByType("resource").map(e => e.name)`, &requested)
	for _, u := range requested {
		if strings.Contains(u, hiddenThumb) || strings.Contains(u, images[1]) {
			t.Errorf("the browser asked for a hidden file: %s", u)
		}
	}
	b.shot("reader-work")
	b.checkClean("the work page with a hidden page image")
	b.axe("the work page with a hidden page image", axe)

	// the public work under a private work: not found anywhere
	b.open("/search?q=pilotage", http.StatusOK)
	if strings.Contains(b.text(), "Pilotage logbook") {
		t.Error("the search page finds the work held by a private work")
	}
	b.shot("reader-search")
	b.checkClean("the search page")
	b.open("/collections/"+coll, http.StatusOK)
	if text := b.text(); strings.Contains(text, "Pilotage logbook") || !strings.Contains(text, "Tide tables of the harbour") {
		t.Errorf("the collection page lists the hidden child, or not the public work: %.400s", text)
	}
	b.open("/works/"+child, http.StatusNotFound)
	b.shot("reader-child-not-found")

	// the administrator sees everything
	b.signIn("admin", browserAdminPassword, "/works/"+work)
	if n := b.nodeCount("#work-pages img"); n != 2 {
		t.Errorf("the administrator sees %d page thumbnails, want 2", n)
	}
	b.shot("admin-work")
	b.open("/works/"+child, http.StatusOK)
	b.checkClean("the administrator's pages")
}
