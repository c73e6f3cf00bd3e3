package rdf

import (
	"bytes"
	"cmp"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// sampleStatements has every kind of term the writers must carry.
func sampleStatements() []shelfmark.Statement {
	st := func(p string, o shelfmark.Term) shelfmark.Statement {
		return shelfmark.Statement{Predicate: p, Object: o}
	}
	return []shelfmark.Statement{
		st(shelfmark.NSRDF+"type", iri(shelfmark.NSPCDM+"Object")),
		st(dcterms+"title", lang("Die Blechtrommel", "de")),
		st(dcterms+"title", lang("The Tin Drum", "en-gb")),
		st(dcterms+"title", lit("plain \"quoted\" \\ back\tslash\nnew line\r\u0001\u007f é 😀 \u2028")),
		st(dcterms+"date", typed("1959", xsd+"gYear")),
		st(schema+"numberOfPages", typed("0592", xsd+"integer")),
		st(schema+"price", typed("-12.50", xsd+"decimal")),
		st(schema+"weight", typed("1.2e3", xsd+"double")),
		st(schema+"isFamilyFriendly", typed("true", xsd+"boolean")),
		st(schema+"isFamilyFriendly", typed("1", xsd+"boolean")),
		st(dcterms+"description", lit("")),
		st("http://example.org/vocab/custom", iri("http://example.org/things/é?q=1#frag")),
		st("http://example.org/vocab/custom", typed("x", "http://example.org/types/T")),
		st(dcterms+"a.b.", lit("local name that cannot be compacted")),
		st("urn:x-local:prop", iri("urn:isbn:9780156262422")),
		st(dcterms+"isPartOf", iri("http://example.org/collections/c1")),
		st(dcterms+"title", lang("Le Tambour", "fr")),
	}
}

// sortStatements returns a sorted copy, to compare graphs as sets.
func sortStatements(stmts []shelfmark.Statement) []shelfmark.Statement {
	out := slices.Clone(stmts)
	slices.SortFunc(out, func(a, b shelfmark.Statement) int {
		return cmp.Or(strings.Compare(a.Predicate, b.Predicate), cmp.Compare(a.Object.Kind, b.Object.Kind),
			strings.Compare(a.Object.Value, b.Object.Value), strings.Compare(a.Object.Lang, b.Object.Lang),
			strings.Compare(a.Object.Datatype, b.Object.Datatype))
	})
	return out
}

// TestWriteRoundTrip writes the sample in each RDF syntax and reads it
// back.
func TestWriteRoundTrip(t *testing.T) {
	subject := "http://example.org/works/w1"
	in := sampleStatements()
	for _, mt := range []string{Turtle, NTriples, JSONLD} {
		t.Run(mt, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Write(&buf, mt, subject, in); err != nil {
				t.Fatal(err)
			}
			// The base differs from the subject so that a relative
			// subject in the output would show.
			ts := parseString(t, mt, "http://other.example/", buf.String())
			for _, tr := range ts {
				if tr.Subject != iri(subject) {
					t.Fatalf("subject %v, want %s", tr.Subject, subject)
				}
			}
			got, want := sortStatements(statements(ts)), sortStatements(in)
			if !slices.Equal(got, want) {
				t.Errorf("round trip through %s changed the statements:\n got %v\nwant %v\n%s", mt, got, want, buf.String())
			}
			if mt != JSONLD && !slices.Equal(statements(ts), statements(parseString(t, mt, "", buf.String()))) {
				t.Error("the output depends on the base")
			}
		})
	}
	t.Run(JSON, func(t *testing.T) {
		var buf bytes.Buffer
		if err := Write(&buf, JSON, subject, in); err != nil {
			t.Fatal(err)
		}
		got, err := ParseJSONMetadata(buf.Bytes())
		if err != nil {
			t.Fatalf("%v\n%s", err, buf.String())
		}
		if !slices.Equal(sortStatements(got), sortStatements(in)) {
			t.Errorf("round trip through JSON changed the statements:\n got %v\nwant %v", got, in)
		}
	})
}

// TestWriteTurtleReadable checks the exact Turtle layout.
func TestWriteTurtleReadable(t *testing.T) {
	stmts := []shelfmark.Statement{
		{Predicate: dcterms + "title", Object: lang("Titel", "de")},
		{Predicate: shelfmark.NSRDF + "type", Object: iri(shelfmark.NSPCDM + "Object")},
		{Predicate: dcterms + "title", Object: lit("Title")},
		{Predicate: dcterms + "date", Object: typed("1959", xsd+"gYear")},
		{Predicate: schema + "numberOfPages", Object: typed("592", xsd+"integer")},
		{Predicate: "http://example.org/p", Object: iri("http://example.org/o")},
	}
	var buf bytes.Buffer
	if err := Write(&buf, "text/turtle; charset=utf-8", "http://example.org/works/w1", stmts); err != nil {
		t.Fatal(err)
	}
	want := `@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix pcdm: <http://pcdm.org/models#> .
@prefix schema: <http://schema.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

<http://example.org/works/w1>
    dcterms:title "Titel"@de , "Title" ;
    a pcdm:Object ;
    dcterms:date "1959"^^xsd:gYear ;
    schema:numberOfPages 592 ;
    <http://example.org/p> <http://example.org/o> .
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}

	buf.Reset()
	if err := Write(&buf, Turtle, "http://example.org/works/w1", nil); err != nil || buf.Len() != 0 {
		t.Errorf("no statements: %q, %v", buf.String(), err)
	}
}

// TestWriteNTriples checks the exact N-Triples lines.
func TestWriteNTriples(t *testing.T) {
	stmts := []shelfmark.Statement{
		{Predicate: dcterms + "title", Object: lang("a \"b\"\n", "de")},
		{Predicate: dcterms + "date", Object: typed("1959", xsd+"gYear")},
		{Predicate: dcterms + "isPartOf", Object: iri("http://example.org/c")},
	}
	var buf bytes.Buffer
	if err := Write(&buf, NTriples, "http://example.org/w", stmts); err != nil {
		t.Fatal(err)
	}
	want := `<http://example.org/w> <http://purl.org/dc/terms/title> "a \"b\"\n"@de .
<http://example.org/w> <http://purl.org/dc/terms/date> "1959"^^<http://www.w3.org/2001/XMLSchema#gYear> .
<http://example.org/w> <http://purl.org/dc/terms/isPartOf> <http://example.org/c> .
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

// TestWriteJSONLD checks the JSON-LD document's context and id.
func TestWriteJSONLD(t *testing.T) {
	stmts := []shelfmark.Statement{
		{Predicate: dcterms + "title", Object: lang("Titel", "de")},
		{Predicate: dcterms + "date", Object: typed("1959", xsd+"gYear")},
		{Predicate: "http://example.org/p", Object: iri("http://example.org/o")},
	}
	var buf bytes.Buffer
	if err := Write(&buf, JSONLD, "http://example.org/w", stmts); err != nil {
		t.Fatal(err)
	}
	want := `{"@context":{"dcterms":"http://purl.org/dc/terms/","xsd":"http://www.w3.org/2001/XMLSchema#"},"@id":"http://example.org/w","dcterms:title":{"@value":"Titel","@language":"de"},"dcterms:date":{"@value":"1959","@type":"xsd:gYear"},"http://example.org/p":{"@id":"http://example.org/o"}}`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

// TestWriteErrors refuses unknown media types and reports writer errors.
func TestWriteErrors(t *testing.T) {
	err := Write(&bytes.Buffer{}, "text/html", "http://example.org/w", nil)
	if shelfmark.ErrorCode(err) != shelfmark.ENOTACCEPTABLE {
		t.Errorf("text/html: %v, want ENOTACCEPTABLE", err)
	}
	boom := errors.New("boom")
	err = Write(failingWriter{boom}, Turtle, "http://example.org/w", sampleStatements())
	if !errors.Is(err, boom) {
		t.Errorf("failing writer: %v", err)
	}
}

// failingWriter fails every write.
type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// TestGroupByPredicate checks the grouping on both sides of its switch from
// a bit set to a map.
func TestGroupByPredicate(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 200} {
		stmts := make([]shelfmark.Statement, n)
		for i := range stmts {
			stmts[i] = shelfmark.Statement{Predicate: string(rune('a' + i%7)), Object: lit(itoa(i))}
		}
		order := groupByPredicate(stmts)
		if len(order) != n {
			t.Fatalf("n=%d: %d indices", n, len(order))
		}
		seen := map[string]bool{}
		for k, i := range order {
			p := stmts[i].Predicate
			if k > 0 && stmts[order[k-1]].Predicate != p {
				if seen[p] {
					t.Fatalf("n=%d: predicate %s is split", n, p)
				}
			}
			if k > 0 && stmts[order[k-1]].Predicate == p && order[k-1] > i {
				t.Fatalf("n=%d: values out of order", n)
			}
			seen[p] = true
		}
		if n > 0 && stmts[order[0]].Predicate != "a" {
			t.Fatalf("n=%d: first group is %s", n, stmts[order[0]].Predicate)
		}
	}
}
