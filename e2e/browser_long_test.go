package e2e

import (
	"fmt"
	"net/http"
	"testing"
)

// browserLongPages is the length of the long work: more than one page of
// the work page's list (60), less than two.
const browserLongPages = 75

// testBrowserLongWork opens the page of a work longer than one list of
// pages: its script fetches the next pages as the "more pages" link
// scrolls into view, until all are shown, with no problem reported; the
// page is checked by axe-core after that too.
func testBrowserLongWork(t *testing.T, s *browserServer, axe string) {
	var res struct{ ID string }
	s.api(t, "POST", "/works", map[string]any{"metadata": map[string]any{"dc:title": "A long register"}, "visibility": "public"},
		http.StatusCreated, &res)
	work := res.ID
	for i := 1; i <= browserLongPages; i++ {
		s.api(t, "POST", "/filesets", map[string]any{"parent": work, "visibility": "public",
			"metadata": map[string]any{"dc:title": fmt.Sprintf("Leaf %d", i)}}, http.StatusCreated, nil)
	}

	b := newBrowser(t, s.base)
	b.open("/works/"+work, http.StatusOK)
	first := b.nodeCount("ol.pages > li")
	if first >= browserLongPages || first == 0 {
		t.Fatalf("the first list shows %d of %d pages; want a part", first, browserLongPages)
	}
	if b.nodeCount(`a[rel="next"]`) != 1 {
		t.Fatal("a work longer than one list has no link to its next pages")
	}
	b.shot("long-first")
	b.waitFor(fmt.Sprintf("all %d pages shown", browserLongPages), fmt.Sprintf(`(() => {
  window.scrollTo(0, document.body.scrollHeight);
  return document.querySelectorAll("ol.pages > li").length === %d && !document.querySelector('a[rel="next"]') })()`, browserLongPages),
		`document.querySelectorAll("ol.pages > li").length`, browserStep)
	var labels []string
	b.eval("the pages' labels", `Array.from(document.querySelectorAll("ol.pages > li")).map(li => li.querySelector(".label").innerText.trim())`, &labels)
	for i, l := range labels {
		if want := fmt.Sprintf("Leaf %d", i+1); l != want {
			t.Errorf("page %d is labelled %q, want %q", i+1, l, want)
			break
		}
	}
	b.shot("long-all")
	b.axe("the long work, all pages shown", axe)
	b.checkClean("the long work")
}
