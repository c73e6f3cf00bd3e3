package rdf

import (
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestJSONLD reads a document with a context, relative IRIs, language
// tags, datatypes and IRIs.
func TestJSONLD(t *testing.T) {
	doc := `{
  "@context": {"dcterms": "http://purl.org/dc/terms/", "xsd": "http://www.w3.org/2001/XMLSchema#",
               "title": "dcterms:title", "part": {"@id": "dcterms:hasPart", "@type": "@id"}},
  "@id": "",
  "title": [{"@value": "Titel", "@language": "DE"}, "Plain"],
  "dcterms:date": {"@value": "1959", "@type": "xsd:gYear"},
  "part": ["#p1", "p2", "http://ex/abs"],
  "dcterms:extent": 592
}`
	base := "http://example.org/works/w1"
	got := parseString(t, JSONLD, base, doc)
	want := map[shelfmark.Triple]bool{
		triple(base, dcterms+"title", lang("Titel", "de")):                  true,
		triple(base, dcterms+"title", lit("Plain")):                         true,
		triple(base, dcterms+"date", typed("1959", xsd+"gYear")):            true,
		triple(base, dcterms+"hasPart", iri(base+"#p1")):                    true,
		triple(base, dcterms+"hasPart", iri("http://example.org/works/p2")): true,
		triple(base, dcterms+"hasPart", iri("http://ex/abs")):               true,
		triple(base, dcterms+"extent", typed("592", xsd+"integer")):         true,
	}
	if len(got) != len(want) {
		t.Fatalf("got %d triples, want %d: %v", len(got), len(want), got)
	}
	for _, tr := range got {
		if !want[tr] {
			t.Errorf("unexpected %#v", tr)
		}
	}
}

// TestJSONLDErrors covers syntax positions, blank nodes, remote contexts,
// unmapped keys and named graphs.
func TestJSONLDErrors(t *testing.T) {
	e := parseError(t, JSONLD, testBase, "{\n  \"@id\": \"x\",\n  \"http://ex/p\": tru\n}")
	wantPosition(t, e, 3, 21) // the line break after "tru"
	e = parseError(t, JSONLD, testBase, "{\n  \"@id\": \"x\",\n")
	wantPosition(t, e, 3, 1)
	e = parseError(t, JSONLD, testBase, `{"@id": "x", "http://ex/p": "a"} {}`)
	wantPosition(t, e, 1, 34)

	for _, tc := range []struct{ doc, message string }{
		{`{"http://ex/p": "no id"}`, msgBlankNode},
		{`{"@id": "http://ex/a", "http://ex/p": {"http://ex/q": "nested"}}`, msgBlankNode},
		{`{"@id": "http://ex/a", "http://ex/p": {"@list": ["a"]}}`, msgBlankNode},
		{`{"@context": "http://schema.org/", "@id": "http://ex/a", "name": "x"}`, "remote contexts"},
		{`{"@id": "http://ex/a", "title": "unmapped"}`, "JSON-LD"},
		{`{"@id": "http://ex/g", "@graph": [{"@id": "http://ex/a", "http://ex/p": "x"}]}`, "named graphs"},
		{`"http://ex/doc"`, "JSON object"},
		{`{"@id": "http://ex/a", "http://ex/p": {"@value": "x", "@language": "not a tag"}}`, "JSON-LD"},
	} {
		e := parseError(t, JSONLD, testBase, tc.doc)
		if e.Code != shelfmark.EINVALID || !strings.Contains(e.Message, tc.message) {
			t.Errorf("%s: %s %q, want EINVALID with %q", tc.doc, e.Code, e.Message, tc.message)
		}
	}
}

// TestJSONLDBarePercent: json-gold would drop a statement whose IRI holds a
// bare "%"; it is refused with a reason instead, and a valid %25 is kept.
func TestJSONLDBarePercent(t *testing.T) {
	for _, doc := range []string{
		`{"@id": "", "http://example.org/A%": "x"}`,
		`{"@id": "", "http://example.org/p": {"@id": "http://example.org/o%zz"}}`,
		`{"@id": "http://example.org/s%", "http://example.org/p": "x"}`,
	} {
		_, err := Parse(strings.NewReader(doc), JSONLD, "http://example.org/base")
		if shelfmark.ErrorCode(err) != shelfmark.EINVALID || !strings.Contains(shelfmark.ErrorMessage(err), "percent") {
			t.Errorf("%s: %v", doc, err)
		}
	}
	got, err := Parse(strings.NewReader(`{"@id": "", "http://example.org/A%25": "x"}`), JSONLD, "http://example.org/base")
	if err != nil || len(got) != 1 || got[0].Predicate != "http://example.org/A%25" {
		t.Fatalf("%%25: %v %v", got, err)
	}
}

// TestBarePercentEveryFormat: the same IRI with a bare "%" is refused by
// every reader, so what one format stores another can always read back.
func TestBarePercentEveryFormat(t *testing.T) {
	for mt, doc := range map[string]string{
		Turtle:   `<> <http://example.org/p> <http://example.org/o%zz> .`,
		NTriples: `<http://example.org/s> <http://example.org/p> <http://example.org/o%zz> .`,
		JSONLD:   `{"@context": {"@vocab": "http://example.org/v%"}, "@id": "", "a": "x"}`,
	} {
		_, err := Parse(strings.NewReader(doc), mt, "http://example.org/base")
		if shelfmark.ErrorCode(err) != shelfmark.EINVALID || !strings.Contains(shelfmark.ErrorMessage(err), "percent") {
			t.Errorf("%s: %v", mt, err)
		}
	}
}
