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

// facetGenre is the IRI of the facet an administrator adds in
// testSearchFacets.
const facetGenre = "http://example.org/terms/genre"

// testSearchFacets: the indexer gives each record its values of the
// configured metadata facets (dc: and dcterms: alike, each value once,
// trimmed, an administrator's own predicate too); a search counts them
// exactly over its matches, documents or (grouped) works, never a
// private work's for an anonymous reader; a filter, as SearchQuery.Filters
// or as name:value in the text (any case, left out with a minus, with
// words or alone), narrows the hits; a filter on a facet there is not is
// EINVALID naming the facets; a changed record's values replace its old
// ones and a deleted work's are gone; a changed list of facets makes the
// indexer read every record again.
func testSearchFacets(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	facets := append(shelfmark.DefaultSearchFacets(), shelfmark.SearchFacet{Name: "genre", Label: "Genre", Predicates: []string{facetGenre}})
	dc := func(p, v string) shelfmark.Statement {
		return shelfmark.Statement{Predicate: shelfmark.NSDC + p, Object: shelfmark.NewLiteral(v)}
	}
	terms := func(p, v string) shelfmark.Statement {
		return shelfmark.Statement{Predicate: shelfmark.NSDCTerms + p, Object: shelfmark.NewLiteral(v)}
	}
	genre := shelfmark.Statement{Predicate: facetGenre, Object: shelfmark.NewIRI("http://example.org/genre/sea")}
	type rec struct {
		name string
		vis  shelfmark.Visibility
		md   []shelfmark.Statement
	}
	recs := []rec{
		{"moby", shelfmark.Public, []shelfmark.Statement{dc("title", "Moby Dick"), dc("language", "eng"), terms("language", " eng "),
			dc("type", "Text"), dc("creator", "Melville, Herman"), dc("subject", "Whaling"), dc("description", "a whale"), genre}},
		{"typee", shelfmark.Public, []shelfmark.Statement{dc("title", "Typee"), terms("language", "eng"), terms("language", "fre"),
			terms("type", "Text"), dc("creator", "Melville,   Herman"), dc("description", "a whale in the south seas")}},
		{"atlas", shelfmark.Public, []shelfmark.Statement{dc("title", "Atlas"), dc("language", "ger"), dc("type", "Image"),
			dc("description", "maps of whale grounds")}},
		{"secret", shelfmark.Private, []shelfmark.Statement{dc("title", "Secret log"), dc("language", "eng"), dc("language", "dut"),
			dc("type", "Text"), dc("description", "a whale seen"), genre}},
	}
	nrs := make([]*shelfmark.NewResource, len(recs))
	for i, r := range recs {
		nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: r.vis, Metadata: r.md}
	}
	made, errs := e.repo.CreateResources(ctx, nrs)
	key := map[string]int64{}
	name := map[int64]string{}
	for i, r := range recs {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		key[r.name] = keyOf(t, made[i].ID)
		name[key[r.name]] = r.name
	}
	index := func(list []shelfmark.SearchFacet) {
		t.Helper()
		if err := shelfmark.NewSearchIndexer(e.store, shelfmark.IndexerOptions{Facets: list}).CatchUp(ctx); err != nil {
			t.Fatal(err)
		}
	}
	index(facets)
	now := time.Now()
	search := func(q shelfmark.SearchQuery) (*shelfmark.SearchResult, error) {
		q.Now, q.Limit = now, shelfmark.MaxSearchLimit
		if q.FacetSet == nil {
			q.FacetSet = facets
		}
		var res *shelfmark.SearchResult
		err := e.store.View(ctx, func(tx shelfmark.ReadTx) (err error) {
			res, err = tx.Search(ctx, q)
			return err
		})
		return res, err
	}
	must := func(q shelfmark.SearchQuery) *shelfmark.SearchResult {
		t.Helper()
		res, err := search(q)
		if err != nil {
			t.Fatalf("%+v: %v", q, err)
		}
		return res
	}
	names := func(res *shelfmark.SearchResult) string {
		var out []string
		for _, h := range res.Hits {
			out = append(out, cmpName(name, h.Work))
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	counts := func(res *shelfmark.SearchResult) string {
		var out []string
		for _, m := range res.Metadata {
			var vs []string
			for _, v := range m.Values {
				vs = append(vs, fmt.Sprintf("%s=%d", v.Value, v.Count))
			}
			out = append(out, m.Name+":"+strings.Join(vs, ","))
		}
		return strings.Join(out, " ")
	}

	// counted exactly, each value once a work, the private work left out
	const want = `creator:Melville, Herman=2 subject:Whaling=1 language:eng=2,fre=1,ger=1 type:Text=2,Image=1 genre:http://example.org/genre/sea=1`
	for _, group := range []bool{false, true} {
		res := must(shelfmark.SearchQuery{Text: "whale", Facets: true, Group: group})
		if got := counts(res); got != want || res.Estimated {
			t.Errorf("group %v: the facets of whale:\n got %s\nwant %s", group, got, want)
		}
		if res.Total != 3 {
			t.Errorf("group %v: total %d, want 3", group, res.Total)
		}
	}
	// everything, and a browse-like listing, count the same sample
	if got := counts(must(shelfmark.SearchQuery{Facets: true, Group: true})); got != want {
		t.Errorf("the facets of everything:\n got %s\nwant %s", got, want)
	}
	// a reader who may read everything counts the private work too
	if got := counts(must(shelfmark.SearchQuery{Text: "whale", Facets: true, Group: true, Reader: &shelfmark.SearchReader{All: true}})); !strings.Contains(got, "language:eng=3,dut=1,fre=1,ger=1") {
		t.Errorf("all: %s", got)
	}
	// without the facets asked for, none; without a list, no metadata facets
	if r := must(shelfmark.SearchQuery{Text: "whale"}); r.Metadata != nil {
		t.Errorf("facets not asked for: %+v", r.Metadata)
	}
	if r := must(shelfmark.SearchQuery{Text: "whale", Facets: true, FacetSet: []shelfmark.SearchFacet{}}); len(r.Metadata) != 0 {
		t.Errorf("no metadata facets: %+v", r.Metadata)
	}

	// filtering
	for _, tc := range []struct {
		q    shelfmark.SearchQuery
		want string
	}{
		{shelfmark.SearchQuery{Text: "whale", Filters: []shelfmark.SearchFilter{{Facet: "language", Value: "eng"}}}, "moby typee"},
		{shelfmark.SearchQuery{Text: "whale", Filters: []shelfmark.SearchFilter{{Facet: "language", Value: "eng"}}, Group: true}, "moby typee"},
		{shelfmark.SearchQuery{Filters: []shelfmark.SearchFilter{{Facet: "language", Value: "ENG"}}}, "moby typee"},
		{shelfmark.SearchQuery{Filters: []shelfmark.SearchFilter{{Facet: "language", Value: "eng"}, {Facet: "language", Value: "fre"}}}, "typee"},
		{shelfmark.SearchQuery{Filters: []shelfmark.SearchFilter{{Facet: "creator", Value: " melville, herman "}}}, "moby typee"},
		{shelfmark.SearchQuery{Filters: []shelfmark.SearchFilter{{Facet: "genre", Value: "http://example.org/genre/sea"}}}, "moby"},
		{shelfmark.SearchQuery{Filters: []shelfmark.SearchFilter{{Facet: "language", Value: "dut"}}}, ""}, // private
		{shelfmark.SearchQuery{Text: "language:ger"}, "atlas"},
		{shelfmark.SearchQuery{Text: "whale language:eng type:text"}, "moby typee"},
		{shelfmark.SearchQuery{Text: `whale -language:eng`}, "atlas"},
		{shelfmark.SearchQuery{Text: `type:"image" OR language:fre`}, "atlas typee"},
		{shelfmark.SearchQuery{Text: "seas language:eng"}, "typee"},
		{shelfmark.SearchQuery{Text: "creator:melville"}, "moby typee"}, // a field term still: words of the creators
	} {
		res, err := search(tc.q)
		if err != nil {
			t.Errorf("%+v: %v", tc.q, err)
			continue
		}
		if got := names(res); got != tc.want {
			t.Errorf("%q %+v: %q, want %q", tc.q.Text, tc.q.Filters, got, tc.want)
		}
		for _, h := range res.Hits {
			if strings.Contains(h.Snippet, " f1") || strings.HasPrefix(h.Snippet, "f1") {
				t.Errorf("%q: a snippet shows a hidden token: %q", tc.q.Text, h.Snippet)
			}
		}
	}
	// filtered counts are the filtered hits' values
	if got := counts(must(shelfmark.SearchQuery{Filters: []shelfmark.SearchFilter{{Facet: "type", Value: "Image"}}, Facets: true})); got != "creator: subject: language:ger=1 type:Image=1 genre:" {
		t.Errorf("filtered facets: %s", got)
	}

	// refused: a facet there is not, named with the facets there are;
	// too many filters; a name with no value
	for _, q := range []shelfmark.SearchQuery{
		{Text: "whale", Filters: []shelfmark.SearchFilter{{Facet: "nope", Value: "x"}}},
		{Filters: []shelfmark.SearchFilter{{Facet: "language", Value: "  "}}},
		{Text: "language:"},
		{Text: `language:""`},
		{Filters: slices.Repeat([]shelfmark.SearchFilter{{Facet: "language", Value: "eng"}}, shelfmark.MaxSearchFilters+1)},
	} {
		_, err := search(q)
		if shelfmark.ErrorCode(err) != shelfmark.EINVALID {
			t.Errorf("%q %+v: %v, want EINVALID", q.Text, q.Filters, err)
		}
		if len(q.Filters) == 1 && q.Filters[0].Facet == "nope" && !strings.Contains(shelfmark.ErrorMessage(err), "creator, subject, language, type, genre") {
			t.Errorf("the facets are not named: %v", err)
		}
	}
	// a name that is no facet is words, as before
	if _, err := search(shelfmark.SearchQuery{Text: "nope:whale"}); err != nil {
		t.Errorf("nope:whale: %v", err)
	}

	// a page of Moby Dick counts its work's values once more as a document,
	// and a grouped search counts the work once
	page := key["moby"] + 1000
	update(t, e, func(tx shelfmark.WriteTx) error {
		return tx.PutSearchDocs(ctx, []shelfmark.SearchDoc{{Key: page, Work: key["moby"], Kind: shelfmark.KindFileSet, Format: "JPEG", Body: "the whale again"}})
	})
	if got := counts(must(shelfmark.SearchQuery{Text: "whale", Facets: true})); !strings.Contains(got, "language:eng=3,") {
		t.Errorf("documents: the page's work's values are not counted with it: %s", got)
	}
	if got := counts(must(shelfmark.SearchQuery{Text: "whale", Facets: true, Group: true})); got != want {
		t.Errorf("grouped: %s, want %s", got, want)
	}
	// a filter matches the record, not the text of its pages
	if got := names(must(shelfmark.SearchQuery{Text: "again language:eng"})); got != "" {
		t.Errorf("again language:eng: %q", got)
	}
	// a changed record's values replace its old ones
	eng := shelfmark.SearchQuery{Filters: []shelfmark.SearchFilter{{Facet: "language", Value: "eng"}}}
	repl := []shelfmark.Statement{dc("title", "Moby Dick"), dc("language", "spa"), dc("description", "a whale")}
	if _, err := e.repo.UpdateResource(ctx, made[0].ID, shelfmark.ResourceUpdate{Replace: &repl}); err != nil {
		t.Fatal(err)
	}
	index(facets)
	if got := names(must(eng)); got != "typee" {
		t.Errorf("after the change, language:eng finds %q", got)
	}
	if got := counts(must(shelfmark.SearchQuery{Text: "whale", Facets: true, Group: true})); got != "creator:Melville, Herman=1 subject: language:eng=1,fre=1,ger=1,spa=1 type:Image=1,Text=1 genre:" {
		t.Errorf("after the change: %s", got)
	}

	// a deleted work's values are gone: a document still of it (a page
	// whose access follows another work) counts nothing
	if err := e.repo.DeleteResource(ctx, made[1].ID, 0); err != nil {
		t.Fatal(err)
	}
	index(facets)
	update(t, e, func(tx shelfmark.WriteTx) error {
		return tx.PutSearchDocs(ctx, []shelfmark.SearchDoc{{Key: key["typee"] + 1000, Work: key["typee"], Access: key["atlas"],
			Kind: shelfmark.KindFileSet, Format: "JPEG", Body: "orphaned kittiwake"}})
	})
	res := must(shelfmark.SearchQuery{Text: "kittiwake", Facets: true})
	if len(res.Hits) != 1 || counts(res) != "creator: subject: language: type: genre:" {
		t.Errorf("a deleted work's values: %d hits, %s", len(res.Hits), counts(res))
	}

	// another list of facets: every record is read again with it
	only := []shelfmark.SearchFacet{{Name: "lang", Label: "Lang", Predicates: []string{shelfmark.NSDC + "language", shelfmark.NSDCTerms + "language"}}}
	if _, err := search(shelfmark.SearchQuery{Filters: []shelfmark.SearchFilter{{Facet: "lang", Value: "ger"}}, FacetSet: only}); err != nil {
		t.Fatal(err)
	}
	index(only)
	res = must(shelfmark.SearchQuery{Text: "whale", Facets: true, Group: true, FacetSet: only})
	if got := counts(res); got != "lang:ger=1,spa=1" {
		t.Errorf("after the list changed: %s", got)
	}
	if got := names(must(shelfmark.SearchQuery{Text: "lang:ger", FacetSet: only})); got != "atlas" {
		t.Errorf("lang:ger after the list changed: %q", got)
	}
}

// cmpName is the name of work k, or its key.
func cmpName(name map[int64]string, k int64) string {
	if n, ok := name[k]; ok {
		return n
	}
	return fmt.Sprint(k)
}
