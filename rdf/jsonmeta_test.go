package rdf

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestParseJSONMetadata reads every accepted value shape, in document
// order.
func TestParseJSONMetadata(t *testing.T) {
	doc := `{
  "dcterms:title": [{"@value": "Titel", "@language": "DE"}, "Title"],
  "http://purl.org/dc/terms/date": {"@value": "1959", "@type": "xsd:gYear"},
  "dcterms:isPartOf": {"@id": "http://example.org/collections/c1"},
  "rdf:type": {"@id": "pcdm:Object"},
  "dc:creator": {"@value": "Grass, Günter"},
  "schema:price": {"@value": "12.50", "@type": "http://www.w3.org/2001/XMLSchema#decimal"},
  "dcterms:alternative": {"@value": "x", "@type": "xsd:string"},
  "urn:x-local:prop": "urn key",
  "dcterms:subject": []
}`
	got, err := ParseJSONMetadata([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := []shelfmark.Statement{
		{Predicate: dcterms + "title", Object: lang("Titel", "de")},
		{Predicate: dcterms + "title", Object: lit("Title")},
		{Predicate: dcterms + "date", Object: typed("1959", xsd+"gYear")},
		{Predicate: dcterms + "isPartOf", Object: iri("http://example.org/collections/c1")},
		{Predicate: shelfmark.NSRDF + "type", Object: iri(shelfmark.NSPCDM + "Object")},
		{Predicate: shelfmark.NSDC + "creator", Object: lit("Grass, Günter")},
		{Predicate: schema + "price", Object: typed("12.50", xsd+"decimal")},
		{Predicate: dcterms + "alternative", Object: lit("x")},
		{Predicate: "urn:x-local:prop", Object: lit("urn key")},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

// TestJSONMetadataShape checks the output: prefixed keys, strings for plain
// literals, arrays only for several values, order of first appearance.
func TestJSONMetadataShape(t *testing.T) {
	stmts := []shelfmark.Statement{
		{Predicate: dcterms + "title", Object: lit("Title")},
		{Predicate: dcterms + "date", Object: typed("1959", xsd+"gYear")},
		{Predicate: dcterms + "title", Object: lang("Titel", "de")},
		{Predicate: "http://example.org/p", Object: iri("http://example.org/o")},
	}
	raw := JSONMetadata(stmts)
	want := `{"dcterms:title":["Title",{"@value":"Titel","@language":"de"}],"dcterms:date":{"@value":"1959","@type":"xsd:gYear"},"http://example.org/p":{"@id":"http://example.org/o"}}`
	if string(raw) != want {
		t.Errorf("got  %s\nwant %s", raw, want)
	}
	// It embeds in other JSON as is.
	b, err := json.Marshal(map[string]any{"metadata": raw})
	if err != nil || !strings.Contains(string(b), `"dcterms:date":{"@value":"1959"`) {
		t.Errorf("embedding: %s %v", b, err)
	}
	if got := string(JSONMetadata(nil)); got != "{}" {
		t.Errorf("no statements: %s", got)
	}
	if got := string(JSONMetadata([]shelfmark.Statement{{Predicate: "http://p", Object: lit("a\x01\"\\\u2028\xff")}})); got != `{"http://p":"a\u0001\"\\\u2028\ufffd"}` {
		t.Errorf("escapes: %s", got)
	}
}

// TestParseJSONMetadataErrors names the key in every error.
func TestParseJSONMetadataErrors(t *testing.T) {
	for _, tc := range []struct{ doc, key, message string }{
		{`{"foo:title": "x"}`, "foo:title", `prefix "foo" is not known`},
		{`{"title": "x"}`, "title", "neither a prefixed name"},
		{`{"dcterms:date": 1959}`, "dcterms:date", "numbers"},
		{`{"dcterms:date": true}`, "dcterms:date", "booleans"},
		{`{"dcterms:date": null}`, "dcterms:date", "a value must be"},
		{`{"dcterms:title": [["x"]]}`, "dcterms:title", "nested"},
		{`{"dcterms:title": {"@value": "x", "@language": "de", "@type": "xsd:string"}}`, "dcterms:title", "both"},
		{`{"dcterms:title": {"@value": 5}}`, "dcterms:title", `"@value" must be a string`},
		{`{"dcterms:title": {"@language": "de"}}`, "dcterms:title", "a value must be"},
		{`{"dcterms:title": {"@value": "x", "@language": "1x"}}`, "dcterms:title", "not a language tag"},
		{`{"dcterms:title": {"@value": "x", "@lang": "de"}}`, "dcterms:title", `"@lang" is not allowed`},
		{`{"dcterms:date": {"@value": "x", "@type": "foo:bar"}}`, "dcterms:date", `the @type: the prefix "foo"`},
		{`{"dcterms:isPartOf": {"@id": "relative/path"}}`, "dcterms:isPartOf", "the @id"},
		{`{"dcterms:isPartOf": {"@id": "http://ex/a b"}}`, "dcterms:isPartOf", "IRIs may not contain"},
		{`{"dcterms:isPartOf": {"@id": "http://ex/a", "@value": "x"}}`, "dcterms:isPartOf", "other members"},
		{`{"@context": {}}`, "@context", "application/ld+json"},
		{`{"rdf:type": {"@value": "x", "@type": "rdf:langString"}}`, "rdf:type", "needs a language tag"},
	} {
		_, err := ParseJSONMetadata([]byte(tc.doc))
		e, ok := err.(*shelfmark.Error)
		if !ok || e.Code != shelfmark.EINVALID {
			t.Errorf("%s: %v, want EINVALID", tc.doc, err)
			continue
		}
		if !strings.Contains(e.Message, `"`+tc.key+`"`) || !strings.Contains(e.Message, tc.message) || e.Details["key"] != tc.key {
			t.Errorf("%s: message %q, details %v; want the key %q and %q", tc.doc, e.Message, e.Details, tc.key, tc.message)
		}
	}
	for _, doc := range []string{`[]`, `"x"`, `null`} {
		if _, err := ParseJSONMetadata([]byte(doc)); shelfmark.ErrorCode(err) != shelfmark.EINVALID {
			t.Errorf("%s: %v", doc, err)
		}
	}
	_, err := ParseJSONMetadata([]byte("{\n  \"dcterms:title\": \"x\",\n  \"dcterms:date\" \"1959\"\n}"))
	e, _ := err.(*shelfmark.Error)
	if e == nil {
		t.Fatalf("syntax error: %v", err)
	}
	wantPosition(t, e, 3, 18)
}

// TestJSONMetadataRoundTrip writes and reads back the sample statements in
// order of predicate groups.
func TestJSONMetadataRoundTrip(t *testing.T) {
	in := sampleStatements()
	got, err := ParseJSONMetadata(JSONMetadata(in))
	if err != nil {
		t.Fatal(err)
	}
	var want []shelfmark.Statement
	for _, i := range groupByPredicate(in) {
		want = append(want, in[i])
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

// TestParseJSONMetadataKeys keeps the document order of escaped and
// repeated keys, nested objects aside (keys that are not UTF-8 are refused:
// see TestJSONMustBeUTF8).
func TestParseJSONMetadataKeys(t *testing.T) {
	doc := "{\"dcterms:title\": \"a\", \"dcterms:\\u0064ate\": \"1959\", \"http://ex/\\u00e9\": {\"@value\": \"{\\\"x\\\":[1,2]}\"}, \"dcterms:title\": [\"b\", \"c\"]}"
	got, err := ParseJSONMetadata([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := []shelfmark.Statement{
		{Predicate: dcterms + "title", Object: lit("b")}, // a repeated key keeps its last value
		{Predicate: dcterms + "title", Object: lit("c")},
		{Predicate: dcterms + "date", Object: lit("1959")},
		{Predicate: "http://ex/\u00e9", Object: lit(`{"x":[1,2]}`)},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	// Many keys take the map path.
	var b strings.Builder
	b.WriteString("{")
	for i := 0; i < 100; i++ {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"http://ex/p` + itoa(99-i) + `": "v"`)
	}
	b.WriteString(`, "http://ex/p5": "w"}`)
	got, err = ParseJSONMetadata([]byte(b.String()))
	if err != nil || len(got) != 100 || got[0].Predicate != "http://ex/p99" || got[94] != (shelfmark.Statement{Predicate: "http://ex/p5", Object: lit("w")}) {
		t.Errorf("100 keys: %v %v", len(got), err)
	}
}
