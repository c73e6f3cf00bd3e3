package rdf

import (
	"errors"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

const testBase = "http://example.org/works/w1"

// parseString parses doc, failing the test on error.
func parseString(t *testing.T, mediaType, base, doc string) []shelfmark.Triple {
	t.Helper()
	ts, err := Parse(strings.NewReader(doc), mediaType, base)
	if err != nil {
		t.Fatalf("Parse(%s): %v\n%s", mediaType, err, doc)
	}
	return ts
}

// parseError parses doc, expecting a *shelfmark.Error, and returns it.
func parseError(t *testing.T, mediaType, base, doc string) *shelfmark.Error {
	t.Helper()
	ts, err := Parse(strings.NewReader(doc), mediaType, base)
	if err == nil {
		t.Fatalf("Parse(%s) succeeded with %v, want an error\n%s", mediaType, ts, doc)
	}
	var e *shelfmark.Error
	if !errors.As(err, &e) {
		t.Fatalf("Parse(%s) error %v (%T) is not a *shelfmark.Error", mediaType, err, err)
	}
	return e
}

// wantPosition checks the code, line and column of e and that the message
// names them.
func wantPosition(t *testing.T, e *shelfmark.Error, line, col int) {
	t.Helper()
	if e.Code != shelfmark.EINVALID {
		t.Errorf("code %q, want %q (%s)", e.Code, shelfmark.EINVALID, e.Message)
	}
	if e.Details["line"] != line || e.Details["column"] != col {
		t.Errorf("position %v:%v, want %d:%d (%s)", e.Details["line"], e.Details["column"], line, col, e.Message)
	}
	want := "line " + itoa(line) + ", column " + itoa(col)
	if !strings.Contains(e.Message, want) {
		t.Errorf("message %q does not contain %q", e.Message, want)
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// iri, lit, lang and typed build terms for expectations.
func iri(s string) shelfmark.Term       { return shelfmark.NewIRI(s) }
func lit(s string) shelfmark.Term       { return shelfmark.NewLiteral(s) }
func lang(s, l string) shelfmark.Term   { return shelfmark.NewLangLiteral(s, l) }
func typed(s, dt string) shelfmark.Term { return shelfmark.NewTypedLiteral(s, dt) }
func triple(s, p string, o shelfmark.Term) shelfmark.Triple {
	return shelfmark.Triple{Subject: iri(s), Predicate: p, Object: o}
}

// equalTriples compares two lists of triples in order.
func equalTriples(t *testing.T, got, want []shelfmark.Triple) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d triples, want %d:\n got %v\nwant %v", len(got), len(want), got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("triple %d:\n got %#v\nwant %#v", i, got[i], want[i])
		}
	}
}

// statements returns the statements of triples, dropping subjects.
func statements(ts []shelfmark.Triple) []shelfmark.Statement {
	out := make([]shelfmark.Statement, len(ts))
	for i, t := range ts {
		out[i] = shelfmark.Statement{Predicate: t.Predicate, Object: t.Object}
	}
	return out
}
