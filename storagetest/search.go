package storagetest

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// Full-text search (search.go, indexer.go): the documents, queries over
// them with visibility joined at query time, and the SearchIndexer that
// keeps the metadata documents current.

// searchCorpus is a repository with documents of every visibility.
type searchCorpus struct {
	e   *env
	now time.Time
	// collections: public, private
	pubColl, privColl int64
	// works: public in pubColl; public body-only match, in both
	// collections; private; embargoed until next year; embargo lapsed
	// yesterday; public, deleted during the test; public with "whaling"
	pub, bodyOnly, priv, embFuture, embPast, gone, whaling int64
	// pages (file sets) of pub, and one of priv
	pages    []int64
	privPage int64
	// the page of gone
	goneKid int64
}

func metadata(titles []string, rest ...string) []shelfmark.Statement {
	var out []shelfmark.Statement
	for i, t := range titles {
		p := shelfmark.NSDC + "title"
		if i%2 == 1 {
			p = shelfmark.NSDCTerms + "title"
		}
		out = append(out, shelfmark.Statement{Predicate: p, Object: shelfmark.NewLiteral(t)})
	}
	for _, r := range rest {
		out = append(out, shelfmark.Statement{Predicate: shelfmark.NSDC + "description", Object: shelfmark.NewLiteral(r)})
	}
	return out
}

func newSearchCorpus(t *testing.T, open Opener) *searchCorpus {
	t.Helper()
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	c := &searchCorpus{e: e, now: time.Now().UTC()}
	create := func(nr *shelfmark.NewResource) int64 {
		t.Helper()
		return keyOf(t, rs(t)(e.repo.CreateResource(ctx, nr)).ID)
	}
	// an embargo is set to a date ahead (the engine refuses one that has
	// passed), and the queries run after it ended
	future, past := c.now.Add(365*24*time.Hour), c.now.Add(time.Hour)
	c.pubColl = create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: metadata([]string{"Maritime papers"})})
	c.privColl = create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Visibility: shelfmark.Private,
		Metadata: metadata([]string{"Hidden papers"})})
	pubColl, privColl := e.repo.IDs().Encode(c.pubColl), e.repo.IDs().Encode(c.privColl)
	c.pub = create(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{pubColl},
		Metadata: append(metadata([]string{"Whales of the north", "Whales of the north"}, "A logbook kept at sea, 1851."),
			shelfmark.Statement{Predicate: shelfmark.NSDC + "subject", Object: shelfmark.NewIRI("http://example.org/whales-iri")})})
	c.bodyOnly = create(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{pubColl, privColl},
		Metadata: metadata([]string{"Ships and harbours"}, "Notes on ships, harbours, fishing fleets and the whales seen offshore, with long digressions on weather, rigging and the price of rope.")})
	c.priv = create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private,
		Metadata: metadata([]string{"Whales in private"})})
	c.embFuture = create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Embargo: &future,
		Metadata: metadata([]string{"Whales under embargo"})})
	c.embPast = create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Embargo: &past,
		Metadata: metadata([]string{"Whales released"})})
	c.now = past.Add(time.Hour)
	c.gone = create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: metadata([]string{"Whales soon deleted"})})
	c.whaling = create(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{pubColl},
		Metadata: metadata([]string{"Whaling voyages"}, "Café Ünïcödé déjà vu")})
	for i := 0; i < 3; i++ {
		c.pages = append(c.pages, create(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: e.repo.IDs().Encode(c.pub),
			Metadata: metadata([]string{fmt.Sprint("page ", i+1)})}))
	}
	c.privPage = create(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: e.repo.IDs().Encode(c.priv)})
	c.goneKid = create(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: e.repo.IDs().Encode(c.gone)})

	indexer := shelfmark.NewSearchIndexer(e.store, shelfmark.IndexerOptions{Batch: 3})
	if err := indexer.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	update(t, e, func(tx shelfmark.WriteTx) error {
		return tx.PutSearchDocs(ctx, []shelfmark.SearchDoc{
			{Key: c.pages[0], Work: c.pub, Kind: shelfmark.KindFileSet, Format: "PDF", Body: "Saw three whales at dawn; the whales blew twice."},
			{Key: c.pages[1], Work: c.pub, Kind: shelfmark.KindFileSet, Format: "TIFF", Body: "Calm sea. No whales today, only gulls."},
			{Key: c.pages[2], Work: c.pub, Kind: shelfmark.KindFileSet, Format: "PDF", Body: "Wind from the north, the rigging iced."},
			{Key: c.privPage, Work: c.priv, Kind: shelfmark.KindFileSet, Format: "PDF", Body: "whales whales whales"},
			{Key: c.goneKid, Work: c.gone, Kind: shelfmark.KindFileSet, Format: "PDF", Body: "deleted whales page"},
		})
	})
	return c
}

// search runs one query (Now defaults to the corpus's now).
func (c *searchCorpus) search(t *testing.T, q shelfmark.SearchQuery) *shelfmark.SearchResult {
	t.Helper()
	if q.Now.IsZero() {
		q.Now = c.now
	}
	var res *shelfmark.SearchResult
	view(t, c.e, func(tx shelfmark.ReadTx) (err error) {
		res, err = tx.Search(context.Background(), q)
		return err
	})
	return res
}

func hitKeys(hits []shelfmark.SearchHit) []int64 {
	out := make([]int64, len(hits))
	for i, h := range hits {
		out[i] = h.Key
	}
	return out
}

func sortedKeys(keys ...int64) []int64 { return slices.Sorted(slices.Values(keys)) }

func (c *searchCorpus) doc(t *testing.T, key int64) *shelfmark.SearchDoc {
	t.Helper()
	var d *shelfmark.SearchDoc
	view(t, c.e, func(tx shelfmark.ReadTx) (err error) {
		d, err = tx.SearchDoc(context.Background(), key)
		return err
	})
	return d
}

func testSearch(t *testing.T, open Opener) {
	c := newSearchCorpus(t, open)
	ctx := context.Background()

	// the indexer's documents: titles from dc:title and dcterms:title
	// (once each value), the other literals as the body, no IRIs; none
	// for file sets
	d := c.doc(t, c.pub)
	if d == nil || d.Work != c.pub || d.Kind != shelfmark.KindWork || d.Title != "Whales of the north" ||
		d.Body != "A logbook kept at sea, 1851." || d.Format != "" {
		t.Fatalf("document of a work: %+v", d)
	}
	if d := c.doc(t, c.pubColl); d == nil || d.Kind != shelfmark.KindCollection || d.Title != "Maritime papers" {
		t.Fatalf("document of a collection: %+v", d)
	}
	if d := c.doc(t, c.priv); d == nil || d.Title != "Whales in private" {
		t.Fatalf("document of a private work: %+v", d)
	}
	if d := c.doc(t, c.pages[0]); d == nil || d.Work != c.pub || d.Format != "PDF" || d.Title != "" {
		t.Fatalf("document of a page: %+v", d)
	}
	if d := c.doc(t, 1<<40); d != nil {
		t.Fatalf("document of nothing: %+v", d)
	}

	// visibility: private, embargoed and deleted works (and their pages)
	// never show; a lapsed embargo does (whales finds whaling too: both
	// are whale to the stemmer)
	res := c.search(t, shelfmark.SearchQuery{Text: "whales", Facets: true})
	want := sortedKeys(c.pub, c.bodyOnly, c.embPast, c.gone, c.goneKid, c.pages[0], c.pages[1], c.whaling)
	if got := slices.Sorted(slices.Values(hitKeys(res.Hits))); !slices.Equal(got, want) {
		t.Fatalf("whales: hits %v, want %v", got, want)
	}
	if res.Next != nil || res.Total != int64(len(want)) {
		t.Fatalf("whales: next %v, total %d, want nil and %d", res.Next, res.Total, len(want))
	}
	if err := c.e.repo.DeleteResource(ctx, c.e.repo.IDs().Encode(c.gone), 0); err != nil {
		t.Fatal(err)
	}
	want = slices.DeleteFunc(want, func(k int64) bool { return k == c.gone || k == c.goneKid })
	res = c.search(t, shelfmark.SearchQuery{Text: "whales", Facets: true})
	if got := slices.Sorted(slices.Values(hitKeys(res.Hits))); !slices.Equal(got, want) {
		t.Fatalf("whales after a delete (before indexing): hits %v, want %v", got, want)
	}
	// the embargo lapses without a write
	later := c.search(t, shelfmark.SearchQuery{Text: "whales", Now: c.now.Add(2 * 365 * 24 * time.Hour)})
	if !slices.Contains(hitKeys(later.Hits), c.embFuture) || slices.Contains(hitKeys(later.Hits), c.priv) {
		t.Fatalf("whales next year: %v", hitKeys(later.Hits))
	}

	// ranking: better first, then by key; a title match above a body-only
	// one; scores fall
	hits := res.Hits
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score || hits[i].Score == hits[i-1].Score && hits[i].Key < hits[i-1].Key {
			t.Fatalf("hits out of order at %d: %+v after %+v", i, hits[i], hits[i-1])
		}
	}
	pos := func(key int64) int { return slices.Index(hitKeys(hits), key) }
	if pos(c.pub) > pos(c.bodyOnly) || pos(c.embPast) > pos(c.bodyOnly) {
		t.Fatalf("title matches do not rank above a body-only match: %v", hitKeys(hits))
	}

	// hits carry their work's title and a snippet with the matches marked
	for _, h := range hits {
		wantTitle := map[int64]string{c.pub: "Whales of the north", c.bodyOnly: "Ships and harbours", c.embPast: "Whales released", c.whaling: "Whaling voyages"}[h.Work]
		if h.Title != wantTitle || h.Work == 0 {
			t.Fatalf("hit %d (work %d): title %q, want %q", h.Key, h.Work, h.Title, wantTitle)
		}
		if !strings.Contains(strings.ToLower(h.Snippet), shelfmark.SnippetStart+"whales"+shelfmark.SnippetEnd) &&
			!strings.Contains(strings.ToLower(h.Snippet), shelfmark.SnippetStart+"whaling"+shelfmark.SnippetEnd) {
			t.Fatalf("hit %d: snippet %q does not mark the match", h.Key, h.Snippet)
		}
		if strings.Count(h.Snippet, shelfmark.SnippetStart) != strings.Count(h.Snippet, shelfmark.SnippetEnd) {
			t.Fatalf("hit %d: snippet %q has unbalanced markers", h.Key, h.Snippet)
		}
		wantKind := shelfmark.KindWork
		if h.Key != h.Work {
			wantKind = shelfmark.KindFileSet
		}
		if h.Kind != wantKind {
			t.Fatalf("hit %d: kind %s", h.Key, h.Kind)
		}
	}
	if h := hits[pos(c.pages[0])]; h.Format != "PDF" || !strings.Contains(h.Snippet, "three "+shelfmark.SnippetStart+"whales"+shelfmark.SnippetEnd+" at dawn") {
		t.Fatalf("page hit: %+v", h)
	}
	if h := hits[pos(c.bodyOnly)]; !strings.Contains(h.Snippet, shelfmark.SnippetStart+"whales"+shelfmark.SnippetEnd+" seen offshore") {
		t.Fatalf("body-only hit: snippet %q", h.Snippet)
	}
	// a stem marks the words it stands for; a prefix marks what it begins
	for q, want := range map[string]string{"harbour": "harbours", "harbours*": "harbours", "offsh*": "offshore", "offsh": "", "rig": "rigging"} {
		r := c.search(t, shelfmark.SearchQuery{Text: q})
		if want == "" {
			if len(r.Hits) != 0 { // offshore: a prefix must be asked for
				t.Fatalf("%s: %v", q, hitKeys(r.Hits))
			}
			continue
		}
		if len(r.Hits) == 0 || !strings.Contains(r.Hits[0].Snippet, shelfmark.SnippetStart+want+shelfmark.SnippetEnd) {
			t.Fatalf("%s: hits %+v", q, r.Hits)
		}
	}

	// facets over every match
	wantFacets := func(what string, got []shelfmark.FacetCount, want ...shelfmark.FacetCount) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Fatalf("%s facet: %v, want %v", what, got, want)
		}
	}
	fc := func(v string, n int64) shelfmark.FacetCount { return shelfmark.FacetCount{Value: v, Count: n} }
	key := func(k int64) string { return fmt.Sprint(k) }
	wantFacets("kind", res.Kinds, fc("work", 4), fc("fileset", 2))
	wantFacets("format", res.Formats, fc("PDF", 1), fc("TIFF", 1))
	wantFacets("collection", res.Collections, fc(key(c.pubColl), 5)) // pub, its two pages, bodyOnly, whaling; not the private collection
	if res.Total != 6 {
		t.Fatalf("total %d", res.Total)
	}
	if r := c.search(t, shelfmark.SearchQuery{Text: "whales"}); r.Total != 0 || r.Kinds != nil || len(r.Hits) != 6 {
		t.Fatalf("without facets: total %d, kinds %v, %d hits", r.Total, r.Kinds, len(r.Hits))
	}

	// filters
	for _, f := range []struct {
		q    shelfmark.SearchQuery
		want []int64
	}{
		{shelfmark.SearchQuery{Text: "whales", Kind: shelfmark.KindFileSet}, sortedKeys(c.pages[0], c.pages[1])},
		{shelfmark.SearchQuery{Text: "whales", Kind: shelfmark.KindCollection}, nil},
		{shelfmark.SearchQuery{Text: "whales", Format: "PDF"}, []int64{c.pages[0]}},
		{shelfmark.SearchQuery{Text: "whales", Format: "TIFF", Kind: shelfmark.KindFileSet}, []int64{c.pages[1]}},
		{shelfmark.SearchQuery{Text: "whales", Collection: c.pubColl}, sortedKeys(c.pub, c.bodyOnly, c.whaling, c.pages[0], c.pages[1])},
		// a private collection lists nothing, even its public members
		{shelfmark.SearchQuery{Text: "whales", Collection: c.privColl}, nil},
		{shelfmark.SearchQuery{Text: "whales", Collection: c.pubColl, Format: "PDF"}, []int64{c.pages[0]}},
		{shelfmark.SearchQuery{Text: "papers", Kind: shelfmark.KindCollection}, []int64{c.pubColl}},
		// phrases and prefixes
		{shelfmark.SearchQuery{Text: `"whales of the north"`}, []int64{c.pub}},
		{shelfmark.SearchQuery{Text: `"north whales"`}, nil},
		{shelfmark.SearchQuery{Text: `"three whales" dawn`}, []int64{c.pages[0]}},
		{shelfmark.SearchQuery{Text: `whal*`, Kind: shelfmark.KindWork}, sortedKeys(c.pub, c.bodyOnly, c.embPast, c.whaling)},
		// stems: whaling and whales are whale, harbour finds harbours
		{shelfmark.SearchQuery{Text: `whaling`}, sortedKeys(c.pub, c.bodyOnly, c.embPast, c.whaling, c.pages[0], c.pages[1])},
		{shelfmark.SearchQuery{Text: `harbour`}, []int64{c.bodyOnly}},
		{shelfmark.SearchQuery{Text: `"the whale blew"`}, []int64{c.pages[0]}},
		{shelfmark.SearchQuery{Text: `harbours*`}, []int64{c.bodyOnly}},
		{shelfmark.SearchQuery{Text: `"whales of th"*`}, []int64{c.pub}},
		{shelfmark.SearchQuery{Text: `voy* whal*`}, []int64{c.whaling}},
		{shelfmark.SearchQuery{Text: `WHALING Voyages`}, []int64{c.whaling}},
		{shelfmark.SearchQuery{Text: `café`}, []int64{c.whaling}},
		{shelfmark.SearchQuery{Text: `ünïcödé`}, []int64{c.whaling}},
		// every word must match
		{shelfmark.SearchQuery{Text: `whales gulls`}, []int64{c.pages[1]}},
		// a word or phrase left out; alternatives
		{shelfmark.SearchQuery{Text: `whales -north`}, sortedKeys(c.bodyOnly, c.embPast, c.whaling, c.pages[0], c.pages[1])},
		{shelfmark.SearchQuery{Text: `whales -"of the north" -calm`}, sortedKeys(c.bodyOnly, c.embPast, c.whaling, c.pages[0])},
		{shelfmark.SearchQuery{Text: `whales -whal*`}, nil},
		{shelfmark.SearchQuery{Text: `gulls OR dawn`}, sortedKeys(c.pages[0], c.pages[1])},
		{shelfmark.SearchQuery{Text: `"three whales" OR gulls -calm`}, []int64{c.pages[0]}},
		{shelfmark.SearchQuery{Text: `zebra OR gulls whales OR rigging`}, []int64{c.pages[1]}},
		{shelfmark.SearchQuery{Text: `north OR harbours whales`, Kind: shelfmark.KindWork}, sortedKeys(c.pub, c.bodyOnly)},
		{shelfmark.SearchQuery{Text: `whales or north`}, nil}, // lower case: the word or
		{shelfmark.SearchQuery{Text: `self-evident OR voyages`}, []int64{c.whaling}},
		{shelfmark.SearchQuery{Text: `whales zebra`}, nil},
		// metadata IRIs are not indexed; private documents never show
		{shelfmark.SearchQuery{Text: `example`}, nil},
		{shelfmark.SearchQuery{Text: `private`}, nil},
		{shelfmark.SearchQuery{Text: `hidden`}, nil},
	} {
		r := c.search(t, f.q)
		if got := slices.Sorted(slices.Values(hitKeys(r.Hits))); !slices.Equal(got, f.want) && len(got)+len(f.want) > 0 {
			t.Fatalf("%+v: hits %v, want %v", f.q, got, f.want)
		}
	}
	if c.e.store.Backend() == "sqlite" { // unicode61 remove_diacritics 2; PostgreSQL's 'simple' keeps them
		if r := c.search(t, shelfmark.SearchQuery{Text: "cafe unicode"}); !slices.Equal(hitKeys(r.Hits), []int64{c.whaling}) {
			t.Fatalf("diacritics are not folded: %v", hitKeys(r.Hits))
		}
	}

	// hostile input: never an error but EINVALID for a text without words
	// or past a limit of ParseSearchText (the backend parses what it runs);
	// an empty text (or spaces) lists everything (SearchQuery.Everything)
	invalid := []string{`"`, `""`, `" "`, "*", "**", "-", "()", ":", "-*", "\x00", "\x02\x03", `'`, `\`, "&|!", "<->", "— … ·", ":*", "'':*", "\uFFFD", "\xff\xfe", "😀 🐳", `-whales`, `-"whales"`, `-1`, `-whales -north`, `- -`,
		strings.Repeat("w ", shelfmark.MaxSearchTerms+1), strings.Repeat("x", shelfmark.MaxSearchQueryBytes+1),
		`"` + strings.Repeat("the ", 14000) + `"`, strings.Repeat("the-", shelfmark.MaxSearchPhraseTokens),
		strings.Repeat(`"`+strings.Repeat("the ", shelfmark.MaxSearchPhraseTokens)+`" `, shelfmark.MaxSearchTokens/shelfmark.MaxSearchPhraseTokens+1)}
	for _, text := range invalid {
		var err error
		view(t, c.e, func(tx shelfmark.ReadTx) error {
			_, err = tx.Search(ctx, shelfmark.SearchQuery{Text: text, Now: c.now, Facets: true})
			return nil
		})
		if shelfmark.ErrorCode(err) != shelfmark.EINVALID {
			t.Fatalf("search %q: %v, want EINVALID", text, err)
		}
	}
	findsPub := []string{`(whales)`, `whales)`, `"whales`, `+whales`, "\x00whales", "whales\x02", `'whales'`, `whales'`,
		`whales:of`, `whales -`, `whales *`, `whales*`, `whales**`, `\whales`, `whales\`, `{whales}`, `whales:*`,
		`whales & north`, `whales | north`, `!whales`, `whales <-> north`, `whales"north"`, "whales\tnorth\n", `whales """`,
		`"whales" "of"`, `whales -ships`, `whales -"of the south"`, `whales OR dolphins`, `dolphins OR whales north`}
	for _, text := range findsPub {
		r := c.search(t, shelfmark.SearchQuery{Text: text, Facets: true})
		if !slices.Contains(hitKeys(r.Hits), c.pub) {
			t.Fatalf("search %q does not find the work: %v", text, hitKeys(r.Hits))
		}
	}
	for _, text := range []string{`NOT`, `AND OR`, `NEAR`, `NEAR(whales north)`, `whales AND north`, `whales OR north`, `title:whales`,
		`whales^2`, `whales:A`, `whales ; DROP TABLE search_docs; --`, `"a" AND "b" OR NOT c`, `a:b`, `col : x`, `x-y-z`, `whales 🐳`,
		`日本語`, `δοκιμή`, `𝔘𝔫𝔦𝔠𝔬𝔡𝔢`, "\uFFFDx", "\xff\xfewhales", `e\'x`, `1.5`, `3.14159*`, `x -1`, `a*b`, `*a`, `x:*`, `'x':*`,
		`"whales" NEAR/2 "north"`, `whales + north`, `(whales OR north) AND NOT ships`, `whales^`, `^whales`, `x -"whales"`,
		`a OR -b`, `a OR OR b`, `whales OR`, `OR whales`, `-a OR b`, `"a OR b"`, `a -"b" OR c`, `-x* y*`, `x OR y* OR "z w"* -"v"*`,
		strings.Repeat("x", shelfmark.MaxSearchQueryBytes), strings.Repeat("ab ", shelfmark.MaxSearchTerms)} {
		err := c.e.store.View(ctx, func(tx shelfmark.ReadTx) error {
			_, err := tx.Search(ctx, shelfmark.SearchQuery{Text: text, Now: c.now, Facets: true})
			return err
		})
		if err != nil {
			t.Fatalf("search %q: %v", text, err)
		}
	}

	// replacing documents: the later of two of one key in a batch wins,
	// and the old text no longer matches
	update(t, c.e, func(tx shelfmark.WriteTx) error {
		return tx.PutSearchDocs(ctx, []shelfmark.SearchDoc{
			{Key: c.pages[1], Work: c.pub, Kind: shelfmark.KindFileSet, Format: "TIFF", Body: "interim text"},
			{Key: c.pages[1], Work: c.pub, Kind: shelfmark.KindFileSet, Format: "JPEG", Body: "Gulls and \x00 terns\x02."},
		})
	})
	if d := c.doc(t, c.pages[1]); d == nil || d.Format != "JPEG" || d.Body != "Gulls and   terns ." {
		t.Fatalf("replaced document: %+v", d)
	}
	if r := c.search(t, shelfmark.SearchQuery{Text: "gulls"}); !slices.Equal(hitKeys(r.Hits), []int64{c.pages[1]}) {
		t.Fatalf("gulls: %v", hitKeys(r.Hits))
	}
	for _, text := range []string{"calm", "interim", "whales", "terns"} {
		r := c.search(t, shelfmark.SearchQuery{Text: text, Kind: shelfmark.KindFileSet, Format: "TIFF"})
		if len(r.Hits) != 0 {
			t.Fatalf("%s in TIFF pages after the replacement: %v", text, hitKeys(r.Hits))
		}
	}

	// the indexer follows changes: a new title, a deleted work and its
	// pages (DeleteSearchDocs by work)
	if _, err := c.e.repo.UpdateResource(ctx, c.e.repo.IDs().Encode(c.whaling), shelfmark.ResourceUpdate{
		Remove: []shelfmark.Statement{metadata([]string{"Whaling voyages"})[0]},
		Add:    []shelfmark.Statement{metadata([]string{"Arctic voyages"})[0]},
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.e.repo.DeleteResource(ctx, c.e.repo.IDs().Encode(c.pub), 0); err != nil {
		t.Fatal(err)
	}
	indexer := shelfmark.NewSearchIndexer(c.e.store, shelfmark.IndexerOptions{})
	if err := indexer.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := indexer.Step(ctx); n != 0 || err != nil {
		t.Fatalf("a step after catching up: %d, %v", n, err)
	}
	for _, k := range append([]int64{c.pub, c.gone, c.goneKid}, c.pages...) {
		if d := c.doc(t, k); d != nil {
			t.Fatalf("document %d of a deleted work: %+v", k, d)
		}
	}
	if d := c.doc(t, c.privPage); d == nil {
		t.Fatal("the page of another work was deleted")
	}
	if r := c.search(t, shelfmark.SearchQuery{Text: "arctic"}); !slices.Equal(hitKeys(r.Hits), []int64{c.whaling}) {
		t.Fatalf("arctic after the title changed: %v", hitKeys(r.Hits))
	}
	if r := c.search(t, shelfmark.SearchQuery{Text: "whaling"}); slices.Contains(hitKeys(r.Hits), c.whaling) {
		t.Fatalf("whaling after the title changed: %v", hitKeys(r.Hits))
	}
	var cp, top int64
	view(t, c.e, func(tx shelfmark.ReadTx) (err error) {
		if cp, err = tx.Counter(ctx, "search_checkpoint"); err != nil {
			return err
		}
		rows, err := tx.Changes(ctx, 0, 10000)
		if len(rows) > 0 {
			top = rows[len(rows)-1].Seq
		}
		return err
	})
	if cp != top || cp == 0 {
		t.Fatalf("checkpoint %d, last change %d", cp, top)
	}
	// DeleteSearchDocs directly: by key, and by work
	update(t, c.e, func(tx shelfmark.WriteTx) error { return tx.DeleteSearchDocs(ctx, []int64{c.priv, 1 << 40}) })
	if c.doc(t, c.priv) != nil || c.doc(t, c.privPage) != nil || c.doc(t, c.whaling) == nil {
		t.Fatal("DeleteSearchDocs by work")
	}
}

// testSearchPaging walks every page of a query with many equal and
// unequal scores and compares it with one large page.
func testSearchPaging(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	w := keyOf(t, rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})).ID)
	priv := keyOf(t, rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private})).ID)
	var docs []shelfmark.SearchDoc
	const n = 137
	for i := 0; i < n; i++ {
		// groups of documents with the same text (same score), and some
		// with the word in the title
		body := strings.Repeat("filler ", i%7) + strings.Repeat("kelp ", 1+i%4)
		d := shelfmark.SearchDoc{Key: int64(1000 + i), Work: w, Kind: shelfmark.KindFileSet, Format: "PDF", Body: body}
		if i%10 == 0 {
			d.Title = "kelp forest"
		}
		docs = append(docs, d)
	}
	docs = append(docs, shelfmark.SearchDoc{Key: 5000, Work: priv, Kind: shelfmark.KindFileSet, Body: "kelp"})
	update(t, e, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) })
	search := func(q shelfmark.SearchQuery) *shelfmark.SearchResult {
		var res *shelfmark.SearchResult
		q.Now = time.Now()
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			res, err = tx.Search(ctx, q)
			return err
		})
		return res
	}
	all := search(shelfmark.SearchQuery{Text: "kelp", Limit: 1000, Facets: true})
	if len(all.Hits) != shelfmark.MaxSearchLimit || all.Next == nil || all.Total != n {
		t.Fatalf("limit 1000: %d hits (want the maximum, %d), next %v, total %d", len(all.Hits), shelfmark.MaxSearchLimit, all.Next, all.Total)
	}
	if d := search(shelfmark.SearchQuery{Text: "kelp"}); len(d.Hits) != shelfmark.DefaultSearchLimit {
		t.Fatalf("default limit: %d hits", len(d.Hits))
	}
	var walked []shelfmark.SearchHit
	q := shelfmark.SearchQuery{Text: "kelp", Limit: 6}
	for pages := 0; ; pages++ {
		if pages > n {
			t.Fatal("paging does not end")
		}
		r := search(q)
		walked = append(walked, r.Hits...)
		if r.Next == nil {
			if len(r.Hits) == 0 && len(walked) < n {
				t.Fatal("an empty page")
			}
			break
		}
		if len(r.Hits) != 6 || *r.Next != (shelfmark.SearchCursor{Window: 1000 + n - 1, Score: r.Hits[5].Score, Key: r.Hits[5].Key}) {
			t.Fatalf("page %d: %d hits, next %+v", pages, len(r.Hits), r.Next)
		}
		q.After = r.Next
	}
	if len(walked) != n {
		t.Fatalf("paging returned %d hits, want %d", len(walked), n)
	}
	seen := map[int64]bool{}
	for i, h := range walked {
		if seen[h.Key] {
			t.Fatalf("hit %d returned twice", h.Key)
		}
		seen[h.Key] = true
		if i < len(all.Hits) && (h.Key != all.Hits[i].Key || h.Score != all.Hits[i].Score) {
			t.Fatalf("hit %d of the walk is %d (%v), one page says %d (%v)", i, h.Key, h.Score, all.Hits[i].Key, all.Hits[i].Score)
		}
		if i > 0 {
			p := walked[i-1]
			if h.Score > p.Score || h.Score == p.Score && h.Key < p.Key {
				t.Fatalf("walk out of order at %d", i)
			}
		}
	}
	distinct := map[float64]bool{}
	for _, h := range walked {
		distinct[h.Score] = true
	}
	if len(distinct) < 3 || len(distinct) > n/2 {
		t.Fatalf("%d distinct scores: the test wants both ties and differences", len(distinct))
	}
	// titles rank first
	for i, h := range walked[:10] {
		if (h.Key-1000)%10 != 0 {
			t.Fatalf("hit %d (%d) has no title match but ranks among the first 10", i, h.Key)
		}
	}
	// a cursor past the end, and one between two hits
	last := walked[len(walked)-1]
	if r := search(shelfmark.SearchQuery{Text: "kelp", After: &shelfmark.SearchCursor{Score: last.Score, Key: last.Key}}); len(r.Hits) != 0 || r.Next != nil {
		t.Fatalf("after the last: %v", hitKeys(r.Hits))
	}
	mid := walked[40]
	r := search(shelfmark.SearchQuery{Text: "kelp", After: &shelfmark.SearchCursor{Score: mid.Score, Key: mid.Key}, Limit: 100})
	if !slices.Equal(hitKeys(r.Hits), hitKeys(walked[41:])) {
		t.Fatal("the page after hit 40 is not the rest of the walk")
	}
}

// testCostSearch: writing and deleting documents runs the same statements
// for 10 documents as for 1,000, and a page of hits deep in the results
// runs the same statements, returning the same number of rows, as the
// second page.
func testCostSearch(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	w := keyOf(t, rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})).ID)
	docs := func(from, n int) []shelfmark.SearchDoc {
		out := make([]shelfmark.SearchDoc, n)
		for i := range out {
			k := from + i
			out[i] = shelfmark.SearchDoc{Key: int64(k), Work: w, Kind: shelfmark.KindFileSet, Format: "PDF",
				Title: fmt.Sprint("page ", k), Body: fmt.Sprintf("text of page %d with words %d and %d", k, k%7, k%13)}
		}
		return out
	}
	statements := func(fn func(tx shelfmark.WriteTx) error) []string {
		var qs []string
		for _, c := range e.rec.capture(func() { update(t, e, fn) }) {
			qs = append(qs, c.query)
		}
		return qs
	}
	for _, c := range []struct {
		what string
		fn   func(n int) func(tx shelfmark.WriteTx) error
	}{
		{"put new documents", func(n int) func(tx shelfmark.WriteTx) error {
			return func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs(100000*n, n)) }
		}},
		{"replace documents", func(n int) func(tx shelfmark.WriteTx) error {
			return func(tx shelfmark.WriteTx) error {
				ds := docs(100000*n, n)
				for i := range ds {
					ds[i].Body += " changed"
				}
				return tx.PutSearchDocs(ctx, ds)
			}
		}},
		{"delete documents", func(n int) func(tx shelfmark.WriteTx) error {
			return func(tx shelfmark.WriteTx) error {
				keys := make([]int64, n)
				for i := range keys {
					keys[i] = int64(100000*n + i)
				}
				return tx.DeleteSearchDocs(ctx, keys)
			}
		}},
	} {
		small, large := statements(c.fn(10)), statements(c.fn(1000))
		if !slices.Equal(small, large) || len(small) == 0 {
			t.Fatalf("%s: 10 documents ran %d statements, 1,000 ran %d:\n%q\n%q", c.what, len(small), len(large), small, large)
		}
		t.Logf("%s: %d statements for 10 documents and for 1,000", c.what, len(small))
	}

	update(t, e, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs(1, 3000)) })
	now := time.Now()
	var cursors []*shelfmark.SearchCursor
	q := shelfmark.SearchQuery{Text: "page", Limit: 10, Now: now}
	for i := 0; i < 250; i++ {
		var res *shelfmark.SearchResult
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			res, err = tx.Search(ctx, q)
			return err
		})
		if res.Next == nil {
			t.Fatalf("page %d is the last", i)
		}
		cursors = append(cursors, res.Next)
		q.After = res.Next
	}
	page := func(after *shelfmark.SearchCursor) []call {
		return e.rec.capture(func() {
			view(t, e, func(tx shelfmark.ReadTx) error {
				_, err := tx.Search(ctx, shelfmark.SearchQuery{Text: "page", Limit: 10, Now: now, After: after})
				return err
			})
		})
	}
	sameWork(t, "a page of hits (page 2 vs page 250)", page(cursors[0]), page(cursors[len(cursors)-2]))
}

// testSearchIndexer: indexers running side by side (one per server) index
// every change once, the checkpoint ends at the last change, and Run
// follows new changes when notified until its context ends.
func testSearchIndexer(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	var works []shelfmark.ID
	nrs := make([]*shelfmark.NewResource, 60)
	for i := range nrs {
		nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: metadata([]string{fmt.Sprint("volume ", i)}, "shared words")}
	}
	for _, batch := range [][]*shelfmark.NewResource{nrs[:25], nrs[25:40], nrs[40:]} { // three commits
		res, errs := e.repo.CreateResources(ctx, batch)
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		for _, r := range res {
			works = append(works, r.ID)
		}
	}
	a := shelfmark.NewSearchIndexer(e.store, shelfmark.IndexerOptions{Batch: 7})
	b := shelfmark.NewSearchIndexer(e.store, shelfmark.IndexerOptions{Batch: 11})
	errs := make(chan error, 2)
	for _, x := range []*shelfmark.SearchIndexer{a, b} {
		go func() { errs <- x.CatchUp(ctx) }()
	}
	for range 2 {
		// an indexer that keeps losing the race gives up for now, as a
		// step of Run would, and catches up at its next turn
		if err := <-errs; err != nil && !strings.Contains(err.Error(), "another indexer") {
			t.Fatal(err)
		}
	}
	if err := a.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	var docs, cp int64
	view(t, e, func(tx shelfmark.ReadTx) error {
		for _, id := range works {
			d, err := tx.SearchDoc(ctx, keyOf(t, id))
			if err != nil {
				return err
			}
			if d == nil || !strings.HasPrefix(d.Title, "volume ") || d.Body != "shared words" {
				t.Fatalf("document of %s: %+v", id, d)
			}
			docs++
		}
		var err error
		cp, err = tx.Counter(ctx, "search_checkpoint")
		return err
	})
	// the last change: the highest number among the works, whatever
	// order their ops took numbers in
	var last int64
	for _, id := range works {
		last = max(last, rs(t)(e.repo.FindResource(ctx, id)).Seq)
	}
	if docs != 60 || cp != last {
		t.Fatalf("%d documents, checkpoint %d, last change %d", docs, cp, last)
	}
	var res *shelfmark.SearchResult
	view(t, e, func(tx shelfmark.ReadTx) (err error) {
		res, err = tx.Search(ctx, shelfmark.SearchQuery{Text: "shared", Now: time.Now(), Facets: true})
		return err
	})
	if res.Total != 60 {
		t.Fatalf("shared: %d hits", res.Total)
	}

	// Run: a change is indexed once the indexer is told of it
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- a.Run(runCtx) }()
	w := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: metadata([]string{"late arrival"})}))
	a.Notify()
	a.Notify() // never blocks
	for deadline := time.Now().Add(30 * time.Second); ; {
		var d *shelfmark.SearchDoc
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			d, err = tx.SearchDoc(ctx, keyOf(t, w.ID))
			return err
		})
		if d != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Run did not index a new work")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Run returned %v", err)
	}
}

// searchEnv is a repository with one public work in a public collection,
// one public work in none, and one private work, for documents written
// directly (keys from searchBase up, contiguous, so that the estimates of
// a sample are exact when a word is spread evenly).
type searchEnv struct {
	e                  *env
	coll, w1, w2, priv int64
}

const searchBase = 1 << 30

func newSearchEnv(t *testing.T, open Opener) *searchEnv {
	t.Helper()
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	create := func(nr *shelfmark.NewResource) int64 {
		t.Helper()
		return keyOf(t, rs(t)(e.repo.CreateResource(ctx, nr)).ID)
	}
	s := &searchEnv{e: e}
	s.coll = create(&shelfmark.NewResource{Kind: shelfmark.KindCollection})
	s.w1 = create(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{e.repo.IDs().Encode(s.coll)}})
	s.w2 = create(&shelfmark.NewResource{Kind: shelfmark.KindWork})
	s.priv = create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private})
	return s
}

func (s *searchEnv) put(t *testing.T, docs []shelfmark.SearchDoc) {
	t.Helper()
	update(t, s.e, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(context.Background(), docs) })
}

func (s *searchEnv) search(t *testing.T, q shelfmark.SearchQuery) *shelfmark.SearchResult {
	t.Helper()
	q.Now = time.Now()
	var res *shelfmark.SearchResult
	view(t, s.e, func(tx shelfmark.ReadTx) (err error) {
		res, err = tx.Search(context.Background(), q)
		return err
	})
	return res
}

// indexCalls keeps the statements that read the search index (the
// search's own, beside the settings a backend may wrap them in, such as
// the deadline of its statements).
func indexCalls(calls []call) []call {
	var out []call
	for _, c := range calls {
		if strings.Contains(c.query, "search_") {
			out = append(out, c)
		}
	}
	return out
}

// facetCount returns the count of value in a facet, or -1.
func facetCount(f []shelfmark.FacetCount, value string) int64 {
	for _, c := range f {
		if c.Value == value {
			return c.Count
		}
	}
	return -1
}

// testSearchThreshold: the total and the facets are exact for a word in
// SearchWindow visible documents (however many private ones hold it too)
// and estimated, and said to be, for a word in one more; the estimate of a
// word spread over a large index is close to the truth, facet by facet.
func testSearchThreshold(t *testing.T, open Opener) {
	s := newSearchEnv(t, open)
	const c = shelfmark.SearchWindow
	var docs []shelfmark.SearchDoc
	key := int64(searchBase)
	add := func(work int64, format, body string) {
		docs = append(docs, shelfmark.SearchDoc{Key: key, Work: work, Kind: shelfmark.KindFileSet, Format: format, Body: body})
		key++
	}
	// over: c+1 documents, the lowest keys of the index
	for i := 0; i <= c; i++ {
		add([]int64{s.w1, s.w2}[i%2], []string{"PDF", "TIFF", "TIFF", "TIFF"}[i%4], "over")
	}
	// at: exactly c visible documents, and private ones between them
	for i := 0; i < c; i++ {
		add([]int64{s.w1, s.w2}[i%2], []string{"PDF", "TIFF", "TIFF", "TIFF"}[i%4], "at")
		if i%10 == 0 {
			add(s.priv, "PDF", "at")
		}
	}
	s.put(t, docs)

	at := s.search(t, shelfmark.SearchQuery{Text: "at", Facets: true})
	if at.Estimated || at.Total != c {
		t.Fatalf("a word in %d visible documents: total %d, estimated %v; want exact", c, at.Total, at.Estimated)
	}
	fc := func(v string, n int64) shelfmark.FacetCount { return shelfmark.FacetCount{Value: v, Count: n} }
	if want := []shelfmark.FacetCount{fc("TIFF", 3*c/4), fc("PDF", c/4)}; !slices.Equal(at.Formats, want) {
		t.Fatalf("formats of a word in %d documents: %v, want %v", c, at.Formats, want)
	}
	if want := []shelfmark.FacetCount{fc(fmt.Sprint(s.coll), c/2)}; !slices.Equal(at.Collections, want) {
		t.Fatalf("collections of a word in %d documents: %v, want %v", c, at.Collections, want)
	}
	over := s.search(t, shelfmark.SearchQuery{Text: "over", Facets: true})
	// the sample is every match but one, at the bottom of the index's keys:
	// the estimate comes out exact
	if !over.Estimated || over.Total != c+1 {
		t.Fatalf("a word in %d visible documents: total %d, estimated %v; want %d, estimated", c+1, over.Total, over.Estimated, c+1)
	}
	if n := facetCount(over.Formats, "PDF"); n != c/4+1 {
		t.Fatalf("formats of a word in %d documents: %v", c+1, over.Formats)
	}
	if r := s.search(t, shelfmark.SearchQuery{Text: "over"}); r.Estimated || r.Total != 0 {
		t.Fatalf("without facets: total %d, estimated %v", r.Total, r.Estimated)
	}

	// a large index: "every" in every document, "half" in every other one,
	// "tenth" in one in ten
	s = newSearchEnv(t, open)
	const n = 8 * c
	docs, key = nil, searchBase
	for i := 0; i < n; i++ {
		body := "every"
		if i%2 == 0 {
			body += " half"
		}
		if i%10 == 0 {
			body += " tenth"
		}
		add([]int64{s.w1, s.w2}[i%2], []string{"PDF", "TIFF", "TIFF", "TIFF"}[i%4], body)
	}
	s.put(t, docs)
	near := func(what string, got, want int64) {
		t.Helper()
		if d := got - want; d*50 > want || -d*50 > want {
			t.Fatalf("%s: estimated %d, true %d (off by more than 2%%)", what, got, want)
		}
	}
	for _, w := range []struct {
		word string
		n    int64
	}{{"every", n}, {"half", n / 2}, {"tenth", n / 10}} {
		r := s.search(t, shelfmark.SearchQuery{Text: w.word, Facets: true})
		if r.Estimated != (w.n > c) {
			t.Fatalf("%s: a word in %d documents: estimated %v", w.word, w.n, r.Estimated)
		}
		near(w.word+" total", r.Total, w.n)
		near(w.word+" in the collection", facetCount(r.Collections, fmt.Sprint(s.coll)), map[string]int64{"every": n / 2, "half": n / 2, "tenth": n / 10}[w.word])
		if w.word == "every" {
			near("every, PDF", facetCount(r.Formats, "PDF"), n/4)
			near("every, TIFF", facetCount(r.Formats, "TIFF"), 3*n/4)
			if !slices.Equal(r.Kinds, []shelfmark.FacetCount{fc("fileset", r.Total)}) {
				t.Fatalf("every, kinds: %v", r.Kinds)
			}
		}
		// a filter narrows the sample, not the estimate's reach
		f := s.search(t, shelfmark.SearchQuery{Text: w.word, Format: "PDF", Facets: true})
		want := map[string]int64{"every": n / 4, "half": n / 4, "tenth": n / 20}[w.word]
		if want > c && !f.Estimated || want <= c && (f.Estimated || f.Total != want) {
			t.Fatalf("%s in PDF: total %d, estimated %v; want about %d", w.word, f.Total, f.Estimated, want)
		}
		near(w.word+" in PDF", f.Total, want)
	}
}

// testSearchWindows: a word in several windows' worth of documents pages
// through every match once, window by window (newest window first, by
// score within each), each page running at most two statements of one
// window each; a title match ranks first within its window; later pages
// keep the first page's window when newer documents arrive.
func testSearchWindows(t *testing.T, open Opener) {
	s := newSearchEnv(t, open)
	const c = shelfmark.SearchWindow
	const n = 3*c + 137
	var docs []shelfmark.SearchDoc
	for i := 0; i < n; i++ {
		d := shelfmark.SearchDoc{Key: int64(searchBase + i), Work: s.w1, Kind: shelfmark.KindFileSet,
			Body: strings.Repeat("filler ", i%5) + strings.Repeat("kelp ", 1+i%3)}
		if i%97 == 0 {
			d.Title = "kelp"
		}
		docs = append(docs, d)
	}
	s.put(t, docs)
	window := func(key int64) int { return int(searchBase+n-1-key) / c } // 0 for the newest c
	var walked []shelfmark.SearchHit
	q := shelfmark.SearchQuery{Text: "kelp", Limit: 30}
	var first *shelfmark.SearchCursor
	for pages := 0; ; pages++ {
		if pages > n {
			t.Fatal("paging does not end")
		}
		var r *shelfmark.SearchResult
		calls := indexCalls(s.e.rec.capture(func() { r = s.search(t, q) }))
		if len(calls) > 2 {
			t.Fatalf("page %d ran %d statements", pages, len(calls))
		}
		if r.Next != nil && len(r.Hits) != 30 {
			t.Fatalf("page %d: %d hits and a next page", pages, len(r.Hits))
		}
		walked = append(walked, r.Hits...)
		if pages == 0 {
			first = r.Next
		}
		if r.Next == nil {
			break
		}
		q.After = r.Next
	}
	if len(walked) != n {
		t.Fatalf("paging returned %d hits, want %d", len(walked), n)
	}
	seen := map[int64]bool{}
	for i, h := range walked {
		if seen[h.Key] {
			t.Fatalf("hit %d returned twice", h.Key)
		}
		seen[h.Key] = true
		if i == 0 {
			continue
		}
		p := walked[i-1]
		switch wp, wh := window(p.Key), window(h.Key); {
		case wh < wp:
			t.Fatalf("hit %d (window %d) after hit %d (window %d)", h.Key, wh, p.Key, wp)
		case wh == wp && (h.Score > p.Score || h.Score == p.Score && h.Key < p.Key):
			t.Fatalf("hits out of order within window %d at %d", wh, i)
		case wh > wp && (h.Key-searchBase)%97 != 0 && (p.Key-searchBase)%97 == 0:
			t.Fatalf("window %d begins with a body match", wh)
		}
	}
	// title matches first in each window
	for w := 0; w*c < n; w++ {
		titles := 0
		for k := searchBase + n - 1 - w*c; k > searchBase+n-1-(w+1)*c && k >= searchBase; k-- {
			if (k-searchBase)%97 == 0 {
				titles++
			}
		}
		start := w * c
		for i := start; i < start+titles; i++ {
			if (walked[i].Key-searchBase)%97 != 0 {
				t.Fatalf("window %d: hit %d (%d) is not a title match but ranks among its first %d", w, i, walked[i].Key, titles)
			}
		}
	}

	// a page that ends its window leads to the beginning of the next, so
	// the next page reads that window alone
	q = shelfmark.SearchQuery{Text: "kelp", Limit: 100}
	for range c / 100 {
		q.After = s.search(t, q).Next
	}
	if q.After == nil || *q.After != (shelfmark.SearchCursor{Window: searchBase + n - 1 - c}) {
		t.Fatalf("the cursor after the first window: %+v", q.After)
	}
	var r *shelfmark.SearchResult
	if calls := indexCalls(s.e.rec.capture(func() { r = s.search(t, q) })); len(calls) != 1 || !slices.Equal(hitKeys(r.Hits), hitKeys(walked[c:c+100])) {
		t.Fatalf("the page after the first window ran %d statements; hits %v", len(calls), hitKeys(r.Hits))
	}

	// newer documents do not move the first page's window
	s.put(t, []shelfmark.SearchDoc{{Key: searchBase + n + 5, Work: s.w1, Kind: shelfmark.KindFileSet, Title: "kelp kelp", Body: "kelp"}})
	// (SQLite's scores move with the index's mean document length, so the
	// page is compared by window, not hit by hit)
	r = s.search(t, shelfmark.SearchQuery{Text: "kelp", Limit: 30, After: first})
	for _, h := range r.Hits {
		if window(h.Key) != 0 {
			t.Fatalf("the second page, after a newer document arrived, holds %d (window %d)", h.Key, window(h.Key))
		}
	}
	if len(r.Hits) != 30 {
		t.Fatalf("the second page, after a newer document arrived: %d hits", len(r.Hits))
	}
	if r := s.search(t, shelfmark.SearchQuery{Text: "kelp", Limit: 1}); len(r.Hits) != 1 || r.Hits[0].Key != searchBase+n+5 {
		t.Fatalf("a new first page does not rank the new document first: %v", hitKeys(r.Hits))
	}
	// the beginning of a window as a cursor
	r = s.search(t, shelfmark.SearchQuery{Text: "kelp", Limit: 5, After: &shelfmark.SearchCursor{Window: searchBase + n - 1 - c}})
	if !slices.Equal(hitKeys(r.Hits), hitKeys(walked[c:c+5])) {
		t.Fatalf("the start of the second window: %v, want %v", hitKeys(r.Hits), hitKeys(walked[c:c+5]))
	}
}

// testCostSearchFirstPage: the first page of a word in 10 windows' worth
// of documents, with its facets, runs the same statements returning the
// same rows as that of a word in two windows' worth (the backends' own
// tests count the rows the statements read).
func testCostSearchFirstPage(t *testing.T, open Opener) {
	s := newSearchEnv(t, open)
	const c = shelfmark.SearchWindow
	var docs []shelfmark.SearchDoc
	for i := 0; i < 10*c; i++ {
		body := "large"
		if i%5 == 0 {
			body += " small"
		}
		docs = append(docs, shelfmark.SearchDoc{Key: int64(searchBase + i), Work: []int64{s.w1, s.w2}[i%2], Kind: shelfmark.KindFileSet,
			Format: []string{"PDF", "TIFF"}[i%2], Body: body})
	}
	s.put(t, docs)
	page := func(word string) ([]call, *shelfmark.SearchResult) {
		var r *shelfmark.SearchResult
		calls := s.e.rec.capture(func() { r = s.search(t, shelfmark.SearchQuery{Text: word, Facets: true}) })
		for i := range calls {
			calls[i].query = strings.ReplaceAll(calls[i].query, word, "WORD")
		}
		return calls, r
	}
	small, rs := page("small")
	large, rl := page("large")
	sameWork(t, "the first page with facets (a word in 2,000 documents vs 10,000)", small, large)
	if !rs.Estimated || !rl.Estimated || rs.Total != 2*c || rl.Total != 10*c {
		t.Fatalf("totals %d (estimated %v) and %d (estimated %v)", rs.Total, rs.Estimated, rl.Total, rl.Estimated)
	}
}
