package http

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// facetsFixture is a repository with a facet an administrator added
// (genre), three public works in English, French and German and a
// private English one, indexed with the repository's facets.
type facetsFixture struct {
	e                     *testEnv
	facets                []shelfmark.SearchFacet
	eng, fre, ger, secret shelfmark.ID
}

const testGenre = "http://example.org/terms/genre"

// testFacets are the default facets and genre.
func testFacets() []shelfmark.SearchFacet {
	return append(shelfmark.DefaultSearchFacets(), shelfmark.SearchFacet{Name: "genre", Label: "Genre", Predicates: []string{testGenre}})
}

func newFacetsFixture(t *testing.T, facets []shelfmark.SearchFacet) *facetsFixture {
	t.Helper()
	e := newEnv(t, Options{SearchFacets: facets})
	ctx := context.Background()
	lit := func(p, s string) shelfmark.Statement {
		return shelfmark.Statement{Predicate: p, Object: shelfmark.NewLiteral(s)}
	}
	create := func(vis shelfmark.Visibility, title, lang, typ, genre string) shelfmark.ID {
		t.Helper()
		md := []shelfmark.Statement{lit(shelfmark.NSDC+"title", title), lit(shelfmark.NSDC+"language", lang), lit(shelfmark.NSDCTerms+"type", typ),
			lit(shelfmark.NSDC+"description", "A kittiwake flew over."), lit(testGenre, genre)}
		r, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: vis, Metadata: md})
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	f := &facetsFixture{e: e, facets: facets}
	f.eng = create(shelfmark.Public, "Kittiwakes of the north", "eng", "Text", "Natural history")
	f.fre = create(shelfmark.Public, "Les mouettes", "fre", "Text", "Natural history")
	f.ger = create(shelfmark.Public, "Seevögel", "ger", "Image", "Atlas")
	f.secret = create(shelfmark.Private, "Secret kittiwakes", "eng", "Text", "Diary")
	if err := shelfmark.NewSearchIndexer(e.db, shelfmark.IndexerOptions{Facets: facets}).CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestSearchFacetsAPI: GET /api/v1/search gives every facet of the
// repository under facets (the built-in ones and the metadata ones,
// an administrator's too), counted over what the caller may read; f
// and name:value in q narrow the hits; a filter on a facet there is not,
// a facet name without a value and too many filters are 400 naming the
// facets; a search with facets runs the statements of one without.
func TestSearchFacetsAPI(t *testing.T) {
	f := newFacetsFixture(t, testFacets())
	get := func(query string) map[string]any {
		t.Helper()
		r := f.e.do("GET", "/api/v1/search?"+query, nil, as("")...).want(t, http.StatusOK)
		var b map[string]any
		r.json(t, &b)
		return b
	}
	facet := func(b map[string]any, name string) string {
		fs, _ := b["facets"].(map[string]any)
		vals, ok := fs[name].([]any)
		if !ok {
			return "missing"
		}
		var out []string
		for _, v := range vals {
			m := v.(map[string]any)
			out = append(out, fmt.Sprintf("%s=%v", m["value"], m["count"]))
		}
		return strings.Join(out, ",")
	}
	hits := func(b map[string]any) []string {
		var out []string
		for _, h := range b["hits"].([]any) {
			out = append(out, h.(map[string]any)["id"].(string))
		}
		slices.Sort(out)
		return out
	}
	b := get("q=kittiwake")
	for name, want := range map[string]string{"language": "eng=1,fre=1,ger=1", "type": "Text=2,Image=1", "genre": "Natural history=2,Atlas=1",
		"creator": "", "subject": "", "kind": "work=3", "format": "", "decade": "", "collection": ""} {
		if got := facet(b, name); got != want {
			t.Errorf("facets.%s: %q, want %q", name, got, want)
		}
	}
	sorted := func(ids ...shelfmark.ID) []string {
		var out []string
		for _, id := range ids {
			out = append(out, string(id))
		}
		slices.Sort(out)
		return out
	}
	for query, want := range map[string][]string{
		"q=kittiwake&f=language:eng":                           sorted(f.eng),
		"f=type:Text":                                          sorted(f.eng, f.fre),
		"f=type:text&f=language:fre":                           sorted(f.fre),
		"f=" + url.QueryEscape("genre:natural history"):        sorted(f.eng, f.fre),
		"q=" + url.QueryEscape(`kittiwake type:"image"`):       sorted(f.ger),
		"q=" + url.QueryEscape("kittiwake -language:eng"):      sorted(f.fre, f.ger),
		"q=" + url.QueryEscape("language:eng OR language:ger"): sorted(f.eng, f.ger),
	} {
		if got := hits(get(query)); !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", query, got, want)
		}
	}
	// filtered facets count the filtered hits
	if got := facet(get("f=type:Text"), "language"); got != "eng=1,fre=1" {
		t.Errorf("f=type:Text: language %q", got)
	}
	// an administrator counts the private work too
	ar := f.e.do("GET", "/api/v1/search?q=kittiwake", nil).want(t, http.StatusOK)
	var ab map[string]any
	ar.json(t, &ab)
	if got := facet(ab, "language"); got != "eng=2,fre=1,ger=1" {
		t.Errorf("an administrator's language facet: %q", got)
	}
	// refused, naming the facets
	for _, query := range []string{"f=nope:x", "q=kittiwake&f=nope:x", "f=language", "f=kind:work", "q=language:",
		"f=" + strings.Repeat("&f=language:eng", shelfmark.MaxSearchFilters+1)} {
		r := f.e.do("GET", "/api/v1/search?"+query, nil, as("")...)
		eb := r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
		if strings.Contains(query, "nope") && !strings.Contains(eb.Message, "creator, subject, language, type, genre") {
			t.Errorf("%s: the message does not name the facets: %q", query, eb.Message)
		}
	}
	// the facets are counted in the search's statement: a search runs as
	// many statements with metadata facets as without
	with := f.e.do("GET", "/api/v1/search?q=kittiwake", nil, as("")...).want(t, http.StatusOK)
	plain := newFacetsFixture(t, []shelfmark.SearchFacet{{Name: "kind"}})
	without := plain.e.do("GET", "/api/v1/search?q=kittiwake", nil, as("")...).want(t, http.StatusOK)
	if len(with.Stmts) != len(without.Stmts) {
		t.Errorf("statements: %d with metadata facets, %d without:\n%s", len(with.Stmts), len(without.Stmts), strings.Join(with.Stmts, "\n"))
	}
}
