package preserve

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/rdf"
)

// TestParseOwnNTriples: what rdf.AppendNTriples writes reads back as the
// same statements, escapes, languages and datatypes included, for
// literals of any characters; and a line it does not write (a comment, a
// blank node) is left to the general parser.
func TestParseOwnNTriples(t *testing.T) {
	stmts := []shelfmark.Statement{
		{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral("plain")},
		{Predicate: shelfmark.NSDC + "title", Object: shelfmark.Term{Kind: shelfmark.Literal, Value: "Un livre\n« deux » \"q\" \\ \t\r\b\f\x01\x7f é 𝄞", Lang: "fr"}},
		{Predicate: "http://purl.org/dc/terms/date", Object: shelfmark.Term{Kind: shelfmark.Literal, Value: "1901", Datatype: "http://www.w3.org/2001/XMLSchema#gYear"}},
		{Predicate: "http://purl.org/dc/terms/subject", Object: shelfmark.Term{Kind: shelfmark.IRI, Value: "http://example.org/a b<c>\"{x}|^`\\é"}},
		{Predicate: "http://purl.org/dc/terms/description", Object: shelfmark.NewLiteral("")},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		var b strings.Builder
		for range r.IntN(20) {
			b.WriteRune(rune(r.IntN(0x300)))
		}
		stmts = append(stmts, shelfmark.Statement{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(b.String())})
	}
	data := rdf.AppendNTriples(nil, "urn:shelfmark:bcd", stmts[:3])
	data = rdf.AppendNTriples(data, "urn:shelfmark:fgh", stmts[3:])
	subjects, got, ok := parseOwnNTriples(data)
	if !ok {
		t.Fatalf("not read:\n%s", data)
	}
	for i := range stmts {
		want := stmts[i]
		if !strings.ContainsRune(want.Object.Value, 0xFFFD) && !reflect.DeepEqual(got[i], want) {
			t.Errorf("statement %d: %+v, want %+v", i, got[i], want)
		}
	}
	if len(got) != len(stmts) || subjects[0] != "urn:shelfmark:bcd" || subjects[3] != "urn:shelfmark:fgh" {
		t.Errorf("%d statements, subjects %q", len(got), subjects[:4])
	}
	for _, other := range []string{"# a comment\n", "_:b <http://p> \"x\" .\n", "<urn:s> <http://p> \"x\"\n", "<urn:s> <http://p> \"x\" ."} {
		if _, _, ok := parseOwnNTriples([]byte(other)); ok {
			t.Errorf("%q read as Shelfmark's own", other)
		}
	}
}

// TestTopLevelString: a top-level member is found wherever it is, a
// nested one of the same name is not taken for it, and a document
// without it or not an object is an error.
func TestTopLevelString(t *testing.T) {
	for doc, want := range map[string]string{
		`{"id": "a", "manifest": {}}`:                    "a",
		`{"manifest": {"id": "nested"}, "id": "b"}`:      "b",
		`{"versions": [{"id": 1}], "x": null, "id":"c"}`: "c",
	} {
		if got, err := topLevelString(json.NewDecoder(strings.NewReader(doc)), "id"); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", doc, got, err, want)
		}
	}
	for _, doc := range []string{`{"manifest": {"id": "nested"}}`, `["id", "a"]`, `{"id": 3}`, ``} {
		if got, err := topLevelString(json.NewDecoder(strings.NewReader(doc)), "id"); err == nil {
			t.Errorf("%s: %q, no error", doc, got)
		}
	}
}
