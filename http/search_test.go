package http

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// searchBody is the JSON of GET /api/v1/search, with the presence of total
// and facets kept.
type searchBody struct {
	Hits []struct {
		ID      shelfmark.ID `json:"id"`
		Work    shelfmark.ID `json:"work"`
		Kind    string       `json:"kind"`
		Format  string       `json:"format"`
		Title   string       `json:"title"`
		Snippet string       `json:"snippet"`
		Score   float64      `json:"score"`
		Matches *int64       `json:"matches"`
		Pages   []struct {
			ID     shelfmark.ID `json:"id"`
			Format string       `json:"format"`
			Score  float64      `json:"score"`
		} `json:"pages"`
	} `json:"hits"`
	Total     *int64 `json:"total"`
	Estimated *bool  `json:"estimated"`
	Facets    *struct {
		Collection []facetJSON `json:"collection"`
		Kind       []facetJSON `json:"kind"`
		Format     []facetJSON `json:"format"`
	} `json:"facets"`
	Next string `json:"next"`
}

// searchFixture is a small repository, indexed: a public collection with
// a public work of three pages, a private work, an embargoed one.
type searchFixture struct {
	e                   *testEnv
	coll, work, private shelfmark.ID
	pages               []shelfmark.ID
}

func newSearchFixture(t *testing.T) *searchFixture {
	t.Helper()
	e := newEnv(t, Options{})
	ctx := context.Background()
	f := &searchFixture{e: e}
	create := func(nr *shelfmark.NewResource) shelfmark.ID {
		t.Helper()
		r, err := e.repo.CreateResource(ctx, nr)
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	lit := func(p, s string) shelfmark.Statement {
		return shelfmark.Statement{Predicate: p, Object: shelfmark.NewLiteral(s)}
	}
	until := time.Now().Add(24 * time.Hour)
	f.coll = create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: []shelfmark.Statement{lit(shelfmark.NSDCTerms+"title", "Logbooks")}})
	f.work = create(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{f.coll},
		Metadata: []shelfmark.Statement{lit(shelfmark.NSDC+"title", "Whales & <whalers>"), lit(shelfmark.NSDC+"description", "A voyage.")}})
	f.private = create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private,
		Metadata: []shelfmark.Statement{lit(shelfmark.NSDC+"title", "Private whales")}})
	create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Embargo: &until,
		Metadata: []shelfmark.Statement{lit(shelfmark.NSDC+"title", "Embargoed whales")}})
	var docs []shelfmark.SearchDoc
	for i := 0; i < 3; i++ {
		p := create(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: f.work})
		f.pages = append(f.pages, p)
		format := "PDF"
		if i == 2 {
			format = "TIFF"
		}
		docs = append(docs, shelfmark.SearchDoc{Key: key(t, p), Work: key(t, f.work), Kind: shelfmark.KindFileSet, Format: format,
			Body: fmt.Sprintf("Page %d: <b>two</b> whales & a \"ship\" 'here'.", i+1)})
	}
	if err := shelfmark.NewSearchIndexer(e.db, shelfmark.IndexerOptions{}).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.db.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) }); err != nil {
		t.Fatal(err)
	}
	return f
}

func key(t *testing.T, id shelfmark.ID) int64 {
	t.Helper()
	k, err := shelfmark.LegacyIDCodec().Key(id) // the test server's codec
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func (f *searchFixture) search(t *testing.T, query string) (*searchBody, *response) {
	t.Helper()
	r := f.e.do("GET", "/api/v1/search?"+query, nil, as("")...).want(t, http.StatusOK)
	var b searchBody
	r.json(t, &b)
	r.wantNoWrites(t)
	return &b, r
}

func TestSearch(t *testing.T) {
	f := newSearchFixture(t)
	b, r := f.search(t, "q=whales")
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := r.Header.Get("Cache-Control"); cc == "no-store" {
		t.Errorf("an anonymous search is no-store")
	}
	// an administrator's search holds the private and the embargoed work
	// too, and no cache keeps it
	var ab searchBody
	ar := f.e.do("GET", "/api/v1/search?q=whales", nil).want(t, http.StatusOK)
	ar.json(t, &ab)
	var titles []string
	for _, h := range ab.Hits {
		titles = append(titles, h.Title)
	}
	if !slices.Contains(titles, "Private whales") || !slices.Contains(titles, "Embargoed whales") || *ab.Total != *b.Total+2 {
		t.Errorf("the administrator's search: %q, total %d", titles, *ab.Total)
	}
	if cc, vary := ar.Header.Get("Cache-Control"), strings.Join(ar.Header.Values("Vary"), ", "); cc != "no-store" || !strings.Contains(vary, "Authorization") {
		t.Errorf("the administrator's search: Cache-Control %q, Vary %q", cc, vary)
	}
	// a signed-in caller's search runs one statement more than an
	// anonymous one (the caller's grants); an administrator's none more
	tok := f.e.addUser("reader", shelfmark.ScopeRead)
	f.e.do("GET", "/api/v1/search?q=whales", nil, as(tok)...).want(t, http.StatusOK) // the token checked once, and cached
	dr := f.e.do("GET", "/api/v1/search?q=whales", nil, as(tok)...).want(t, http.StatusOK)
	if len(dr.Stmts) != len(r.Stmts)+1 || len(ar.Stmts) != len(r.Stmts) {
		t.Errorf("statements: anonymous %d, signed in %d, administrator %d:\n%s", len(r.Stmts), len(dr.Stmts), len(ar.Stmts), strings.Join(dr.Stmts, "\n"))
	}
	t.Logf("a search page runs %d statements anonymous, %d signed in, %d as an administrator", len(r.Stmts), len(dr.Stmts), len(ar.Stmts))
	var ids []shelfmark.ID
	for _, h := range b.Hits {
		ids = append(ids, h.ID)
	}
	want := append([]shelfmark.ID{f.work}, f.pages...)
	if len(ids) != 4 || ids[0] != f.work || !slices.Equal(slices.Sorted(slices.Values(ids)), slices.Sorted(slices.Values(want))) {
		t.Fatalf("hits %v, want the work first, then its pages %v", ids, f.pages)
	}
	w := b.Hits[0]
	if w.Work != f.work || w.Kind != "work" || w.Format != "" || w.Title != "Whales & <whalers>" || w.Score <= b.Hits[1].Score {
		t.Fatalf("work hit %+v", w)
	}
	if w.Snippet != "<mark>Whales</mark> &amp; &lt;whalers&gt;" {
		t.Fatalf("work snippet %q", w.Snippet)
	}
	for _, h := range b.Hits[1:] {
		if h.Work != f.work || h.Kind != "fileset" || h.Title != "Whales & <whalers>" {
			t.Fatalf("page hit %+v", h)
		}
		if !strings.Contains(h.Snippet, "&lt;b&gt;two&lt;/b&gt; <mark>whales</mark> &amp; a &#34;ship&#34; &#39;here&#39;.") {
			t.Fatalf("page snippet %q", h.Snippet)
		}
	}
	if b.Total == nil || *b.Total != 4 || b.Estimated == nil || *b.Estimated || b.Next != "" || r.Header.Get("Link") != "" {
		t.Fatalf("total %v, estimated %v, next %q, Link %q", b.Total, b.Estimated, b.Next, r.Header.Get("Link"))
	}
	if b.Facets == nil ||
		!slices.Equal(b.Facets.Collection, []facetJSON{{Value: string(f.coll), Count: 4}}) ||
		!slices.Equal(b.Facets.Kind, []facetJSON{{Value: "fileset", Count: 3}, {Value: "work", Count: 1}}) ||
		!slices.Equal(b.Facets.Format, []facetJSON{{Value: "PDF", Count: 2}, {Value: "TIFF", Count: 1}}) {
		t.Fatalf("facets %+v", b.Facets)
	}

	// filters, phrases, prefixes; nothing private or embargoed
	for q, want := range map[string]int{
		"q=whales&kind=fileset":                       3,
		"q=whales&kind=work":                          1,
		"q=whales&kind=collection":                    0,
		"q=whales&format=TIFF":                        1,
		"q=whales&collection=" + string(f.coll):       4,
		"q=whales&collection=" + string(f.work):       0,
		"q=" + url.QueryEscape(`"a ship"`):            3,
		"q=" + url.QueryEscape(`"ship a"`):            0,
		"q=whal*&kind=work":                           1,
		"q=logbooks":                                  1,
		"q=private":                                   0,
		"q=embargoed":                                 0,
		"q=" + url.QueryEscape(`NOT (whales) AND "a`): 0,
		"q=" + url.QueryEscape(`whales:* -"ship"`):    1, // the record: every page says ship
	} {
		b, _ := f.search(t, q)
		if len(b.Hits) != want || *b.Total != int64(want) {
			t.Errorf("%s: %d hits, total %d, want %d", q, len(b.Hits), *b.Total, want)
		}
	}
	if b, _ := f.search(t, "q=whales&kind=fileset"); !slices.Equal(b.Facets.Kind, []facetJSON{{Value: "fileset", Count: 3}}) ||
		len(b.Facets.Collection) != 1 {
		t.Errorf("facets of a filtered search: %+v", b.Facets)
	}
	if b, _ := f.search(t, "q=zebra"); b.Hits == nil || len(b.Hits) != 0 || b.Facets == nil || b.Facets.Kind == nil || *b.Total != 0 {
		t.Errorf("no hits: %+v", b)
	}
}

func TestSearchPaging(t *testing.T) {
	f := newSearchFixture(t)
	first, r := f.search(t, "q=whales&limit=3")
	if len(first.Hits) != 3 || first.Next == "" || first.Total == nil || *first.Total != 4 || first.Facets == nil {
		t.Fatalf("first page: %d hits, next %q, total %v, facets %v", len(first.Hits), first.Next, first.Total, first.Facets)
	}
	if link := r.Header.Get("Link"); link != `</api/v1/search?cursor=`+first.Next+`&limit=3&q=whales>; rel="next"` {
		t.Fatalf("Link %q", link)
	}
	second, r := f.search(t, "q=whales&limit=3&cursor="+url.QueryEscape(first.Next))
	if len(second.Hits) != 1 || second.Next != "" || r.Header.Get("Link") != "" {
		t.Fatalf("second page: %d hits, next %q", len(second.Hits), second.Next)
	}
	// later pages carry neither total nor facets
	if !strings.Contains(string(r.Body), `"hits"`) || strings.Contains(string(r.Body), `"total"`) || strings.Contains(string(r.Body), `"facets"`) {
		t.Fatalf("second page body %s", r.Body)
	}
	seen := map[shelfmark.ID]bool{}
	for _, h := range append(first.Hits, second.Hits...) {
		if seen[h.ID] {
			t.Fatalf("%s twice", h.ID)
		}
		seen[h.ID] = true
	}
	if len(seen) != 4 {
		t.Fatalf("%d hits over two pages", len(seen))
	}
	// the whole list in pages of one
	var walked []shelfmark.ID
	for cursor, n := "", 0; ; n++ {
		if n > 10 {
			t.Fatal("paging does not end")
		}
		b, _ := f.search(t, "q=whales&limit=1&cursor="+url.QueryEscape(cursor))
		for _, h := range b.Hits {
			walked = append(walked, h.ID)
		}
		if b.Next == "" {
			break
		}
		cursor = b.Next
	}
	var all []shelfmark.ID
	for _, h := range append(first.Hits, second.Hits...) {
		all = append(all, h.ID)
	}
	if !slices.Equal(walked, all) {
		t.Fatalf("pages of one %v, pages of three %v", walked, all)
	}
}

func TestSearchCursorRoundTrip(t *testing.T) {
	for _, c := range []shelfmark.SearchCursor{{Score: 0, Key: 1}, {Score: -1.2345678901234567e-300, Key: shelfmark.MaxKey},
		{Score: 0.1 + 0.2, Key: 42}, {Score: float64(float32(0.3)), Key: 7}, {Window: 99, Score: 1.5, Key: 42},
		{Window: shelfmark.MaxKey}} {
		got, err := decodeSearchCursor(encodeSearchCursor(c))
		if err != nil || *got != c {
			t.Fatalf("cursor %+v came back as %+v, %v", c, got, err)
		}
	}
	// a token of version 1 (before windows) is a position in the first
	// window
	v1 := make([]byte, 17)
	v1[0] = 1
	binary.BigEndian.PutUint64(v1[1:9], math.Float64bits(2.5))
	binary.BigEndian.PutUint64(v1[9:], 42)
	if got, err := decodeSearchCursor(base64.RawURLEncoding.EncodeToString(v1)); err != nil || *got != (shelfmark.SearchCursor{Score: 2.5, Key: 42}) {
		t.Fatalf("a version 1 cursor: %+v, %v", got, err)
	}
}

// TestSearchEstimated: a word in more documents than one window gives an
// estimated total on the first page, and pages through every hit once.
func TestSearchEstimated(t *testing.T) {
	f := newSearchFixture(t)
	ctx := context.Background()
	const n = shelfmark.SearchWindow + 234
	var docs []shelfmark.SearchDoc
	for i := 0; i < n; i++ {
		docs = append(docs, shelfmark.SearchDoc{Key: int64(100000 + i), Work: key(t, f.work), Kind: shelfmark.KindFileSet, Format: "PDF",
			Body: fmt.Sprintf("kelp, line %d", i)})
	}
	if err := f.e.db.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) }); err != nil {
		t.Fatal(err)
	}
	b, _ := f.search(t, "q=kelp&limit=100")
	if b.Estimated == nil || !*b.Estimated || b.Total == nil || *b.Total <= shelfmark.SearchWindow || b.Facets == nil || len(b.Facets.Format) != 1 {
		t.Fatalf("first page: total %v, estimated %v, facets %+v", b.Total, b.Estimated, b.Facets)
	}
	seen := map[shelfmark.ID]bool{}
	for pages := 0; ; pages++ {
		if pages > n {
			t.Fatal("paging does not end")
		}
		for _, h := range b.Hits {
			if seen[h.ID] {
				t.Fatalf("%s twice", h.ID)
			}
			seen[h.ID] = true
		}
		if b.Next == "" {
			break
		}
		if pages > 0 && (b.Total != nil || b.Estimated != nil) {
			t.Fatalf("page %d has a total", pages)
		}
		b, _ = f.search(t, "q=kelp&limit=100&cursor="+url.QueryEscape(b.Next))
	}
	if len(seen) != n {
		t.Fatalf("%d hits over every page, want %d", len(seen), n)
	}
}

func TestSearchErrors(t *testing.T) {
	f := newSearchFixture(t)
	raw := func(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	good := encodeSearchCursor(shelfmark.SearchCursor{Score: 1, Key: 5})
	nan := make([]byte, 17)
	nan[0] = 1
	copy(nan[1:], []byte{0x7f, 0xf8, 0, 0, 0, 0, 0, 1})
	for _, q := range []string{
		"q=*", "q=%22%22", "q=*&sort=newest", "q=whales&sort=author", "q=whales&sort=" + strings.Repeat("s", 100), "q=-%20(%20)", "q=" + url.QueryEscape(strings.Repeat("w ", 33)),
		"q=whales&limit=0", "q=whales&limit=101", "q=whales&limit=x", "q=whales&limit=-1",
		"q=whales&kind=file-set", "q=whales&group=page", "q=whales&group=" + strings.Repeat("g", 100), "q=whales&kind=" + strings.Repeat("k", 100),
		"q=whales&collection=nope", "q=whales&collection=" + string(f.coll)[:8] + "x",
		"q=whales&cursor=!!!", "q=whales&cursor=" + good[:len(good)-2], "q=whales&cursor=" + good + "AA",
		"q=whales&cursor=" + raw(make([]byte, 17)), "q=whales&cursor=" + raw(nan), "q=whales&cursor=" + raw(append([]byte{2}, make([]byte, 16)...)),
		"q=whales&cursor=" + raw(append([]byte{3}, make([]byte, 24)...)), "q=whales&cursor=" + raw(append([]byte{2}, make([]byte, 24)...)),
		"q=whales&cursor=" + encodeSearchCursor(shelfmark.SearchCursor{Window: -1, Key: 5}),
		"q=whales&cursor=" + encodeSearchCursor(shelfmark.SearchCursor{Key: -5, Window: 9}),
		"q=date:soon", "q=date:0..12000", "q=whales+title:", "q=date:185*",
	} {
		r := f.e.do("GET", "/api/v1/search?"+q, nil)
		r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
		r.wantNoStatements(t)
	}
	f.e.do("POST", "/api/v1/search?q=whales", nil).wantError(t, http.StatusMethodNotAllowed, EMETHOD)
	// the body of an error is JSON like any other
	r := f.e.do("GET", "/api/v1/search?q=*", nil)
	var eb map[string]any
	if err := json.Unmarshal(r.Body, &eb); err != nil || !strings.Contains(eb["message"].(string), "no words") {
		t.Fatalf("error body %s", r.Body)
	}
}

// TestSearchSort: sort=newest lists the hits newest first (the pages,
// made after their work, from the last, then the work); an order that is
// not offered is 400, naming those that are.
func TestSearchSort(t *testing.T) {
	f := newSearchFixture(t)
	b, _ := f.search(t, "q=whales&sort=newest")
	var ids []shelfmark.ID
	for _, h := range b.Hits {
		ids = append(ids, h.ID)
	}
	if want := []shelfmark.ID{f.pages[2], f.pages[1], f.pages[0], f.work}; !slices.Equal(ids, want) {
		t.Fatalf("newest first: %v, want %v", ids, want)
	}
	// by date: the pages have their work's date (none here: all last, by
	// key), and the date sorts are offered
	b, _ = f.search(t, "q=whales&sort=date-desc")
	if len(b.Hits) != 4 || b.Hits[0].Score != shelfmark.SearchUndated || b.Hits[0].ID != f.work {
		t.Fatalf("by date: %+v", b.Hits)
	}
	r := f.e.do("GET", "/api/v1/search?q=whales&sort=author", nil, as("")...).want(t, http.StatusBadRequest)
	if !strings.Contains(string(r.Body), "relevance, newest, date, date-desc, title") {
		t.Errorf("an unknown sort: %s", r.Body)
	}
}

// TestSearchGroup: group=work gives the book once, with the number of its
// matching pages and each of them (id, format), the total counting works;
// without it the same query lists the record and every page.
func TestSearchGroup(t *testing.T) {
	f := newSearchFixture(t)
	flat, _ := f.search(t, "q=whales")
	if len(flat.Hits) != 4 || flat.Hits[0].Matches != nil || flat.Hits[0].Pages != nil {
		t.Fatalf("ungrouped: %d hits (the record and three pages), first %+v", len(flat.Hits), flat.Hits[0])
	}
	b, r := f.search(t, "q=whales&group=work")
	if len(b.Hits) != 1 || b.Total == nil || *b.Total != 1 {
		t.Fatalf("grouped: %d hits, total %v; want the book once: %s", len(b.Hits), b.Total, r.Body)
	}
	h := b.Hits[0]
	if h.ID != f.work || h.Work != f.work || h.Kind != "work" || h.Matches == nil || *h.Matches != 3 || len(h.Pages) != 3 {
		t.Fatalf("the book: %s", r.Body)
	}
	var pages []shelfmark.ID
	for _, p := range h.Pages {
		pages = append(pages, p.ID)
		if p.Format == "" {
			t.Fatalf("a page without its format: %s", r.Body)
		}
	}
	slices.Sort(pages)
	if want := slices.Sorted(slices.Values(f.pages)); !slices.Equal(pages, want) {
		t.Fatalf("pages %v, want %v", pages, want)
	}
	// the title ranks the record first: its snippet speaks for the book
	if !strings.Contains(h.Snippet, "<mark>Whales</mark>") {
		t.Fatalf("the book's snippet: %q", h.Snippet)
	}
	if c := b.Facets.Collection; len(c) != 1 || c[0].Value != string(f.coll) || c[0].Count != 1 {
		t.Fatalf("the collection facet counts works: %+v", c)
	}
	// without words: the works' records only
	b, r = f.search(t, "group=work")
	for _, h := range b.Hits {
		if h.Kind == "fileset" {
			t.Fatalf("everything, grouped, lists a page: %s", r.Body)
		}
	}
}
