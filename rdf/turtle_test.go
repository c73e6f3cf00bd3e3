package rdf

import (
	"errors"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/shelfmark/shelfmark"
)

const (
	dcterms = "http://purl.org/dc/terms/"
	schema  = "http://schema.org/"
	xsd     = "http://www.w3.org/2001/XMLSchema#"
)

// TestTurtleW3CStyle reads one document with the features of the W3C Turtle
// test suite that apply without blank nodes: directives in both spellings,
// comments, prefixed names with escapes, a, ; and , lists, every quoting
// style, escapes, language tags, datatypes, numbers, booleans and relative
// IRIs.
func TestTurtleW3CStyle(t *testing.T) {
	doc := `# A Turtle document in the styles of the W3C test suite.
@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix xsd:<http://www.w3.org/2001/XMLSchema#>.
PREFIX schema: <http://schema.org/>
prefix : <http://example.org/vocab#>
@base <http://example.org/works/> .

<w1> dcterms:title "Die Blechtrommel"@DE-de , 'The Tin Drum'@en ; # trailing comment
    dcterms:description """A novel
in three "books"."""@en ;
    dcterms:date "1959"^^xsd:gYear ; dcterms:created "1959-01-01"^^<http://www.w3.org/2001/XMLSchema#date> ;
    schema:numberOfPages 592 , -1 , +3 ;
    schema:price 12.50 , .5 , -0.5 ;
    schema:weight 1.2e3 , 1E-2 , 1.e5 , .5e1 ;
    schema:isFamilyFriendly true , false ;
    dcterms:alternative "tab\tquote\"back\\slash\u00e9\U0001F600" , '''single ''quoted'' long''' , "" ;
    a schema:Book ;
    dcterms:isPartOf <../collections/c1> , <#frag> , <> , <?q=1> , <//other.example/x> ;
    :local\-name\.x :a%20b , :123 , :, : ;
    dcterms:subject () ;
    dcterms:plain "x"^^xsd:string ;
    .
BASE <http://example.org/other/>
<w2> <p> "ok" .
`
	w1 := "http://example.org/works/w1"
	w2 := "http://example.org/other/w2"
	v := "http://example.org/vocab#"
	want := []shelfmark.Triple{
		triple(w1, dcterms+"title", lang("Die Blechtrommel", "de-de")),
		triple(w1, dcterms+"title", lang("The Tin Drum", "en")),
		triple(w1, dcterms+"description", lang("A novel\nin three \"books\".", "en")),
		triple(w1, dcterms+"date", typed("1959", xsd+"gYear")),
		triple(w1, dcterms+"created", typed("1959-01-01", xsd+"date")),
		triple(w1, schema+"numberOfPages", typed("592", xsd+"integer")),
		triple(w1, schema+"numberOfPages", typed("-1", xsd+"integer")),
		triple(w1, schema+"numberOfPages", typed("+3", xsd+"integer")),
		triple(w1, schema+"price", typed("12.50", xsd+"decimal")),
		triple(w1, schema+"price", typed(".5", xsd+"decimal")),
		triple(w1, schema+"price", typed("-0.5", xsd+"decimal")),
		triple(w1, schema+"weight", typed("1.2e3", xsd+"double")),
		triple(w1, schema+"weight", typed("1E-2", xsd+"double")),
		triple(w1, schema+"weight", typed("1.e5", xsd+"double")),
		triple(w1, schema+"weight", typed(".5e1", xsd+"double")),
		triple(w1, schema+"isFamilyFriendly", typed("true", xsd+"boolean")),
		triple(w1, schema+"isFamilyFriendly", typed("false", xsd+"boolean")),
		triple(w1, dcterms+"alternative", lit("tab\tquote\"back\\slash\u00e9\U0001F600")),
		triple(w1, dcterms+"alternative", lit("single ''quoted'' long")),
		triple(w1, dcterms+"alternative", lit("")),
		triple(w1, shelfmark.NSRDF+"type", iri(schema+"Book")),
		triple(w1, dcterms+"isPartOf", iri("http://example.org/collections/c1")),
		triple(w1, dcterms+"isPartOf", iri("http://example.org/works/#frag")),
		triple(w1, dcterms+"isPartOf", iri("http://example.org/works/")),
		triple(w1, dcterms+"isPartOf", iri("http://example.org/works/?q=1")),
		triple(w1, dcterms+"isPartOf", iri("http://other.example/x")),
		triple(w1, v+"local-name.x", iri(v+"a%20b")),
		triple(w1, v+"local-name.x", iri(v+"123")),
		triple(w1, v+"local-name.x", iri(v)),
		triple(w1, v+"local-name.x", iri(v)),
		triple(w1, dcterms+"subject", iri(shelfmark.NSRDF+"nil")),
		triple(w1, dcterms+"plain", lit("x")),
		triple(w2, "http://example.org/other/p", lit("ok")),
	}
	equalTriples(t, parseString(t, Turtle, "", doc), want)
}

// TestTurtleRelativeIRIs resolves <>, fragments and paths against the base
// given to Parse.
func TestTurtleRelativeIRIs(t *testing.T) {
	doc := `<> <http://purl.org/dc/terms/hasPart> <#p1>, <p2>, <../c/1>, <>, </abs> ; <rel> "x" .`
	b := "http://example.org/works/w1"
	want := []shelfmark.Triple{
		triple(b, dcterms+"hasPart", iri(b+"#p1")),
		triple(b, dcterms+"hasPart", iri("http://example.org/works/p2")),
		triple(b, dcterms+"hasPart", iri("http://example.org/c/1")),
		triple(b, dcterms+"hasPart", iri(b)),
		triple(b, dcterms+"hasPart", iri("http://example.org/abs")),
		triple(b, "http://example.org/works/rel", lit("x")),
	}
	equalTriples(t, parseString(t, Turtle, b, doc), want)

	// A base with a fragment: <> is the base without it.
	got := parseString(t, Turtle, b+"#top", `<> <http://p> <> .`)
	equalTriples(t, got, []shelfmark.Triple{triple(b, "http://p", iri(b))})
}

// TestTurtleMultiLineLiteral keeps line breaks, quotes and escapes of long
// strings, and counts lines inside them for later errors.
func TestTurtleMultiLineLiteral(t *testing.T) {
	doc := "<http://ex/a> <http://ex/b> \"\"\"line one\r\n\"quoted\" line two\\n\n\"\"\" , '''it''s''' .\n<http://ex/a> <http://ex/c> \"\"\"\"x\"\"\" ."
	want := []shelfmark.Triple{
		triple("http://ex/a", "http://ex/b", lit("line one\r\n\"quoted\" line two\n\n")),
		triple("http://ex/a", "http://ex/b", lit("it''s")),
		triple("http://ex/a", "http://ex/c", lit("\"x")),
	}
	equalTriples(t, parseString(t, Turtle, "", doc), want)

	e := parseError(t, Turtle, "", "<http://ex/a> <http://ex/b> \"\"\"one\ntwo\"\"\" ;\n  <http://ex/c> bad .")
	wantPosition(t, e, 3, 17)
}

// TestTurtleSyntaxErrors checks the line and column reported for broken
// documents.
func TestTurtleSyntaxErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		line, col int
		message   string
	}{
		{"double comma", "@prefix dc: <http://purl.org/dc/elements/1.1/> .\n<http://ex/a> dc:title \"x\" ,, \"y\" .", 2, 29, "found ','"},
		{"missing dot", "<http://ex/a> <http://ex/b> \"x\"\n<http://ex/a> <http://ex/b> \"y\" .", 2, 1, "expected '.'"},
		{"missing dot at end", "<http://ex/a> <http://ex/b> \"x\"", 1, 32, "the end of the document"},
		{"unclosed string", "<http://ex/a> <http://ex/b>\n   \"never closed .\n", 2, 19, "cannot span lines"},
		{"unclosed long string", "<http://ex/a> <http://ex/b> '''never closed .", 1, 29, "not closed"},
		{"undeclared prefix", "<http://ex/a> dcterms:title \"x\" .", 1, 15, "@prefix dcterms: <http://purl.org/dc/terms/>"},
		{"bad escape", "<http://ex/a> <http://ex/b> \"a\\qb\" .", 1, 31, `\q is not an escape`},
		{"short unicode escape", "<http://ex/a> <http://ex/b> \"\\u12\" .", 1, 30, "4 hexadecimal digits"},
		{"surrogate escape", "<http://ex/a> <http://ex/b> \"\\uD800\" .", 1, 30, "not a Unicode character"},
		{"space in IRI", "<http://ex/a b> <http://ex/b> \"x\" .", 1, 13, "not allowed in an IRI"},
		{"unclosed IRI", "<http://ex/a", 1, 1, "not closed"},
		{"literal subject", "\"x\" <http://ex/b> \"x\" .", 1, 1, "found a literal"},
		{"bad directive", "@prefx x: <http://ex/> .", 1, 1, "@prefix or @base"},
		{"prefix without colon", "@prefix x <http://ex/> .", 1, 9, "ending in ':'"},
		{"bare word object", "<http://ex/a> <http://ex/b> maybe .", 1, 29, `"maybe"`},
		{"lone sign", "<http://ex/a> <http://ex/b> + .", 1, 29, "expected an object"},
		{"empty language tag", "<http://ex/a> <http://ex/b> \"x\"@ .", 1, 32, "language tag"},
		{"langString without tag", "@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .\n<http://ex/a> <http://ex/b> \"x\"^^rdf:langString .", 2, 34, "needs a language tag"},
		{"relative IRI without base", "<a> <http://ex/b> \"x\" .", 1, 1, "relative"},
		{"escape to space in IRI", "<http://ex/a\\u0020> <http://ex/b> \"x\" .", 1, 13, "IRIs may not contain"},
		{"invalid UTF-8", "<http://ex/a> <http://ex/b> \"caf\xe9\" .", 1, 33, "UTF-8"},
		{"predicate keyword", "<http://ex/a> true \"x\" .", 1, 15, "expected a predicate"},
		{"graph braces", "<http://ex/g> { <http://ex/a> <http://ex/b> \"x\" . }", 1, 15, "found '{'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := parseError(t, Turtle, "", tc.doc)
			wantPosition(t, e, tc.line, tc.col)
			if !strings.Contains(e.Message, tc.message) {
				t.Errorf("message %q does not contain %q", e.Message, tc.message)
			}
		})
	}
}

// TestTurtleBlankNodes rejects every form of blank node with its position.
func TestTurtleBlankNodes(t *testing.T) {
	for _, tc := range []struct {
		doc       string
		line, col int
		message   string
	}{
		{"_:b1 <http://ex/p> \"x\" .", 1, 1, msgBlankNode},
		{"<http://ex/a> <http://ex/p> _:b1 .", 1, 29, msgBlankNode},
		{"<http://ex/a> <http://ex/p>\n  [ <http://ex/q> \"x\" ] .", 2, 3, msgBlankNode},
		{"<http://ex/a> <http://ex/p> [] .", 1, 29, msgBlankNode},
		{"[ <http://ex/q> \"x\" ] .", 1, 1, msgBlankNode},
		{"<http://ex/a> <http://ex/p> ( <http://ex/x> ) .", 1, 29, "collections"},
	} {
		e := parseError(t, Turtle, "", tc.doc)
		wantPosition(t, e, tc.line, tc.col)
		if !strings.Contains(e.Message, tc.message) {
			t.Errorf("%q: message %q does not contain %q", tc.doc, e.Message, tc.message)
		}
	}
}

// TestTurtleKeywordsAsPrefixes reads names that begin like keywords.
func TestTurtleKeywordsAsPrefixes(t *testing.T) {
	doc := `@prefix a: <http://ex/a#> . @prefix true: <http://ex/t#> . @prefix PREFIX-x: <http://ex/p#> .
a:s a a:C ; a:p true:x , true , PREFIX-x:y .`
	want := []shelfmark.Triple{
		triple("http://ex/a#s", shelfmark.NSRDF+"type", iri("http://ex/a#C")),
		triple("http://ex/a#s", "http://ex/a#p", iri("http://ex/t#x")),
		triple("http://ex/a#s", "http://ex/a#p", typed("true", xsd+"boolean")),
		triple("http://ex/a#s", "http://ex/a#p", iri("http://ex/p#y")),
	}
	equalTriples(t, parseString(t, Turtle, "", doc), want)
}

// TestParseMaxTriples caps the number of statements.
func TestParseMaxTriples(t *testing.T) {
	doc := `<http://ex/a> <http://ex/p> 1, 2, 3 .`
	if _, err := Parse(strings.NewReader(doc), Turtle, "", MaxTriples(3)); err != nil {
		t.Fatalf("3 triples under a cap of 3: %v", err)
	}
	for _, mt := range []string{Turtle, NTriples, JSONLD} {
		var d string
		switch mt {
		case Turtle:
			d = doc
		case NTriples:
			d = strings.Repeat("<http://ex/a> <http://ex/p> \"x\" .\n", 3)
		case JSONLD:
			d = `{"@id": "http://ex/a", "http://ex/p": ["1", "2", "3"]}`
		}
		_, err := Parse(strings.NewReader(d), mt, "", MaxTriples(2))
		if shelfmark.ErrorCode(err) != shelfmark.EINVALID || !strings.Contains(shelfmark.ErrorMessage(err), "too many statements") {
			t.Errorf("%s over the cap: %v", mt, err)
		}
	}
}

// TestParseMediaTypes accepts parameters and refuses other types.
func TestParseMediaTypes(t *testing.T) {
	doc := `<http://ex/a> <http://ex/p> "x" .`
	for _, mt := range []string{"text/turtle; charset=utf-8", "Text/Turtle", "application/n-triples;charset=UTF-8"} {
		if _, err := Parse(strings.NewReader(doc), mt, ""); err != nil {
			t.Errorf("%s: %v", mt, err)
		}
	}
	for _, mt := range []string{"application/json", "text/plain", "", "text/turtle; charset=latin1"} {
		_, err := Parse(strings.NewReader(doc), mt, "")
		if shelfmark.ErrorCode(err) != shelfmark.EUNSUPPORTED {
			t.Errorf("%q: %v, want EUNSUPPORTED", mt, err)
		}
	}
	_, err := Parse(strings.NewReader(doc), "application/json", "")
	if msg := shelfmark.ErrorMessage(err); !strings.Contains(msg, "text/turtle") || !strings.Contains(msg, "application/ld+json") {
		t.Errorf("message %q does not name the accepted types", msg)
	}
	if _, err := Parse(strings.NewReader(doc), Turtle, "relative/base"); shelfmark.ErrorCode(err) != shelfmark.EINTERNAL {
		t.Errorf("relative base: %v, want an internal error", err)
	}
}

// TestParseReadError wraps a failure of the reader, which is not the
// client's syntax.
func TestParseReadError(t *testing.T) {
	boom := errors.New("connection reset")
	_, err := Parse(iotest.ErrReader(boom), Turtle, testBase)
	if !errors.Is(err, boom) || shelfmark.ErrorCode(err) != shelfmark.EINTERNAL {
		t.Errorf("got %v", err)
	}
}
