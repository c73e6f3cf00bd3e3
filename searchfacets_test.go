package shelfmark

import (
	"slices"
	"strings"
	"testing"
)

// TestParseSearchFacets: the administrator's list reads names of the
// default and built-in facets, predicates with or without a label, and
// refuses what CheckSearchFacets refuses, naming the fault; it writes
// back as it reads.
func TestParseSearchFacets(t *testing.T) {
	def, err := ParseSearchFacets("  ")
	if err != nil || !slices.EqualFunc(def, DefaultSearchFacets(), func(a, b SearchFacet) bool { return a.Name == b.Name }) {
		t.Fatalf("empty: %v %v", def, err)
	}
	got, err := ParseSearchFacets("language; genre(Genre of work)=http://example.org/genre | https://schema.org/genre;\nkind;series=http://example.org/series")
	if err != nil {
		t.Fatal(err)
	}
	want := []SearchFacet{
		{Name: "language", Label: "Language", Predicates: dcPair("language")},
		{Name: "genre", Label: "Genre of work", Predicates: []string{"http://example.org/genre", "https://schema.org/genre"}},
		{Name: "kind", Label: "Kind"},
		{Name: "series", Label: "Series", Predicates: []string{"http://example.org/series"}},
	}
	if !slices.EqualFunc(got, want, func(a, b SearchFacet) bool {
		return a.Name == b.Name && a.Label == b.Label && slices.Equal(a.Predicates, b.Predicates)
	}) {
		t.Errorf("parsed %+v\nwant %+v", got, want)
	}
	again, err := ParseSearchFacets(FormatSearchFacets(got))
	if err != nil || FormatSearchFacets(again) != FormatSearchFacets(got) {
		t.Errorf("written and read again: %v %v", again, err)
	}
	for spec, fault := range map[string]string{
		"publisher":                 "names no predicate",
		"Language":                  "not one",
		"language;language":         "twice",
		"genre=not an iri":          "not a full IRI",
		"genre=":                    "no predicate",
		"kind=http://example.org/k": "built in",
		strings.Repeat("kind;", 17): "At most 16",
		"g=" + strings.Repeat("http://e.org/p|", 9): "at most 8",
	} {
		_, err := ParseSearchFacets(spec)
		if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), fault) {
			t.Errorf("%q: %v, want EINVALID saying %q", spec, err, fault)
		}
	}
}

// TestSearchFacetTerms: a facet's name before a value is a facet term
// (not for the search fields, whose names keep searching words), its
// value cleaned, and its token the indexed one whatever the case; Filters
// follow the text's terms; the limits hold.
func TestSearchFacetTerms(t *testing.T) {
	q := SearchQuery{Text: `whale Language:ENG -type:"Moving   Image" creator:melville nope:x`, FacetSet: DefaultSearchFacets(),
		Filters: []SearchFilter{{Facet: "creator", Value: " Melville, Herman "}}}
	terms, err := q.Terms()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tm := range terms {
		s := tm.Field + "/" + tm.Facet + "/" + tm.Text
		if tm.Not {
			s = "-" + s
		}
		got = append(got, s)
	}
	want := []string{"//whale", "facet/language/ENG", "-facet/type/Moving Image", "creator//melville", "//nope:x", "facet/creator/Melville, Herman"}
	if !slices.Equal(got, want) {
		t.Errorf("terms %q\nwant %q", got, want)
	}
	if terms[1].FacetToken() != SearchFacetToken("language", "eng") || terms[1].FacetToken() == SearchFacetToken("type", "eng") {
		t.Errorf("tokens: %s", terms[1].FacetToken())
	}
	if !SearchRecordsOnly(terms[1:2]) {
		t.Error("a facet term alone matches records only")
	}
	if only, err := (&SearchQuery{Filters: []SearchFilter{{Facet: "language", Value: "eng"}}, FacetSet: DefaultSearchFacets()}).Terms(); err != nil || len(only) != 1 {
		t.Errorf("filters alone: %v %v", only, err)
	}
	for _, bad := range []SearchQuery{
		{Text: "language:", FacetSet: DefaultSearchFacets()},
		{Text: "whale", Filters: []SearchFilter{{Facet: "nope", Value: "x"}}, FacetSet: DefaultSearchFacets()},
		{Text: strings.Repeat("language:eng ", MaxSearchFilters+1), FacetSet: DefaultSearchFacets()},
	} {
		if _, err := bad.Terms(); ErrorCode(err) != EINVALID {
			t.Errorf("%q %v: %v, want EINVALID", bad.Text, bad.Filters, err)
		}
	}
	// values as indexed: trimmed, spaces folded, capped
	long := strings.Repeat("é", MaxFacetValueBytes)
	if v := FacetValue(long); len(v) > MaxFacetValueBytes || !strings.HasPrefix(long, v) {
		t.Errorf("a long value: %d bytes", len(v))
	}
	recs := recordFacets([]Field{{Predicate: NSDC + "language", Objects: []Term{NewLiteral(" eng"), NewLiteral("eng "), NewIRI("http://id.loc.gov/vocabulary/iso639-2/fre")}},
		{Predicate: NSDCTerms + "language", Objects: []Term{NewLiteral("eng")}}}, DefaultSearchFacets())
	if len(recs) != 2 || recs[0] != (SearchFacetValue{"language", "eng"}) || recs[1].Value != "http://id.loc.gov/vocabulary/iso639-2/fre" {
		t.Errorf("a record's values: %+v", recs)
	}
	if searchFacetsFingerprint(DefaultSearchFacets()) == searchFacetsFingerprint(DefaultSearchFacets()[:3]) {
		t.Error("the fingerprint does not follow the list")
	}
}
