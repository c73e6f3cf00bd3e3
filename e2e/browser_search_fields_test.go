package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/shelfmark/shelfmark/bench/gen"
)

// TestBrowserSearchFields: a reader types a field search into the search
// page's box and sorts the results by date, with the keyboard alone, in a
// real browser on a real `shelfmark serve`. creator:melville finds the two
// works whose creator is Melville, not the study whose title and subject
// name him; sorted by date, earliest first, Typee (1846) comes before
// Moby Dick (1851), and latest first the other way; a decade of the
// facets, a date range and a subject narrow as they say; Moby Dick's hit
// shows its page's thumbnail (and nothing sticks out at 320 px); a date:
// that is no span of years is refused on the page with the engine's
// message. The pages are clean and axe-core's rules pass.
func TestBrowserSearchFields(t *testing.T) {
	chromiumPath(t)
	axe := axeSource(t)
	s := startBrowserServer(t)
	var res struct{ ID string }
	work := func(md map[string]any) string {
		t.Helper()
		s.api(t, "POST", "/works", map[string]any{"metadata": md, "visibility": "public"}, http.StatusCreated, &res)
		return res.ID
	}
	moby := work(map[string]any{"dc:title": "Moby Dick", "dc:creator": "Melville, Herman", "dc:subject": "Whaling", "dc:date": "1851"})
	typee := work(map[string]any{"dc:title": "Typee", "dc:creator": "Melville, Herman", "dc:subject": "Travel", "dc:date": "1846"})
	study := work(map[string]any{"dc:title": "Call me Melville", "dc:creator": "Olson, Charles", "dc:subject": "Melville, Herman", "dc:date": "1947"})
	// a page image of Moby Dick, whose thumbnail its hit shows
	s.api(t, "POST", "/filesets", map[string]any{"parent": moby, "visibility": "public"}, http.StatusCreated, &res)
	s.api(t, "POST", "/resources/"+res.ID+"/files?name=title-page.png",
		rawBody{"image/png", gen.PageImage(3, 1, strings.Fields("MOBY DICK OR THE WHALE"))}, http.StatusCreated, nil)

	b := newBrowser(t, s.base)
	b.searchUntil("creator:melville", typee, true)
	b.open("/search", http.StatusOK)
	b.tabTo("the search box", "#search-q", false, 40)
	b.typeText("type a field search", "creator:melville")
	b.expect("search with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	order := func() []string {
		t.Helper()
		var hrefs []string
		b.eval("the results' order", `Array.from(document.querySelectorAll("ul.results h3 a")).map(a => a.getAttribute("href").split("?")[0].split("#")[0])`, &hrefs)
		return hrefs
	}
	want := func(what string, ids ...string) {
		t.Helper()
		var paths []string
		for _, id := range ids {
			paths = append(paths, "/works/"+id)
		}
		if got := order(); strings.Join(got, " ") != strings.Join(paths, " ") {
			t.Errorf("%s: %v, want %v\n%.600s", what, got, paths, b.text())
		}
	}
	if got := order(); len(got) != 2 || strings.Contains(strings.Join(got, " "), study) {
		t.Errorf("creator:melville lists %v, want Moby Dick and Typee (not the study of him)", got)
	}
	b.tabTo("the earliest-first sort", `p.sort a[href*="sort=date"]:not([href*="date-desc"])`, false, 60)
	b.expect("sort by date with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	want("creator:melville, earliest first", typee, moby)
	if !strings.Contains(b.text(), "the earliest first") {
		t.Errorf("the sorted page does not say its order: %.400s", b.text())
	}
	b.shot("search-fields-date")
	b.checkClean("the search page sorted by date")
	b.axe("the search page sorted by date", axe)
	b.tabTo("the latest-first sort", `p.sort a[href*="sort=date-desc"]`, false, 60)
	b.expect("sort latest first with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	want("creator:melville, latest first", moby, typee)

	// Moby Dick's hit shows its title page's thumbnail, once the
	// derivative is made; Typee, without a page, none
	b.open("/search?q=creator:melville", http.StatusOK)
	b.reloadUntil("Moby Dick's thumbnail", `(() => { const i = document.querySelector("ul.results img.thumb"); return i !== null && i.complete && i.naturalWidth > 0 })()`,
		`document.querySelector("main").innerHTML.slice(0, 600)`, browserBackground)
	if n := b.nodeCount("ul.results img.thumb"); n != 1 {
		t.Errorf("creator:melville shows %d thumbnails, want Moby Dick's alone", n)
	}
	b.shot("search-fields-thumbnail")
	b.checkClean("the search page with a thumbnail")
	b.axe("the search page with a thumbnail", axe)
	// on a phone the thumbnail narrows and nothing sticks out at 320 px
	if width, out := b.reflow(); width > 320 || len(out) > 0 {
		t.Errorf("at 320 px the search page is %d px wide: %v", width, out)
	}
	b.run("a phone's window", chromedp.EmulateViewport(375, 800))
	b.open("/search?q=creator:melville", http.StatusOK)
	b.shot("search-fields-phone")
	b.run("the window as it was", chromedp.EmulateViewport(1280, 900))

	// the decade facet narrows the search, from the keyboard
	b.open("/search?q=creator:melville", http.StatusOK)
	b.tabTo("the 1840s", `aside.facets a[href*="date%3A1840..1849"]`, false, 40)
	b.expect("narrow to the 1840s with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	want("creator:melville in the 1840s", typee)
	if b.nodeCount(`aside.facets span[aria-current="true"]`) == 0 {
		t.Errorf("the decade in force is not marked: %.400s", b.text())
	}

	b.open("/search?q=melville+date:1900..&sort=date", http.StatusOK)
	want("melville from 1900 on", study)
	b.open("/search?q=subject:whaling", http.StatusOK)
	want("subject:whaling", moby)

	// a date that is no span of years: the form again, with the message
	b.open("/search", http.StatusOK)
	b.tabTo("the search box", "#search-q", false, 40)
	b.typeText("type a bad date", "date:soon")
	b.expect("search with Enter", http.StatusBadRequest, chromedp.KeyEvent(kb.Enter))
	if text := b.text(); !strings.Contains(text, "a year or a range of years") {
		t.Errorf("a bad date: %.400s", text)
	}
	b.axe("the search page with a bad date", axe)
}
