package rdf

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cayleygraph/quad"
	"github.com/cayleygraph/quad/nquads"
	"github.com/shelfmark/shelfmark"
)

// parseNTriples reads an N-Triples document into s, one line at a time with
// the raw N-Quads parser of github.com/cayleygraph/quad (raw, so that typed
// literals keep their lexical form; the typed parser turns "01"^^xsd:integer
// into 1 through a package-level switch). This function adds what that
// parser lacks: line and column numbers, the refusal of graph names and
// blank nodes, base resolution of relative IRIs (which N-Triples forbids but
// clients send), and the telling apart of the IRI <> from the literal "<>",
// which it returns alike.
func parseNTriples(src []byte, base string, s *sink) error {
	if err := checkUTF8(NTriples, src); err != nil {
		return err
	}
	if bytes.HasPrefix(src, []byte("\uFEFF")) {
		src = src[3:]
	}
	b := splitIRIRef(base)
	line := 0
	for off := 0; off < len(src); {
		end := bytes.IndexAny(src[off:], "\r\n")
		next := 0
		if end < 0 {
			end, next = len(src), len(src)
		} else {
			end += off
			next = end + 1
			if src[end] == '\r' && next < len(src) && src[next] == '\n' {
				next++
			}
		}
		line++
		text := string(src[off:end])
		off = next
		trimmed := strings.TrimLeft(text, " \t")
		lead := len(text) - len(trimmed) // spaces and tabs are one byte each
		trimmed = strings.TrimRight(trimmed, " \t")
		if trimmed == "" || trimmed[0] == '#' {
			continue
		}
		if err := parseNTriplesLine(trimmed, line, lead, b, s); err != nil {
			return err
		}
	}
	return nil
}

// parseNTriplesLine parses one statement, trimmed of white space that took
// lead columns, and adds it to s.
func parseNTriplesLine(text string, line, lead int, base iriRef, s *sink) error {
	q, err := parseRawQuad(text)
	if err != nil {
		return nTriplesSyntaxError(text, line, lead, err)
	}
	if q.Label != nil {
		return lineError(NTriples, line, "a statement has three terms; a fourth (a graph name, as in N-Quads) is not allowed")
	}
	subject, err := nTriplesIRI(q.Subject, text, 0, line, lead, base, "subject")
	if err != nil {
		return err
	}
	predicate, err := nTriplesIRI(q.Predicate, text, tokenStart(text, 1), line, lead, base, "predicate")
	if err != nil {
		return err
	}
	objStart := tokenStart(text, 2)
	var object shelfmark.Term
	switch v := q.Object.(type) {
	case quad.String:
		if v == "<>" && strings.HasPrefix(text[objStart:], "<>") {
			iri, err := nTriplesIRI(quad.IRI(""), text, objStart, line, lead, base, "object")
			if err != nil {
				return err
			}
			object = shelfmark.NewIRI(iri)
		} else {
			object = shelfmark.NewLiteral(string(v))
		}
	case quad.LangString:
		term, reason := newLiteral(string(v.Value), v.Lang, "")
		if reason != "" {
			return nTriplesError(text, objStart, line, lead, "%s", reason)
		}
		object = term
	case quad.TypedString:
		datatype := resolveIRI(base, string(v.Type))
		if reason := checkIRI(datatype); reason != "" {
			return nTriplesError(text, objStart, line, lead, "%s", reason)
		}
		term, reason := newLiteral(string(v.Value), "", datatype)
		if reason != "" {
			return nTriplesError(text, objStart, line, lead, "%s", reason)
		}
		object = term
	default:
		iri, err := nTriplesIRI(q.Object, text, objStart, line, lead, base, "object")
		if err != nil {
			return err
		}
		object = shelfmark.NewIRI(iri)
	}
	return s.add(subject, predicate, object)
}

// parseRawQuad runs the raw N-Quads parser, turning a panic into an error.
func parseRawQuad(text string) (q quad.Quad, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the parser failed: %v", r)
		}
	}()
	return nquads.ParseRaw(text)
}

// nTriplesIRI returns the absolute IRI of a subject, predicate or IRI
// object v, which starts at byte at of text.
func nTriplesIRI(v quad.Value, text string, at, line, lead int, base iriRef, role string) (string, error) {
	var iri string
	switch v := v.(type) {
	case quad.IRI:
		iri = string(v)
	case quad.BNode:
		return "", nTriplesError(text, at, line, lead, msgBlankNode)
	case quad.String:
		// The parser returns the IRI <> as the string "<>"; subjects and
		// predicates cannot be literals.
		if v != "<>" || !strings.HasPrefix(text[at:], "<>") {
			return "", nTriplesError(text, at, line, lead, "the %s must be an IRI", role)
		}
	default:
		return "", nTriplesError(text, at, line, lead, "the %s must be an IRI", role)
	}
	iri = resolveIRI(base, iri)
	if reason := checkIRI(iri); reason != "" {
		return "", nTriplesError(text, at, line, lead, "%s", reason)
	}
	return iri, nil
}

// tokenStart returns the byte offset of the n-th term (0-based) of an
// N-Triples statement. Subjects and predicates (IRIs and blank node labels)
// contain no white space, so the terms before the object are found by
// splitting on it.
func tokenStart(text string, n int) int {
	i := 0
	for ; n > 0; n-- {
		for i < len(text) && text[i] != ' ' && text[i] != '\t' {
			i++
		}
		for i < len(text) && (text[i] == ' ' || text[i] == '\t') {
			i++
		}
	}
	return i
}

// nTriplesError returns an error positioned at byte at of a line's text.
func nTriplesError(text string, at, line, lead int, format string, args ...any) error {
	return positionError(NTriples, line, lead+utf8.RuneCountInString(text[:min(at, len(text))])+1, format, args...)
}

// nTriplesSyntaxError converts an error of the quad parser, which gives the
// position as a character index ("unexpected rune 'x' at 25") when it knows
// it.
func nTriplesSyntaxError(text string, line, lead int, err error) error {
	if err == quad.ErrIncomplete {
		return positionError(NTriples, line, lead+utf8.RuneCountInString(text)+1,
			"the statement is not complete; it must be subject, predicate, object and ' .'")
	}
	msg := err.Error()
	if i := strings.LastIndex(msg, " at "); i >= 0 {
		if idx, convErr := strconv.Atoi(msg[i+4:]); convErr == nil && idx >= 0 {
			var r rune
			n := 0
			for _, c := range text {
				if n == idx {
					r = c
					break
				}
				n++
			}
			return positionError(NTriples, line, lead+idx+1, "unexpected character %q", r)
		}
	}
	return lineError(NTriples, line, "the statement cannot be read; it must be subject, predicate, object and ' .'")
}
