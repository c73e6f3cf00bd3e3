package rdf

import (
	"fmt"
	"io"
	"slices"
	"unicode/utf8"

	"github.com/shelfmark/shelfmark"
)

// Write writes the statements of one subject in a media type that
// Negotiate chooses: text/turtle, application/n-triples,
// application/ld+json, or application/json (the plain form of
// JSONMetadata, which ignores subject). Parameters such as charset are
// ignored. Another media type is ENOTACCEPTABLE. The document is built in
// memory and written with one call to w.Write.
func Write(w io.Writer, mediaType, subject string, stmts []shelfmark.Statement) error {
	var buf []byte
	switch mt := baseMediaType(mediaType); mt {
	case Turtle:
		buf = AppendTurtle(nil, subject, stmts)
	case NTriples:
		buf = AppendNTriples(nil, subject, stmts)
	case JSONLD:
		buf = appendJSONLD(make([]byte, 0, 64*len(stmts)+256), subject, stmts)
	case JSON:
		buf = JSONMetadata(stmts)
	default:
		return &shelfmark.Error{
			Code:    shelfmark.ENOTACCEPTABLE,
			Message: fmt.Sprintf("Cannot write metadata as %q; ask for application/json, application/ld+json, text/turtle or application/n-triples.", mediaType),
			Details: map[string]any{"available": ReadableTypes()},
		}
	}
	if _, err := w.Write(buf); err != nil {
		return fmt.Errorf("rdf: writing %s: %w", formatName(baseMediaType(mediaType)), err)
	}
	return nil
}

// AppendNTriples appends the statements of subject to dst as N-Triples,
// one line each, in order.
func AppendNTriples(dst []byte, subject string, stmts []shelfmark.Statement) []byte {
	if dst == nil {
		dst = make([]byte, 0, 96*len(stmts))
	}
	for _, st := range stmts {
		dst = appendIRIRef(dst, subject)
		dst = append(dst, ' ')
		dst = appendIRIRef(dst, st.Predicate)
		dst = append(dst, ' ')
		o := st.Object
		if o.Kind == shelfmark.IRI {
			dst = appendIRIRef(dst, o.Value)
		} else {
			dst = appendQuoted(dst, o.Value)
			if o.Lang != "" {
				dst = append(dst, '@')
				dst = append(dst, o.Lang...)
			} else if o.Datatype != "" {
				dst = append(dst, '^', '^')
				dst = appendIRIRef(dst, o.Datatype)
			}
		}
		dst = append(dst, ' ', '.', '\n')
	}
	return dst
}

// AppendTurtle appends the statements of subject to dst as a readable
// Turtle document: @prefix lines for the known prefixes it uses (sorted),
// then "<subject>" with one line per predicate, in order of first
// appearance, values separated by " , " and predicates by " ;". rdf:type is
// written as a; integers, decimals and booleans in their short forms.
// Nothing is written for no statements.
func AppendTurtle(dst []byte, subject string, stmts []shelfmark.Statement) []byte {
	if len(stmts) == 0 {
		return dst
	}
	body := make([]byte, 0, 64*len(stmts)+len(subject)+4)
	var used []string
	body = appendIRIRef(body, subject)
	order := groupByPredicate(stmts)
	for i := 0; i < len(order); {
		pred := stmts[order[i]].Predicate
		body = append(body, "\n    "...)
		if pred == rdfType {
			body = append(body, 'a')
		} else {
			body, used = appendTurtleIRI(body, used, pred)
		}
		for first := i; i < len(order) && stmts[order[i]].Predicate == pred; i++ {
			if i > first {
				body = append(body, " ,"...)
			}
			body = append(body, ' ')
			body, used = appendTurtleTerm(body, used, stmts[order[i]].Object)
		}
		if i < len(order) {
			body = append(body, " ;"...)
		}
	}
	body = append(body, " .\n"...)
	if len(used) == 0 {
		return append(dst, body...)
	}
	slices.Sort(used)
	if dst == nil {
		dst = make([]byte, 0, len(body)+64*len(used)+1)
	}
	for _, p := range used {
		dst = append(dst, "@prefix "...)
		dst = append(dst, p...)
		dst = append(dst, ": <"...)
		dst = append(dst, namespaceOf(p)...)
		dst = append(dst, "> .\n"...)
	}
	dst = append(dst, '\n')
	return append(dst, body...)
}

// appendTurtleIRI appends iri as a prefixed name when it compacts, noting
// the prefix in used, and in < > otherwise.
func appendTurtleIRI(dst []byte, used []string, iri string) ([]byte, []string) {
	p, local, ok := compactParts(iri)
	if !ok {
		return appendIRIRef(dst, iri), used
	}
	if !slices.Contains(used, p) {
		used = append(used, p)
	}
	dst = append(dst, p...)
	dst = append(dst, ':')
	return append(dst, local...), used
}

// appendTurtleTerm appends an object term in Turtle.
func appendTurtleTerm(dst []byte, used []string, t shelfmark.Term) ([]byte, []string) {
	if t.Kind == shelfmark.IRI {
		return appendTurtleIRI(dst, used, t.Value)
	}
	switch {
	case t.Lang != "":
		dst = appendQuoted(dst, t.Value)
		dst = append(dst, '@')
		return append(dst, t.Lang...), used
	case t.Datatype == "":
		return appendQuoted(dst, t.Value), used
	case t.Datatype == xsdInteger && isTurtleInteger(t.Value),
		t.Datatype == xsdDecimal && isTurtleDecimal(t.Value),
		t.Datatype == xsdBoolean && (t.Value == "true" || t.Value == "false"):
		return append(dst, t.Value...), used
	}
	dst = appendQuoted(dst, t.Value)
	dst = append(dst, '^', '^')
	return appendTurtleIRI(dst, used, t.Datatype)
}

// isTurtleInteger reports whether s is written as an INTEGER in Turtle.
func isTurtleInteger(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	return s != "" && skipDigits([]byte(s), 0) == len(s)
}

// isTurtleDecimal reports whether s is written as a DECIMAL in Turtle:
// [+-]? [0-9]* '.' [0-9]+.
func isTurtleDecimal(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	for i := 0; i < len(s); i++ {
		if s[i] == '.' {
			rest := s[i+1:]
			return rest != "" && isTurtleInteger(rest) && rest[0] != '+' && rest[0] != '-' &&
				(i == 0 || isTurtleInteger(s[:i]))
		}
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return false
}

// appendIRIRef appends iri in < >, escaping with \u the characters IRIs may
// not contain (stored IRIs have none; this keeps the output well-formed).
func appendIRIRef(dst []byte, iri string) []byte {
	dst = append(dst, '<')
	start := 0
	for i := 0; i < len(iri); i++ {
		c := iri[i]
		if !isBadIRIByte(c) {
			continue
		}
		dst = append(dst, iri[start:i]...)
		dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		start = i + 1
	}
	dst = append(dst, iri[start:]...)
	return append(dst, '>')
}

// appendQuoted appends s as a string literal in double quotes, valid in
// both Turtle and N-Triples: \t \b \n \r \f \" \\ as escapes, other control
// characters as \u00XX (the canonical N-Triples of RDF 1.2), and invalid
// UTF-8 as \uFFFD.
func appendQuoted(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c != 0x7F && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || n > 1 {
				i += n
				continue
			}
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\uFFFD`...)
			i++
			start = i
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\t':
			dst = append(dst, '\\', 't')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\f':
			dst = append(dst, '\\', 'f')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
