package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestBrowserSearchFacets: on a real `shelfmark serve` with the default
// facets, the search page shows the languages of the works found by
// name; a reader picks German, and the results narrow to the German work,
// the filter shown in force and removable; removing it shows both works
// again. The pages are clean and axe-core's rules pass.
func TestBrowserSearchFacets(t *testing.T) {
	chromiumPath(t)
	axe := axeSource(t)
	s := startBrowserServer(t)
	var res struct{ ID string }
	work := func(title, lang, typ string) string {
		t.Helper()
		s.api(t, "POST", "/works", map[string]any{"metadata": map[string]any{"dc:title": title, "dc:language": lang, "dc:type": typ,
			"dc:description": "A count of kittiwakes on the cliffs."}, "visibility": "public"}, http.StatusCreated, &res)
		return res.ID
	}
	english := work("Kittiwake survey of the north cliffs", "eng", "Text")
	german := work("Dreizehenmöwen an der Steilküste", "ger", "Dataset")

	b := newBrowser(t, s.base)
	// the search index follows the changes in the background, in order:
	// the later work found means both are indexed
	b.searchUntil("kittiwakes", german, true)
	listed := func(id string) bool { return b.nodeCount(`main a[href^="/works/`+id+`"]`) > 0 }
	if !listed(english) {
		t.Fatalf("the English work is not found: %.600s", b.text())
	}
	text := b.text()
	for _, want := range []string{"Language", "English", "German", "Type", "Dataset"} {
		if !strings.Contains(text, want) {
			t.Errorf("the facets lack %q: %.800s", want, text)
		}
	}
	b.checkClean("the search page with its facets")
	b.axe("the search page with its facets", axe)

	b.expect("pick German", http.StatusOK, chromedp.Click(`aside.facets a[href*="f=language%3Ager"]`, chromedp.ByQuery))
	if !strings.Contains(b.location(), "f=language%3Ager") {
		t.Errorf("after picking German the address is %s", b.location())
	}
	if !listed(german) || listed(english) {
		t.Errorf("narrowed to German: German listed %v, English listed %v: %.600s", listed(german), listed(english), b.text())
	}
	if n := b.nodeCount(`aside.facets span[aria-current="true"]`); n == 0 {
		t.Error("the picked language is not shown in force")
	}
	if n := b.nodeCount(`ul.filters li`); n != 1 || !strings.Contains(b.text(), "Language: German") {
		t.Errorf("the filters in force: %d: %.400s", n, b.text())
	}
	b.shot("search-facet-language")
	b.checkClean("the search narrowed by a language")
	b.axe("the search narrowed by a language", axe)

	// a new search in the form keeps the filter
	b.expect("search again", http.StatusOK, chromedp.SetValue(`#search-q`, "cliffs", chromedp.ByQuery), chromedp.Submit(`#search-q`, chromedp.ByQuery))
	if !listed(german) || listed(english) {
		t.Errorf("the form dropped the filter: %s: %.400s", b.location(), b.text())
	}
	b.expect("remove the filter", http.StatusOK, chromedp.Click(`ul.filters a`, chromedp.ByQuery))
	if !listed(german) || !listed(english) {
		t.Errorf("the filter removed: German listed %v, English listed %v: %.600s", listed(german), listed(english), b.text())
	}
}
