package storagetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// Stemming per language (searchstem.go): a document is stemmed in its
// work's language (dcterms:language), a page in its work's, and a query
// word matches its stems in every language; English and works without a
// language are stemmed as before.
func testSearchLanguages(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	lang := func(code string, iri bool) shelfmark.Statement {
		o := shelfmark.NewLiteral(code)
		if iri {
			o = shelfmark.NewIRI(code)
		}
		return shelfmark.Statement{Predicate: shelfmark.NSDCTerms + "language", Object: o}
	}
	create := func(nr *shelfmark.NewResource) (int64, shelfmark.ID) {
		t.Helper()
		r := rs(t)(e.repo.CreateResource(ctx, nr))
		return keyOf(t, r.ID), r.ID
	}
	work := func(md []shelfmark.Statement) (int64, shelfmark.ID) {
		return create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: md})
	}
	french, frenchID := work(append(metadata([]string{"Les maisons du village"}, "Un livre sur les chevaux."), lang("fre", false)))
	german, _ := work(append(metadata([]string{"Die Häuser am See"}, "Das Dach des Hauses."), lang("de", false)))
	spanish, _ := work(append(metadata([]string{"Las ciudades del norte"}), lang("http://id.loc.gov/vocabulary/iso639-2/spa", true)))
	english, _ := work(append(metadata([]string{"Ships and harbours"}, "Häuser is a German word."), lang("eng", false)))
	none, _ := work(metadata([]string{"Whaling voyages"}))
	latin, _ := work(append(metadata([]string{"De bello Gallico"}, "equites"), lang("lat", false)))
	page, _ := create(&shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: frenchID})
	if err := shelfmark.NewSearchIndexer(e.store, shelfmark.IndexerOptions{Batch: 4}).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	update(t, e, func(tx shelfmark.WriteTx) error {
		// a page's document says no language (the worker does not know
		// it): it takes its work's
		return tx.PutSearchDocs(ctx, []shelfmark.SearchDoc{{Key: page, Work: french, Kind: shelfmark.KindFileSet, Format: "PDF",
			Body: "Les grands chevaux blancs du village."}})
	})
	docLang := func(key int64) string {
		var d *shelfmark.SearchDoc
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			d, err = tx.SearchDoc(ctx, key)
			return err
		})
		if d == nil {
			t.Fatalf("no document of %d", key)
		}
		return d.Lang
	}
	for key, want := range map[int64]string{french: "french", german: "german", spanish: "spanish", english: "", none: "", latin: "", page: "french"} {
		if got := docLang(key); got != want {
			t.Errorf("document %d: language %q, want %q", key, got, want)
		}
	}
	search := func(text string) []int64 {
		t.Helper()
		var res *shelfmark.SearchResult
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			res, err = tx.Search(ctx, shelfmark.SearchQuery{Text: text, Now: time.Now(), Limit: 50})
			return err
		})
		return sortedKeys(hitKeys(res.Hits)...)
	}
	for _, c := range []struct {
		q    string
		want []int64
	}{
		{"maison", []int64{french}},             // maisons, French
		{"cheval", sortedKeys(french, page)},    // chevaux: only French stems it to cheval; the page in its work's language
		{"chevaux", sortedKeys(french, page)},   // as written
		{"Haus", []int64{german}},               // Häuser and Hauses, German; not the English work's Häuser
		{"Häuser", sortedKeys(german, english)}, // and the other way; the English work's as written
		{"ciudad", []int64{spanish}},            // ciudades, Spanish (an IRI names the language)
		{"harbour", []int64{english}},           // English, as before
		{"whale", []int64{none}},                // no language: English, as before
		{"eques", nil},                          // Latin has no stemmer here: English
		{"equites", []int64{latin}},             // as written
		{"chev*", sortedKeys(french, page)},     // a prefix is not stemmed
		{"maison*", []int64{french}},            // the prefix as typed finds the stem maison
		{`"grand cheval blanc"`, []int64{page}}, // a French phrase, in other forms
		{`"grands chevaux"`, []int64{page}},     // and as written
		{`"cheval grand"`, nil},                 // not in that order
		{"cheval -village", nil},                // the work and the page both say village
		{"title:maison", []int64{french}},       // a field term is stemmed too
	} {
		if got := search(c.q); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.q, got, c.want)
		}
	}
	// the snippet marks the words in the document's language
	var res *shelfmark.SearchResult
	view(t, e, func(tx shelfmark.ReadTx) (err error) {
		res, err = tx.Search(ctx, shelfmark.SearchQuery{Text: "cheval", Now: time.Now(), Kind: shelfmark.KindFileSet})
		return err
	})
	if len(res.Hits) != 1 || !strings.Contains(res.Hits[0].Snippet, shelfmark.SnippetStart+"chevaux"+shelfmark.SnippetEnd) {
		t.Errorf("cheval: the page's snippet does not mark chevaux: %+v", res.Hits)
	}

	// the work's language changes: its record and its page are stemmed
	// in English again
	if _, err := e.repo.UpdateResource(ctx, frenchID, shelfmark.ResourceUpdate{Remove: []shelfmark.Statement{lang("fre", false)},
		Add: []shelfmark.Statement{lang("en", false)}}); err != nil {
		t.Fatal(err)
	}
	if err := shelfmark.NewSearchIndexer(e.store, shelfmark.IndexerOptions{Batch: 4}).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if got := docLang(page); got != "" {
		t.Errorf("the page after its work became English: language %q", got)
	}
	if got := search("cheval"); len(got) != 0 {
		t.Errorf("cheval after the work became English: %v", got)
	}
	if got := search("chevaux"); !slices.Equal(got, sortedKeys(french, page)) {
		t.Errorf("chevaux after the work became English: %v", got)
	}
}
