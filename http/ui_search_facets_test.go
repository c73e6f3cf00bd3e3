package http

import (
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// TestUISearchFacets: the search page shows every facet of the repository
// with counts, in its order (an administrator's genre too), languages by
// name and DCMI types by the catalog's name in the page's language; a
// value links to the search narrowed by it (f=name:value), which the form
// keeps and the filters list offers to remove; a filter on a facet there
// is not is the form again (400) naming the facets; the administrators'
// dashboard lists the facets; and the page runs the statements of one
// without metadata facets.
func TestUISearchFacets(t *testing.T) {
	f := newFacetsFixture(t, testFacets())
	b := newVisitor(t, f.e)
	p := b.get("/search?q=kittiwake")
	if p.Status != http.StatusOK {
		t.Fatalf("status %d: %s", p.Status, p.Body)
	}
	body := html.UnescapeString(p.Body)
	order := []string{`id="facet-language">Language</h3>`, `id="facet-type">Type</h3>`, `id="facet-kind">Kind</h3>`, `id="facet-genre">Genre</h3>`}
	last := -1
	for _, h := range order {
		i := strings.Index(body, h)
		if i < 0 || i < last {
			t.Fatalf("the facet %s is missing or out of order:\n%s", h, body)
		}
		last = i
	}
	for _, want := range []string{`>English</a> <span class="count">1</span>`, `>French</a> <span class="count">1</span>`, `>German</a>`,
		`>Text</a> <span class="count">2</span>`, `>Image</a> <span class="count">1</span>`, `>Natural history</a> <span class="count">2</span>`} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s in the facets", want)
		}
	}
	if strings.Contains(body, "Secret") || strings.Contains(body, ">Diary<") {
		t.Errorf("the private work shows")
	}
	link := regexp.MustCompile(`<a href="([^"]+)">English</a>`).FindStringSubmatch(p.Body)
	if link == nil {
		t.Fatal("no link for English")
	}
	href := html.UnescapeString(link[1])
	if !strings.Contains(href, "f=language%3Aeng") || !strings.Contains(href, "q=kittiwake") {
		t.Fatalf("the link of English: %s", href)
	}
	narrowed := b.get(href)
	nb := html.UnescapeString(narrowed.Body)
	if narrowed.Status != http.StatusOK || !strings.Contains(nb, "Kittiwakes of the north") || strings.Contains(nb, "Les mouettes") || strings.Contains(nb, "Seevögel") {
		t.Fatalf("narrowed by English: status %d\n%s", narrowed.Status, nb)
	}
	for _, want := range []string{`<span aria-current="true">English</span>`, `<input type="hidden" name="f" value="language:eng">`, `Language: English <a href="/search?q=kittiwake">`} {
		if !strings.Contains(nb, want) {
			t.Errorf("narrowed page: no %s", want)
		}
	}
	// the catalog names facets and types in the page's language
	b.lang = "de"
	de := html.UnescapeString(b.get("/search?q=kittiwake").Body)
	for _, want := range []string{`>Sprache</h3>`, `>Englisch</a>`, `>Typ</h3>`} {
		if !strings.Contains(de, want) {
			t.Errorf("German page: no %s", want)
		}
	}
	b.lang = ""
	// a facet there is not
	bad := b.get("/search?q=kittiwake&f=nope:x")
	if bad.Status != http.StatusBadRequest || !strings.Contains(html.UnescapeString(bad.Body), "creator, subject, language, type, genre") {
		t.Errorf("f=nope:x: status %d\n%s", bad.Status, bad.Body)
	}
	// no words, one filter: the works in German, newest first
	only := html.UnescapeString(b.get("/search?f=language:ger").Body)
	if !strings.Contains(only, "Seevögel") || strings.Contains(only, "Kittiwakes of the north") {
		t.Errorf("f=language:ger without words:\n%s", only)
	}
	// the dashboard lists the facets, an administrator's with its predicate
	dash := html.UnescapeString(adminVisitor(t, f.e).get("/admin").Body)
	for _, want := range []string{`<h2 id="h-facets">Search facets</h2>`, `<code>genre</code></th><td>Genre</td><td><code>` + testGenre + `</code>`,
		`<code>kind</code></th><td>Kind</td><td>built in</td>`} {
		if !strings.Contains(dash, want) {
			t.Errorf("the dashboard lacks %s", want)
		}
	}
	// as many statements as a page of a repository without metadata facets
	plain := newFacetsFixture(t, testFacets()[4:8])
	with := f.e.do("GET", "/search?q=kittiwake", nil, as("")...).want(t, http.StatusOK)
	without := plain.e.do("GET", "/search?q=kittiwake", nil, as("")...).want(t, http.StatusOK)
	if len(with.Stmts) != len(without.Stmts) {
		t.Errorf("statements: %d with metadata facets, %d without", len(with.Stmts), len(without.Stmts))
	}
}
