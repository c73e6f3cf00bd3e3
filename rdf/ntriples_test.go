package rdf

import (
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestNTriples reads the forms of N-Triples terms, comments, blank lines
// and line endings, keeping typed literals' lexical forms.
func TestNTriples(t *testing.T) {
	doc := "# comment\n" +
		"<http://ex/a> <http://ex/p> <http://ex/o> .\r\n" +
		"\n" +
		"  <http://ex/a>\t<http://ex/p> \"plain\" . # trailing comment\r" +
		"<http://ex/a> <http://ex/p> \"Titel\"@DE-AT .\n" +
		"<http://ex/a> <http://ex/p> \"01\"^^<http://www.w3.org/2001/XMLSchema#integer> .\n" +
		"<http://ex/a> <http://ex/p> \"2001-01-01T10:00:00.000+01:00\"^^<http://www.w3.org/2001/XMLSchema#dateTime> .\n" +
		"<http://ex/a> <http://ex/p> \"x\"^^<http://www.w3.org/2001/XMLSchema#string> .\n" +
		"<http://ex/a> <http://ex/p> \"tab\\t \\\"q\\\" \\\\ \\u00E9 \\U0001F600 \\n\" .\n" +
		"<http://ex/a\\u00E9> <http://ex/p> \"<>\" .\n" +
		"<> <http://ex/p> <> .\n" +
		"<http://ex/a> <http://ex/p> <#frag> .\n"
	base := "http://example.org/works/w1"
	want := []shelfmark.Triple{
		triple("http://ex/a", "http://ex/p", iri("http://ex/o")),
		triple("http://ex/a", "http://ex/p", lit("plain")),
		triple("http://ex/a", "http://ex/p", lang("Titel", "de-at")),
		triple("http://ex/a", "http://ex/p", typed("01", xsd+"integer")),
		triple("http://ex/a", "http://ex/p", typed("2001-01-01T10:00:00.000+01:00", xsd+"dateTime")),
		triple("http://ex/a", "http://ex/p", lit("x")),
		triple("http://ex/a", "http://ex/p", lit("tab\t \"q\" \\ é 😀 \n")),
		triple("http://ex/aé", "http://ex/p", lit("<>")),
		triple(base, "http://ex/p", iri(base)),
		triple("http://ex/a", "http://ex/p", iri(base+"#frag")),
	}
	equalTriples(t, parseString(t, NTriples, base, doc), want)
}

// TestNTriplesErrors checks positions of broken N-Triples.
func TestNTriplesErrors(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		line, col int
		message   string
	}{
		{"space in IRI", "<http://ex/a> <http://ex/p> <http://ex/o> .\n<http://ex/a b> <http://ex/p> \"x\" .", 2, 13, "unexpected character ' '"},
		{"bad escape", "\n\n   <http://ex/a> <http://ex/p> \"x\\qy\" .", 3, 35, "unexpected character 'q'"},
		{"incomplete", "<http://ex/a> <http://ex/p> \"x\"", 1, 32, "not complete"},
		{"blank subject", "_:b <http://ex/p> \"x\" .", 1, 1, msgBlankNode},
		{"blank object", "<http://ex/a> <http://ex/p>  _:b .", 1, 30, msgBlankNode},
		{"bad language", "<http://ex/a> <http://ex/p> \"x\"@1 .", 1, 33, "unexpected character '1'"},
		{"relative without base", "<a> <http://ex/p> \"x\" .", 1, 1, "relative"},
		{"literal subject", "\"x\" <http://ex/p> \"x\" .", 1, 1, "unexpected character"},
		{"invalid UTF-8", "<http://ex/a> <http://ex/p> \"\xff\" .", 1, 30, "UTF-8"},
		{"Turtle shorthand", "<http://ex/a> <http://ex/p> 12 .", 1, 29, "unexpected character '1'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := parseError(t, NTriples, "", tc.doc)
			wantPosition(t, e, tc.line, tc.col)
			if !strings.Contains(e.Message, tc.message) {
				t.Errorf("message %q does not contain %q", e.Message, tc.message)
			}
		})
	}
	// A graph name has no column from the parser; the line is still given.
	e := parseError(t, NTriples, "", "<http://ex/a> <http://ex/p> \"x\" .\n<http://ex/a> <http://ex/p> \"x\" <http://ex/g> .")
	if e.Details["line"] != 2 || !strings.Contains(e.Message, "line 2") || !strings.Contains(e.Message, "graph") {
		t.Errorf("graph name: %v %s", e.Details, e.Message)
	}
}
