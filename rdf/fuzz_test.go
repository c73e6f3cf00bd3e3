package rdf

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shelfmark/shelfmark"
)

// fuzzBase is the base IRI of fuzzed documents.
const fuzzBase = "http://example.org/works/w1"

// checkParsed is the oracle of the fuzz tests: a document either fails
// with EINVALID or yields valid terms that survive a round trip through
// the Turtle and N-Triples writers (and JSON-LD when withJSONLD).
func checkParsed(t *testing.T, mediaType string, doc []byte, withJSONLD bool) {
	// A hang would only stall the fuzzer; this turns it into a crash that
	// records the input.
	timer := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("hang on %q", doc)) })
	defer timer.Stop()
	ts, err := Parse(bytes.NewReader(doc), mediaType, fuzzBase, MaxTriples(1000))
	if err != nil {
		var e *shelfmark.Error
		if !errors.As(err, &e) || e.Code != shelfmark.EINVALID {
			t.Fatalf("error %v (%T) is not EINVALID", err, err)
		}
		return
	}
	bySubject := map[string][]shelfmark.Statement{}
	var subjects []string
	for _, tr := range ts {
		checkTerm(t, tr.Subject, true)
		checkTerm(t, shelfmark.NewIRI(tr.Predicate), true)
		checkTerm(t, tr.Object, false)
		s := tr.Subject.Value
		if _, ok := bySubject[s]; !ok {
			subjects = append(subjects, s)
		}
		bySubject[s] = append(bySubject[s], shelfmark.Statement{Predicate: tr.Predicate, Object: tr.Object})
	}
	types := []string{Turtle, NTriples}
	if withJSONLD {
		types = append(types, JSONLD)
	}
	for _, s := range subjects {
		in := bySubject[s]
		for _, mt := range types {
			var buf bytes.Buffer
			if err := Write(&buf, mt, s, in); err != nil {
				t.Fatalf("Write(%s): %v", mt, err)
			}
			back, err := Parse(&buf, mt, "http://other.example/")
			if err != nil {
				t.Fatalf("reading back %s: %v\n%s", mt, err, buf.String())
			}
			want := in
			got := statements(back)
			if mt == JSONLD {
				want = shelfmark.DedupeStatements(slices.Clone(want))
				got = shelfmark.DedupeStatements(got)
			}
			if !slices.Equal(sortStatements(got), sortStatements(want)) {
				t.Fatalf("round trip through %s:\n got %v\nwant %v", mt, got, want)
			}
		}
	}
}

// checkTerm fails the test for a term the repository could not store.
func checkTerm(t *testing.T, term shelfmark.Term, mustBeIRI bool) {
	if term.Kind == shelfmark.IRI {
		if reason := checkIRI(term.Value); reason != "" {
			t.Fatalf("bad IRI %q: %s", term.Value, reason)
		}
		return
	}
	if mustBeIRI {
		t.Fatalf("literal %v where an IRI belongs", term)
	}
	if term.Lang != "" {
		if l, ok := normalizeLang(term.Lang); !ok || l != term.Lang || term.Datatype != "" {
			t.Fatalf("bad language tag in %#v", term)
		}
	}
	if term.Datatype != "" && (checkIRI(term.Datatype) != "" || term.Datatype == shelfmark.XSDString) {
		t.Fatalf("bad datatype in %#v", term)
	}
}

// turtleSeeds are valid and broken Turtle documents.
var turtleSeeds = []string{
	`@prefix dcterms: <http://purl.org/dc/terms/> . <> dcterms:title "x"@en, 'y' ; a <#C> .`,
	"PREFIX : <http://ex/#>\nBASE <http://ex/b/>\n<s> :p \"\"\"multi\nline\"\"\" , 1, -2.5, 3e4, true, :a\\-b, () .",
	`<a> <b> "x\u00e9\U0001F600\t" ; <c> "1999"^^<http://www.w3.org/2001/XMLSchema#gYear> .`,
	".0",                                    // crashes github.com/knakk/rdf's lexer goroutine
	"<http://ex/a> <http://ex/p> ; ; ; 5 .", // leaks a github.com/knakk/rdf goroutine
	`_:b <p> [ <q> "x" ] .`,
	`<a> <b> "unterminated`,
	`<a> <b> '''x''''`,
	`@prefix x: <http://ex/> . x:a x:b x:c.d. x:e x:f x:g .`,
	"<a> <b> \"\\uD800\" .",
	"\uFEFF<a> <b> <c> .",
}

// FuzzParseTurtle checks that no input makes the Turtle reader panic, hang
// or return anything but EINVALID or storable, round-tripping triples.
func FuzzParseTurtle(f *testing.F) {
	for _, s := range turtleSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkParsed(t, Turtle, doc, false)
		if !utf8.Valid(doc) {
			// Most random bytes are not UTF-8 and stop at the first
			// check; read them as text too, to reach the grammar.
			checkParsed(t, Turtle, bytes.ToValidUTF8(doc, []byte("\uFFFD")), false)
		}
	})
}

// FuzzParseNTriples is FuzzParseTurtle for N-Triples.
func FuzzParseNTriples(f *testing.F) {
	for _, s := range []string{
		"<http://ex/a> <http://ex/p> \"x\"@en .\n<http://ex/a> <http://ex/p> <http://ex/o> . # c\r\n",
		"<http://ex/a> <http://ex/p> \"01\"^^<http://www.w3.org/2001/XMLSchema#integer> .",
		"<> <http://ex/p> <> .\n<#x> <http://ex/p> \"<>\" .",
		"<http://ex/a> <http://ex/p> \"esc \\t\\n\\\"\\u00e9\\U0001F600\" .",
		"_:b <http://ex/p> \"x\" .",
		"<http://ex/a> <http://ex/p> \"x\" <http://ex/g> .",
		"<http://ex/a> <http://ex/p> \"x\\u12\" .",
		"<http://ex/a b> <http://ex/p> \"x\" .",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkParsed(t, NTriples, doc, false)
		if !utf8.Valid(doc) {
			// Most random bytes are not UTF-8 and stop at the first
			// check; read them as text too, to reach the grammar.
			checkParsed(t, NTriples, bytes.ToValidUTF8(doc, []byte("\uFFFD")), false)
		}
	})
}

// FuzzParseJSONLD is FuzzParseTurtle for JSON-LD, round-tripping through
// the JSON-LD writer too.
func FuzzParseJSONLD(f *testing.F) {
	for _, s := range []string{
		`{"@context": {"dc": "http://purl.org/dc/elements/1.1/"}, "@id": "", "dc:title": [{"@value": "x", "@language": "EN"}, "y"]}`,
		`{"@id": "http://ex/a", "http://ex/p": {"@id": "#b"}, "http://ex/q": {"@value": "1", "@type": "http://ex/T"}}`,
		`[{"@id": "http://ex/a", "http://ex/p": 1.5}, {"@id": "http://ex/b", "http://ex/p": true}]`,
		`{"@context": {"@vocab": "http://ex/v#", "@base": "http://ex/base/"}, "@id": "x", "p": "v"}`,
		`{"@id": "http://ex/a", "http://ex/p": {"http://ex/q": "blank"}}`,
		`{"@context": "http://schema.org/", "name": "x"}`,
		`{"@id": "http://ex/a", "http://ex/p": {"@list": [1, 2]}}`,
		`{"@id": "http://ex/g", "@graph": {"@id": "http://ex/a", "http://ex/p": "x"}}`,
		"{\n \"@id\": \"x\",\n \"http://ex/p\": tru\n}",
		`{"@context": {"p": {"@id": "http://ex/p", "@reverse": true}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		checkParsed(t, JSONLD, doc, true)
	})
}

// FuzzParseJSONMetadata checks that plain JSON metadata either fails with
// EINVALID or reads back unchanged after JSONMetadata.
func FuzzParseJSONMetadata(f *testing.F) {
	for _, s := range []string{
		`{"dcterms:title": [{"@value": "x", "@language": "EN"}, "y"], "dcterms:date": {"@value": "1959", "@type": "xsd:gYear"}}`,
		`{"http://ex/p": {"@id": "http://ex/o"}, "urn:x:p": "\u00e9\"", "dc:title": "a", "dc:title": "b"}`,
		`{"dcterms:date": 1959}`,
		`{"foo:bar": "x"}`,
		`[]`,
		"{\"dcterms:title\": \"x\",\n  \"dcterms:date\" \"1959\"\n}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		stmts, err := ParseJSONMetadata(doc)
		if err != nil {
			var e *shelfmark.Error
			if !errors.As(err, &e) || e.Code != shelfmark.EINVALID {
				t.Fatalf("error %v (%T) is not EINVALID", err, err)
			}
			return
		}
		for _, st := range stmts {
			checkTerm(t, shelfmark.NewIRI(st.Predicate), true)
			checkTerm(t, st.Object, false)
		}
		back, err := ParseJSONMetadata(JSONMetadata(stmts))
		if err != nil {
			t.Fatalf("reading back: %v\n%s", err, JSONMetadata(stmts))
		}
		var want []shelfmark.Statement
		for _, i := range groupByPredicate(stmts) {
			want = append(want, stmts[i])
		}
		if !slices.Equal(back, want) {
			t.Fatalf("round trip:\n got %v\nwant %v", back, want)
		}
	})
}
