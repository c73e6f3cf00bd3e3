package http

import (
	"context"
	"errors"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// readFixture is a small repository: a public collection "Atlases" with a
// public work and a private one, a private collection, a public
// collection deleted, and a public work outside any collection.
type readFixture struct {
	e                                 *testEnv
	coll, hiddenColl, goneColl, child shelfmark.ID
	work, private, loose              shelfmark.ID
}

func readLit(p, s string) shelfmark.Statement {
	return shelfmark.Statement{Predicate: p, Object: shelfmark.NewLiteral(s)}
}

func newReadFixture(t *testing.T) *readFixture {
	t.Helper()
	e := newEnv(t, Options{})
	ctx := context.Background()
	f := &readFixture{e: e}
	create := func(nr *shelfmark.NewResource) shelfmark.ID {
		t.Helper()
		r, err := e.repo.CreateResource(ctx, nr)
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	f.coll = create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: []shelfmark.Statement{
		readLit(shelfmark.NSDCTerms+"title", "Atlases <of> the Rhine"),
		{Predicate: shelfmark.NSDCTerms + "title", Object: shelfmark.NewLangLiteral("Rheinatlanten", "de")},
		readLit(shelfmark.NSDCTerms+"description", "Maps of the river <script>alert(1)</script>")}})
	f.hiddenColl = create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Visibility: shelfmark.Private,
		Metadata: []shelfmark.Statement{readLit(shelfmark.NSDCTerms+"title", "Secret archive")}})
	f.goneColl = create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: []shelfmark.Statement{readLit(shelfmark.NSDCTerms+"title", "Gone")}})
	if err := e.repo.DeleteResource(ctx, f.goneColl, 0); err != nil {
		t.Fatal(err)
	}
	f.child = create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, MemberOf: []shelfmark.ID{f.coll},
		Metadata: []shelfmark.Statement{readLit(shelfmark.NSDC+"title", "Upper Rhine")}})
	f.work = create(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{f.coll},
		Metadata: []shelfmark.Statement{readLit(shelfmark.NSDC+"title", "Rhine map 1820")}})
	f.private = create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private, MemberOf: []shelfmark.ID{f.coll},
		Metadata: []shelfmark.Statement{readLit(shelfmark.NSDC+"title", "Unpublished survey")}})
	f.loose = create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{readLit(shelfmark.NSDC+"title", "Loose leaf")}})
	return f
}

// wantPage checks a page's status, that it has the frame and one h1, and
// that it shows each of has and none of hasNot.
func wantPage(t *testing.T, p *htmlPage, status int, has, hasNot []string) {
	t.Helper()
	if p.Status != status {
		t.Fatalf("status %d, want %d: %.600s", p.Status, status, p.Body)
	}
	if n := strings.Count(p.Body, "<h1"); n != 1 || !strings.Contains(p.Body, `<main id="main"`) {
		t.Errorf("%d h1, or no frame: %.300s", n, p.Body)
	}
	for _, s := range has {
		if !strings.Contains(p.Body, s) {
			t.Errorf("the page lacks %q", s)
		}
	}
	for _, s := range hasNot {
		if strings.Contains(p.Body, s) {
			t.Errorf("the page shows %q", s)
		}
	}
}

// TestUIHome: the home page lists the collections the visitor may see,
// the newest public works, and a search box; in German when asked.
func TestUIHome(t *testing.T) {
	f := newReadFixture(t)
	b := newVisitor(t, f.e)
	p := b.get("/")
	wantPage(t, p, 200, []string{
		`action="/search"`, `name="q"`, `aria-current="page">Home`,
		`href="/collections/` + string(f.coll) + `">Atlases &lt;of&gt; the Rhine</a>`,
		`href="/works/` + string(f.work) + `">Rhine map 1820</a>`,
		`href="/works/` + string(f.loose) + `">Loose leaf</a>`,
	}, []string{"Secret archive", "Unpublished survey", string(f.hiddenColl), string(f.private), "Gone"})
	// the newest first
	if i, j := strings.Index(p.Body, "Loose leaf"), strings.Index(p.Body, "Rhine map 1820"); i < 0 || j < 0 || i > j {
		t.Errorf("recent works are not newest first")
	}
	// a collection in a collection is listed on its collection's page,
	// not at the top
	if strings.Contains(p.Body, `href="/collections/`+string(f.child)+`"`) {
		t.Errorf("the home page lists the nested collection %s", f.child)
	}

	b.signIn("admin", adminPassword)
	// signed in, the administrator sees the private collection; the
	// recent works are the public ones, for everyone
	wantPage(t, b.get("/"), 200, []string{"Secret archive", "Private</span>", "Rhine map 1820"}, []string{"Unpublished survey"})

	de := newVisitor(t, f.e)
	de.lang = "de"
	wantPage(t, de.get("/"), 200, []string{`<html lang="de">`, "Sammlungen", "Neue Werke", ">Rheinatlanten</a>"}, []string{"Secret archive"})

	if p := b.get("/?after=garbage!"); p.Status != 400 {
		t.Errorf("a bad cursor: %d", p.Status)
	}
}

// TestUIHomePaging: the collections of the home page go on with a link
// to the next page, which lists the rest.
func TestUIHomePaging(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := context.Background()
	nrs := make([]*shelfmark.NewResource, homeCollections+3)
	for i := range nrs {
		nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: []shelfmark.Statement{readLit(shelfmark.NSDC+"title", fmt.Sprintf("Collection %02d", i))}}
	}
	if _, errs := e.repo.CreateResources(ctx, nrs); slices.ContainsFunc(errs, func(err error) bool { return err != nil }) {
		t.Fatal(errs)
	}
	b := newVisitor(t, e)
	p := b.get("/")
	m := regexp.MustCompile(`href="(/\?after=[^"]+)" rel="next"`).FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("no link to more collections: %.2000s", p.Body)
	}
	first := strings.Count(p.Body, `href="/collections/`)
	p2 := b.get(html.UnescapeString(m[1]))
	wantPage(t, p2, 200, []string{"Collection 00", "Collection 02"}, []string{"Collection 26", `rel="next"`})
	if first != homeCollections || strings.Count(p2.Body, `href="/collections/`) != 3 {
		t.Errorf("pages of %d and %d collections", first, strings.Count(p2.Body, `href="/collections/`))
	}
}

// TestUICollection: a collection page shows its title, description and
// members as the visitor may see them; a hidden collection is a 404 page,
// a deleted one a 410 page, a work's id leads to the work's page.
func TestUICollection(t *testing.T) {
	f := newReadFixture(t)
	b := newVisitor(t, f.e)
	path := "/collections/" + string(f.coll)
	p := b.get(path)
	wantPage(t, p, 200, []string{
		"<h1>Atlases &lt;of&gt; the Rhine</h1>", "<title>Atlases &lt;of&gt; the Rhine · Shelfmark</title>",
		"Maps of the river &lt;script&gt;alert(1)&lt;/script&gt;",
		`href="/works/` + string(f.work) + `">Rhine map 1820</a>`,
		`href="/collections/` + string(f.child) + `">Upper Rhine</a>`,
		`name="collection" value="` + string(f.coll) + `"`, // search in the collection
	}, []string{"Unpublished survey", string(f.private), "<script>alert", `rel="next"`})

	// a hidden collection is not found, as one that does not exist
	for _, id := range []shelfmark.ID{f.hiddenColl, "zzzzzzzzzz"} {
		p := b.get("/collections/" + string(id))
		wantPage(t, p, 404, []string{"Not found"}, []string{"Secret archive"})
	}
	if p := b.get("/collections/not%20an%20id"); p.Status != 404 {
		t.Errorf("a malformed id: %d", p.Status)
	}
	wantPage(t, b.get("/collections/"+string(f.goneColl)), 410, []string{"was deleted"}, nil)
	if p := b.get("/collections/" + string(f.work)); p.Status != 303 || p.Header.Get("Location") != "/works/"+string(f.work) {
		t.Errorf("a work's id: %d %q", p.Status, p.Header.Get("Location"))
	}
	if p := b.get(path + "?after=garbage!"); p.Status != 400 {
		t.Errorf("a bad cursor: %d", p.Status)
	}

	// signed in, the administrator sees the private work and collection
	admin := newVisitor(t, f.e)
	admin.signIn("admin", adminPassword)
	wantPage(t, admin.get(path), 200, []string{"Unpublished survey", "Private</span>"}, nil)
	wantPage(t, admin.get("/collections/"+string(f.hiddenColl)), 200, []string{"<h1>Secret archive</h1>"}, nil)

	de := newVisitor(t, f.e)
	de.lang = "de"
	wantPage(t, de.get(path), 200, []string{"<h1>Rheinatlanten</h1>", "In dieser Sammlung suchen", "Inhalt"}, nil)
}

// TestUICollectionPaging: members come in keyset pages linked by "next
// page"; following the links lists every member once, and a page deep in
// the collection runs the same statements as the first (rule R15).
func TestUICollectionPaging(t *testing.T) {
	e := newEnv(t, Options{})
	ctx := context.Background()
	coll, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection})
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	var ids []shelfmark.ID
	for len(ids) < n {
		nrs := make([]*shelfmark.NewResource, 500)
		for i := range nrs {
			vis := shelfmark.Public
			if (len(ids)+i)%10 == 9 {
				vis = shelfmark.Private // every tenth is hidden from anonymous
			}
			nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: vis, MemberOf: []shelfmark.ID{coll.ID},
				Metadata: []shelfmark.Statement{readLit(shelfmark.NSDC+"title", fmt.Sprintf("member %04d", len(ids)+i))}}
		}
		rs, errs := e.repo.CreateResources(ctx, nrs)
		for i, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, rs[i].ID)
		}
	}
	// the first pages, by their links
	b := newVisitor(t, e)
	next := regexp.MustCompile(`href="([^"]+)" rel="next"`)
	member := regexp.MustCompile(`>member (\d{4})</a>`)
	path := "/collections/" + string(coll.ID)
	var seen []string
	for page := 0; page < 3; page++ {
		p := b.get(path)
		wantPage(t, p, 200, nil, nil)
		ms := member.FindAllStringSubmatch(p.Body, -1)
		if len(ms) != collectionPageSize {
			t.Fatalf("page %d lists %d members", page+1, len(ms))
		}
		for _, m := range ms {
			if m[1][3] == '9' {
				t.Errorf("anonymous sees the private member %s", m[1])
			}
			seen = append(seen, m[1])
		}
		if base := "/collections/" + string(coll.ID); page > 0 && !strings.Contains(p.Body, `href="`+base+`">`) {
			t.Errorf("page %d has no link to the first page", page+1)
		}
		l := next.FindStringSubmatch(p.Body)
		if l == nil {
			t.Fatalf("page %d has no next link", page+1)
		}
		path = html.UnescapeString(l[1])
	}
	if s := slices.Clone(seen); len(slices.Compact(s)) != len(seen) || !slices.IsSorted(seen) {
		t.Errorf("members repeat or are out of order: %v", seen)
	}
	// the last page has no next link
	p := b.get("/collections/" + string(coll.ID) + "?after=" + string(ids[n-20]))
	wantPage(t, p, 200, []string{"member 1998"}, []string{`rel="next"`, "member 1999"})

	// R15: the statements of page 1 and of a page at 90% depth
	stmts := func(path string) []string {
		r := e.do("GET", path, nil, as("", "Accept", "text/html")...).want(t, 200)
		if !strings.Contains(string(r.Body), "member ") {
			t.Fatalf("%s lists no member", path)
		}
		return r.Stmts
	}
	first := stmts("/collections/" + string(coll.ID))
	deep := stmts("/collections/" + string(coll.ID) + "?after=" + string(ids[n*9/10]))
	if !slices.Equal(first, deep) {
		t.Errorf("page 1 ran %d statements, the page at 90%% %d:\n%s\n---\n%s", len(first), len(deep), strings.Join(first, "\n"), strings.Join(deep, "\n"))
	}
	t.Logf("a collection page runs %d statements at page 1 and at 90%% depth", len(first))
}

// addPageDocs indexes page texts of the fixture's work.
func (f *searchFixture) addPageDocs(t *testing.T, texts ...string) []shelfmark.ID {
	t.Helper()
	ctx := context.Background()
	var docs []shelfmark.SearchDoc
	var out []shelfmark.ID
	for _, text := range texts {
		r, err := f.e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: f.work})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r.ID)
		docs = append(docs, shelfmark.SearchDoc{Key: key(t, r.ID), Work: key(t, f.work), Kind: shelfmark.KindFileSet, Format: "PDF", Body: text})
	}
	if err := f.e.db.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestUISearch: the search page shows public hits with escaped,
// highlighted snippets, hits in a page's text linking to the page in its
// work, facets with counts that filter, and never a private work.
func TestUISearch(t *testing.T) {
	f := newSearchFixture(t)
	script := f.addPageDocs(t, "whales <script>alert('x')</script> ahoy")
	// the public work is in a private collection too: the collection
	// facet leaves it out, for everyone
	ctx := context.Background()
	hidden, err := f.e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection, Visibility: shelfmark.Private,
		Metadata: []shelfmark.Statement{readLit(shelfmark.NSDCTerms+"title", "Hidden shelf")}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.e.repo.AddMembers(ctx, hidden.ID, []shelfmark.ID{f.work}); err != nil {
		t.Fatal(err)
	}
	if err := shelfmark.NewSearchIndexer(f.e.db, shelfmark.IndexerOptions{}).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	b := newVisitor(t, f.e)
	p := b.get("/search?q=whales")
	work := string(f.work)
	// the book once, its pages counted and the best one opening the
	// viewer searching the book for the words
	wantPage(t, p, 200, []string{
		`value="whales"`, `aria-current="page">Search`,
		`href="/works/` + work + `">Whales &amp; &lt;whalers&gt;</a>`,
		"Found on 4 pages",
		`&amp;q=whales#page-`,
		"<mark>Whales</mark>",
		"Results: 1",
		`href="/search?format=PDF&amp;q=whales"`, // a facet filters
		`href="/search?collection=` + string(f.coll) + `&amp;q=whales">Logbooks</a>`,
		"Page text",
	}, []string{"Private whales", "Embargoed whales", string(f.private), "<script>alert", "<b>two", "Hidden shelf", string(hidden.ID)})
	if n := strings.Count(p.Body, `href="/works/`+work+`"`); n != 1 {
		t.Errorf("the book is listed %d times", n)
	}
	// a page's text speaks for its work when the record does not match;
	// indexed text is text, escaped
	p = b.get("/search?q=ahoy")
	wantPage(t, p, 200, []string{"&lt;script&gt;alert(", "<mark>ahoy</mark>", "Found on one page",
		`href="/works/` + work + `?page=` + string(script[0]) + `&amp;q=ahoy#page-` + string(script[0]) + `"`}, []string{"<script>alert"})
	wantPage(t, b.get("/search?q=two"), 200, []string{"&lt;b&gt;<mark>two</mark>&lt;/b&gt;", "Found on 3 pages"}, []string{"<b>two"})
	// ordered pages are listed by their numbers, in page order
	res, err := f.e.repo.FindResource(ctx, f.work)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.repo.SetOrder(ctx, f.work, []shelfmark.ID{script[0], f.pages[2], f.pages[1], f.pages[0]}, res.Version); err != nil {
		t.Fatal(err)
	}
	p = b.get("/search?q=whales")
	pageLink := func(id shelfmark.ID, n int) string {
		return `<a href="/works/` + work + `?page=` + string(id) + `&amp;q=whales#page-` + string(id) + `" aria-label="page ` + fmt.Sprint(n) + `">` + fmt.Sprint(n) + `</a>`
	}
	wantPage(t, p, 200, []string{"Found on pages\n" + pageLink(script[0], 1) + ", " + pageLink(f.pages[2], 2) + ", " + pageLink(f.pages[1], 3) + ", " + pageLink(f.pages[0], 4) + " · "}, nil)
	p = b.get("/search?q=ahoy")
	wantPage(t, p, 200, []string{"Found on page\n" + strings.ReplaceAll(pageLink(script[0], 1), "q=whales", "q=ahoy")}, nil)
	// a facet's link narrows the results
	p = b.get("/search?q=whales&format=TIFF")
	wantPage(t, p, 200, []string{"Results: 1", "Format: TIFF", `href="/search?q=whales">Remove`}, []string{`#page-` + string(f.pages[0]) + `"`})
	p = b.get("/search?q=whales&collection=" + string(f.coll))
	wantPage(t, p, 200, []string{"In collection: Logbooks", `name="collection" value="` + string(f.coll) + `"`}, nil)

	// signed in, search shows what the caller may read: to an
	// administrator, the private and the embargoed work too, and the
	// private collection in the facets
	admin := newVisitor(t, f.e)
	admin.signIn("admin", adminPassword)
	wantPage(t, admin.get("/search?q=whales"), 200, []string{"Private whales", "Embargoed whales", "Hidden shelf", "Results: 3"}, nil)

	// a private collection's title is not shown as a filter's name
	p = b.get("/search?q=whales&collection=" + string(f.private))
	wantPage(t, p, 200, []string{"Results: 0"}, []string{"Private whales"})

	// newest first: the order named and kept by the form (the order of
	// works is the storage conformance tests')
	p = b.get("/search?q=whales&sort=newest")
	wantPage(t, p, 200, []string{`<span aria-current="true">newest first</span>`, "The most recently added first.",
		`name="sort" value="newest"`, `href="/search?q=whales">relevance</a>`}, nil)
	wantPage(t, b.get("/search?q=whales"), 200, []string{`<span aria-current="true">relevance</span>`, `href="/search?q=whales&amp;sort=newest">newest first</a>`}, nil)

	// by date, either way, the order named
	wantPage(t, b.get("/search?q=whales&sort=date-desc"), 200, []string{`<span aria-current="true">date, latest first</span>`,
		"the latest first; works without a date last", `href="/search?q=whales&amp;sort=date">date, earliest first</a>`}, nil)
	wantPage(t, b.get("/search?q=whales&sort=title"), 200, []string{`<span aria-current="true">title</span>`, "A to Z"}, nil)

	// no words: everything the reader may read, newest first, with the
	// facets; newest first or by date, but no relevance to sort by
	p = b.get("/search")
	wantPage(t, p, 200, []string{`name="q"`, "Results: ", "The most recently added first.", `href="/works/` + work + `">`, `href="/search?kind=work"`,
		`<span aria-current="true">newest first</span>`, `href="/search?sort=date">date, earliest first</a>`},
		[]string{"Private whales", "Embargoed whales", ">relevance<", "#page-"})
	wantPage(t, b.get("/search?sort=date"), 200, []string{`<span aria-current="true">date, earliest first</span>`, `href="/search?">newest first</a>`,
		"the earliest first"}, nil)
	// no words but a collection: what the collection holds
	p = b.get("/search?q=+&collection=" + string(f.coll))
	wantPage(t, p, 200, []string{`name="collection" value="` + string(f.coll) + `"`, "In collection: Logbooks", "Results: 1",
		"<title>In the collection Logbooks · Shelfmark</title>", "Newest members first"}, []string{"Private whales", "<mark>"})

	// bad input: the form again with the engine's message, 400
	for _, q := range []string{"q=*", "q=-+-", "q=whales&sort=author", "q=whales&after=garbage", "q=whales&kind=file", "q=whales&collection=not+an+id",
		"q=" + strings.Repeat("a+", shelfmark.MaxSearchTerms+1)} {
		p := b.get("/search?" + q)
		wantPage(t, p, 400, []string{`class="error-message"`, `name="q"`}, []string{"Results:"})
	}
	if p := b.get("/search?q=*"); !strings.Contains(p.Body, `value="*"`) || !strings.Contains(p.Body, "has no words") {
		t.Errorf("a query without words: %.2000s", p.Body)
	}

	de := newVisitor(t, f.e)
	de.lang = "de"
	wantPage(t, de.get("/search?q=whales"), 200, []string{"Treffer: 1", "Seitentext", "Suchbegriffe", "Gefunden auf den Seiten"}, nil)
}

// TestUISearchPaging: results come in keyset pages through the search
// cursor, a work at a time; a page of 20 works found in their pages' text
// runs the statements a page of one does (no statement per hit).
func TestUISearchPaging(t *testing.T) {
	f := newSearchFixture(t)
	works := f.addWorks(t, shelfmark.DefaultSearchLimit+5, "kraken sighting number %d")
	f.addWorks(t, 1, "a lone narwhal")
	b := newVisitor(t, f.e)
	hit := regexp.MustCompile(`<h3><a href="/works/([^"?#]+)">`)
	p := b.get("/search?q=kraken")
	wantPage(t, p, 200, []string{"Results: 25", `rel="next"`, "Found on one page"}, nil)
	page1 := hit.FindAllStringSubmatch(p.Body, -1)
	l := regexp.MustCompile(`href="(/search\?[^"]+)" rel="next"`).FindStringSubmatch(p.Body)
	if len(page1) != shelfmark.DefaultSearchLimit || l == nil {
		t.Fatalf("page 1: %d hits, next %v", len(page1), l)
	}
	p = b.get(html.UnescapeString(l[1]))
	wantPage(t, p, 200, []string{`href="/search?q=kraken">First page`, `value="kraken"`}, []string{`rel="next"`})
	page2 := hit.FindAllStringSubmatch(p.Body, -1)
	if len(page2) != 5 {
		t.Fatalf("page 2: %d hits", len(page2))
	}
	all := map[string]bool{}
	for _, m := range slices.Concat(page1, page2) {
		all[m[1]] = true
	}
	for _, w := range works {
		if !all[string(w)] {
			t.Errorf("work %s is on neither page", w)
		}
	}
	if len(all) != 25 {
		t.Errorf("the pages hold %d distinct works, want 25", len(all))
	}

	stmts := func(q string) []string {
		r := f.e.do("GET", "/search?q="+q, nil, as("", "Accept", "text/html")...).want(t, http.StatusOK)
		r.wantNoWrites(t)
		return r.Stmts
	}
	many, one := stmts("kraken"), stmts("narwhal")
	if len(many) != len(one) {
		t.Errorf("a page of 20 hits ran %d statements, a page of one %d:\n%s\n---\n%s", len(many), len(one), strings.Join(many, "\n"), strings.Join(one, "\n"))
	}
	t.Logf("a search page runs %d statements for 20 hits and for one", len(many))
}

// addWorks makes n public works of one page each, the page's text
// format with the work's number, indexed; it returns the works.
func (f *searchFixture) addWorks(t *testing.T, n int, format string) []shelfmark.ID {
	t.Helper()
	ctx := context.Background()
	nrs := make([]*shelfmark.NewResource, n)
	for i := range nrs {
		nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{readLit(shelfmark.NSDC+"title", fmt.Sprint("Volume ", i))}}
	}
	works, errs := f.e.repo.CreateResources(ctx, nrs)
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	pages := make([]*shelfmark.NewResource, n)
	for i, w := range works {
		pages[i] = &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}
	}
	made, errs := f.e.repo.CreateResources(ctx, pages)
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	var docs []shelfmark.SearchDoc
	var out []shelfmark.ID
	for i, pg := range made {
		out = append(out, works[i].ID)
		docs = append(docs, shelfmark.SearchDoc{Key: key(t, pg.ID), Work: key(t, works[i].ID), Kind: shelfmark.KindFileSet, Format: "PDF", Body: fmt.Sprintf(format, i)})
	}
	if err := shelfmark.NewSearchIndexer(f.e.db, shelfmark.IndexerOptions{}).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.e.db.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestUISearchEstimated: above shelfmark.SearchWindow matches the total
// and the facet counts say "about"; the pages still reach every hit once,
// across the engine's windows.
func TestUISearchEstimated(t *testing.T) {
	f := newSearchFixture(t)
	const n = shelfmark.SearchWindow + 234
	works := f.addWorks(t, n, "kelp, line %d")
	b := newVisitor(t, f.e)
	p := b.get("/search?q=kelp")
	wantPage(t, p, 200, []string{"Results: about ", `<span class="count">about `}, nil)
	hit := regexp.MustCompile(`<h3><a href="/works/([^"?#]+)">`)
	next := regexp.MustCompile(`href="(/search\?[^"]+)" rel="next"`)
	seen := map[string]bool{}
	for pages := 0; ; pages++ {
		if pages > n {
			t.Fatal("paging does not end")
		}
		for _, m := range hit.FindAllStringSubmatch(p.Body, -1) {
			if seen[m[1]] {
				t.Fatalf("%s twice", m[1])
			}
			seen[m[1]] = true
		}
		l := next.FindStringSubmatch(p.Body)
		if l == nil {
			break
		}
		p = b.get(html.UnescapeString(l[1]))
		wantPage(t, p, 200, []string{"First page"}, nil)
	}
	if len(seen) != n {
		t.Errorf("%d works over every page, want %d", len(seen), n)
	}
	for _, w := range works {
		if !seen[string(w)] {
			t.Fatalf("work %s is on no page", w)
		}
	}
}

// TestUICollectionFacets: a collection page's sidebar counts the kinds and
// formats of what the collection holds in public view (a private member's
// page is counted for no one), each value leading to the search page that
// lists it; "about" above shelfmark.SearchWindow documents, with the same
// statements as a small collection's page.
func TestUICollectionFacets(t *testing.T) {
	f := newSearchFixture(t)
	ctx := context.Background()
	// a private member with a page in JPEG
	hidden, err := f.e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private,
		MemberOf: []shelfmark.ID{f.coll}, Metadata: []shelfmark.Statement{readLit(shelfmark.NSDC+"title", "Hidden logbook")}})
	if err != nil {
		t.Fatal(err)
	}
	hiddenPage, err := f.e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: hidden.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := shelfmark.NewSearchIndexer(f.e.db, shelfmark.IndexerOptions{}).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if err := f.e.db.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.PutSearchDocs(ctx, []shelfmark.SearchDoc{{Key: key(t, hiddenPage.ID), Work: key(t, hidden.ID), Kind: shelfmark.KindFileSet,
			Format: "JPEG", Body: "hidden text"}})
	}); err != nil {
		t.Fatal(err)
	}
	coll := string(f.coll)
	path := "/collections/" + coll
	facet := func(href, label, count string) string {
		return `<a href="/search?collection=` + coll + `&amp;` + href + `">` + label + `</a> <span class="count">` + count + `</span>`
	}
	b := newVisitor(t, f.e)
	p := b.get(path)
	wantPage(t, p, 200, []string{
		"What it holds",
		facet("kind=fileset", "Page text", "3"), facet("kind=work", "Work", "1"),
		facet("format=PDF", "PDF", "2"), facet("format=TIFF", "TIFF", "1"),
		`href="/search?collection=` + coll + `">List all of it</a>`,
		`id="within-q"`, // the search box stays
	}, []string{"JPEG", "about"})
	// the administrator sees the private member in the list, and the
	// counts are search's for the administrator: the private member's
	// page too
	admin := newVisitor(t, f.e)
	admin.signIn("admin", adminPassword)
	wantPage(t, admin.get(path), 200, []string{"Hidden logbook", facet("format=PDF", "PDF", "2"), facet("format=JPEG", "JPEG", "1")}, nil)

	// a facet's link lists what it counts
	p = b.get("/search?collection=" + coll + "&format=PDF")
	wantPage(t, p, 200, []string{"Results: 2", "Format: PDF", "#page-" + string(f.pages[0]), "#page-" + string(f.pages[1])},
		[]string{"#page-" + string(f.pages[2]), "hidden text"})
	p = b.get("/search?collection=" + coll + "&kind=work")
	wantPage(t, p, 200, []string{"Results: 1", `href="/works/` + string(f.work) + `">Whales &amp; &lt;whalers&gt;</a>`}, []string{"#page-"})

	de := newVisitor(t, f.e)
	de.lang = "de"
	wantPage(t, de.get(path), 200, []string{"Was sie enthält", facet("kind=fileset", "Seitentext", "3")}, nil)

	// above SearchWindow documents, the counts are estimates, and the page
	// runs the statements the small collection's does
	small := f.e.do("GET", path, nil, as("", "Accept", "text/html")...).want(t, http.StatusOK)
	big, err := f.e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection,
		Metadata: []shelfmark.Statement{readLit(shelfmark.NSDC+"title", "Big")}})
	if err != nil {
		t.Fatal(err)
	}
	var nrs []*shelfmark.NewResource
	for range shelfmark.SearchWindow + 100 {
		nrs = append(nrs, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{big.ID}})
	}
	works, errs := f.e.repo.CreateResources(ctx, nrs)
	var docs []shelfmark.SearchDoc
	for i, w := range works {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		docs = append(docs, shelfmark.SearchDoc{Key: key(t, w.ID), Work: key(t, w.ID), Kind: shelfmark.KindWork, Title: "w"},
			shelfmark.SearchDoc{Key: 1<<40 + key(t, w.ID), Work: key(t, w.ID), Kind: shelfmark.KindFileSet, Format: "TIFF", Body: "p"})
	}
	if err := f.e.db.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) }); err != nil {
		t.Fatal(err)
	}
	large := f.e.do("GET", "/collections/"+string(big.ID), nil, as("", "Accept", "text/html")...).want(t, http.StatusOK)
	if body := string(large.Body); !strings.Contains(body, `">TIFF</a> <span class="count">about `) {
		t.Errorf("a collection of %d documents: no estimate: %s", 2*len(works), body)
	}
	if len(small.Stmts) != len(large.Stmts) {
		t.Errorf("the page of a small collection ran %d statements, one of %d members %d:\n%s\n---\n%s", len(small.Stmts), len(works), len(large.Stmts),
			strings.Join(small.Stmts, "\n"), strings.Join(large.Stmts, "\n"))
	}
	t.Logf("a collection page with its facets runs %d statements for 2 members and for %d", len(small.Stmts), len(works))

	// the search page pages through a large collection's holdings
	next := regexp.MustCompile(`href="(/search\?[^"]+)" rel="next"`)
	p = b.get("/search?collection=" + string(big.ID))
	wantPage(t, p, 200, []string{"Results: about "}, nil)
	l := next.FindStringSubmatch(p.Body)
	if l == nil {
		t.Fatalf("the holdings of %d works have no next page", len(works))
	}
	p = b.get(html.UnescapeString(l[1]))
	wantPage(t, p, 200, []string{`rel="next"`, `href="/search?collection=` + string(big.ID) + `">First page`}, nil)
}

// TestUIWorkValuesForReaders: the work page names a language given by its
// code in the page's language (the code kept in a data element), and a
// creator and a subject link to a phrase search for them in their field,
// which finds the work; once dated, the work's decade is a facet of a
// search that finds it, in each language.
func TestUIWorkValuesForReaders(t *testing.T) {
	f := newReadFixture(t)
	w, err := f.e.repo.CreateResource(context.Background(), &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{
		readLit(shelfmark.NSDC+"title", "Tide tables"), readLit(shelfmark.NSDC+"language", "eng"),
		readLit(shelfmark.NSDC+"creator", "Hydrographic Office"), readLit(shelfmark.NSDC+"subject", "Tides")}})
	if err != nil {
		t.Fatal(err)
	}
	b := newVisitor(t, f.e)
	wantPage(t, b.get("/works/"+string(w.ID)), 200, []string{`<data value="eng">English</data>`,
		`<a href="/search?q=creator%3A%22Hydrographic&#43;Office%22" rel="nofollow">Hydrographic Office</a>`, `<a href="/search?q=subject%3A%22Tides%22" rel="nofollow">Tides</a>`}, []string{">eng<"})
	// the links find the work, by its creator and by its subject
	if err := shelfmark.NewSearchIndexer(f.e.db, shelfmark.IndexerOptions{}).CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"creator%3A%22Hydrographic+Office%22", "subject%3A%22Tides%22"} {
		wantPage(t, b.get("/search?q="+q), 200, []string{"Results: 1", `href="/works/` + string(w.ID) + `"`}, nil)
	}
	// the decade facet: a dated work's decade, linking to the search with
	// its date: term, shown as in force once it is
	if _, err := f.e.repo.UpdateResource(context.Background(), w.ID, shelfmark.ResourceUpdate{
		Add: []shelfmark.Statement{readLit(shelfmark.NSDC+"date", "1893-05")}}); err != nil {
		t.Fatal(err)
	}
	if err := shelfmark.NewSearchIndexer(f.e.db, shelfmark.IndexerOptions{}).CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantPage(t, b.get("/search?q=tide"), 200, []string{`<h3 id="facet-decade">Decade</h3>`, `<a href="/search?q=tide&#43;date%3A1890..1899">1890s</a> <span class="count">1</span>`}, nil)
	wantPage(t, b.get("/search?q=tide+date%3A1890..1899"), 200, []string{"Results: 1", `<span aria-current="true">1890s</span>`}, nil)

	de := newVisitor(t, f.e)
	de.lang = "de"
	wantPage(t, de.get("/works/"+string(w.ID)), 200, []string{`<data value="eng">Englisch</data>`}, nil)
	wantPage(t, de.get("/search?q=tide"), 200, []string{`<h3 id="facet-decade">Jahrzehnt</h3>`, ">1890er</a>"}, nil)
}
