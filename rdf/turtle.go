package rdf

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/shelfmark/shelfmark"
)

// XSD datatypes of Turtle's numeric and boolean shorthands.
const (
	xsdInteger = "http://www.w3.org/2001/XMLSchema#integer"
	xsdDecimal = "http://www.w3.org/2001/XMLSchema#decimal"
	xsdDouble  = "http://www.w3.org/2001/XMLSchema#double"
	xsdBoolean = "http://www.w3.org/2001/XMLSchema#boolean"
	rdfType    = shelfmark.NSRDF + "type"
	rdfNil     = shelfmark.NSRDF + "nil"
)

// msgCollection is the message for a non-empty Turtle collection, which is
// made of blank nodes.
const msgCollection = "collections ( ... ) are not supported, as they are made of blank nodes; give each node an IRI"

// turtleReader is a Turtle 1.1 reader (https://www.w3.org/TR/turtle/) for
// documents without blank nodes: @prefix, @base, PREFIX and BASE; IRIs and
// prefixed names with escapes; the verb a; predicate lists (;) and object
// lists (,); literals in single or double quotes, short or tripled, with
// escapes, language tags and ^^datatypes; integer, decimal, double and boolean shorthands; and the
// empty collection (), which is rdf:nil. Blank nodes (_:x, [ ]) and other
// collections are rejected with their position.
//
// It works on the whole document in memory, has no recursion and keeps no
// state beyond one document, so any input is read in linear time without
// panics.
type turtleReader struct {
	src      []byte
	pos      int
	base     iriRef
	prefixes map[string]string
	names    map[string]string // expanded prefixed names by their text
	sink     *sink
	buf      []byte // scratch space for unescaping
}

// parseTurtle reads a Turtle document into s.
func parseTurtle(src []byte, base string, s *sink) error {
	if err := checkUTF8(Turtle, src); err != nil {
		return err
	}
	p := &turtleReader{src: src, base: splitIRIRef(base), prefixes: make(map[string]string), sink: s}
	// A byte order mark is allowed at the start.
	if bytes.HasPrefix(src, []byte("\uFEFF")) {
		p.pos = 3
	}
	for {
		p.skipWS()
		if p.pos >= len(p.src) {
			return nil
		}
		if err := p.statement(); err != nil {
			return err
		}
	}
}

// errAt returns a syntax error positioned at byte offset off.
func (p *turtleReader) errAt(off int, format string, args ...any) error {
	line, col := position(p.src, off)
	return positionError(Turtle, line, col, format, args...)
}

// found describes what is at byte offset off, for messages.
func (p *turtleReader) found(off int) string {
	if off >= len(p.src) {
		return "the end of the document"
	}
	r, _ := utf8.DecodeRune(p.src[off:])
	switch r {
	case '\n':
		return "the end of the line"
	case '\'':
		return `"'"`
	}
	return fmt.Sprintf("'%c'", r)
}

// skipWS skips white space and comments.
func (p *turtleReader) skipWS() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		case '#':
			i := bytes.IndexByte(p.src[p.pos:], '\n')
			if i < 0 {
				p.pos = len(p.src)
				return
			}
			p.pos += i
		default:
			return
		}
	}
}

// at reports whether the byte at the current position is c.
func (p *turtleReader) at(c byte) bool {
	return p.pos < len(p.src) && p.src[p.pos] == c
}

// statement reads a directive or a set of triples ending in '.'.
func (p *turtleReader) statement() error {
	start := p.pos
	if p.src[start] == '@' {
		word := asciiWord(p.src[start+1:])
		switch word {
		case "prefix":
			p.pos += 1 + len(word)
			return p.prefixDirective(true)
		case "base":
			p.pos += 1 + len(word)
			return p.baseDirective(true)
		}
		return p.errAt(start, "expected @prefix or @base, found %q", "@"+word)
	}
	word := asciiWord(p.src[start:])
	if end := start + len(word); end == len(p.src) || !isNameByte(p.src[end]) {
		switch {
		case strings.EqualFold(word, "PREFIX"):
			p.pos = end
			return p.prefixDirective(false)
		case strings.EqualFold(word, "BASE"):
			p.pos = end
			return p.baseDirective(false)
		}
	}
	subject, err := p.subject()
	if err != nil {
		return err
	}
	if err := p.predicateObjectList(subject); err != nil {
		return err
	}
	p.skipWS()
	if !p.at('.') {
		return p.errAt(p.pos, "expected '.' to end the statement, found %s", p.found(p.pos))
	}
	p.pos++
	return nil
}

// asciiWord returns the ASCII letters at the start of b.
func asciiWord(b []byte) string {
	i := 0
	for i < len(b) && (b[i] >= 'a' && b[i] <= 'z' || b[i] >= 'A' && b[i] <= 'Z') {
		i++
	}
	return string(b[:i])
}

// isNameByte reports whether c may continue a name, so that a keyword
// followed by it is a prefixed name instead ("PREFIX-x:y", "a:b").
func isNameByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '_' || c == '-' || c == '.' || c == ':' || c >= 0x80
}

// prefixDirective reads the rest of @prefix (withDot) or PREFIX.
func (p *turtleReader) prefixDirective(withDot bool) error {
	p.skipWS()
	start := p.pos
	end := p.scanPrefix()
	if end >= len(p.src) || p.src[end] != ':' {
		return p.errAt(start, "expected a prefix name ending in ':', found %s", p.found(end))
	}
	name := string(p.src[start:end])
	p.pos = end + 1
	p.skipWS()
	if !p.at('<') {
		return p.errAt(p.pos, "expected the namespace IRI in < >, found %s", p.found(p.pos))
	}
	ns, err := p.iriRef()
	if err != nil {
		return err
	}
	p.prefixes[name] = ns
	clear(p.names) // a prefix may be declared again
	return p.directiveEnd(withDot)
}

// baseDirective reads the rest of @base (withDot) or BASE.
func (p *turtleReader) baseDirective(withDot bool) error {
	p.skipWS()
	if !p.at('<') {
		return p.errAt(p.pos, "expected the base IRI in < >, found %s", p.found(p.pos))
	}
	iri, err := p.iriRef()
	if err != nil {
		return err
	}
	p.base = splitIRIRef(iri)
	return p.directiveEnd(withDot)
}

// directiveEnd reads the '.' that ends @prefix and @base; PREFIX and BASE
// have none.
func (p *turtleReader) directiveEnd(withDot bool) error {
	if !withDot {
		return nil
	}
	p.skipWS()
	if !p.at('.') {
		return p.errAt(p.pos, "expected '.' to end the directive, found %s", p.found(p.pos))
	}
	p.pos++
	return nil
}

// subject reads the subject of a statement: an IRI.
func (p *turtleReader) subject() (string, error) {
	start := p.pos
	switch c := p.src[start]; {
	case c == '<':
		return p.iriRef()
	case c == '[' || c == '_' && start+1 < len(p.src) && p.src[start+1] == ':':
		return "", p.errAt(start, msgBlankNode)
	case c == '(':
		return p.collection()
	case c == '"' || c == '\'' || c >= '0' && c <= '9' || c == '+' || c == '-':
		return "", p.errAt(start, "expected a subject IRI, found a literal")
	}
	iri, word, err := p.name()
	if err != nil {
		return "", err
	}
	if word != "" {
		return "", p.errAt(start, "expected a subject IRI, found %q", word)
	}
	return iri, nil
}

// predicateObjectList reads verb objectList (';' (verb objectList)?)*.
func (p *turtleReader) predicateObjectList(subject string) error {
	for {
		p.skipWS()
		predicate, err := p.verb()
		if err != nil {
			return err
		}
		for {
			p.skipWS()
			object, err := p.object()
			if err != nil {
				return err
			}
			if err := p.sink.add(subject, predicate, object); err != nil {
				return err
			}
			p.skipWS()
			if !p.at(',') {
				break
			}
			p.pos++
		}
		if !p.at(';') {
			return nil
		}
		for p.at(';') {
			p.pos++
			p.skipWS()
		}
		if p.pos >= len(p.src) || p.src[p.pos] == '.' || p.src[p.pos] == ']' {
			return nil
		}
	}
}

// verb reads a predicate IRI or the keyword a.
func (p *turtleReader) verb() (string, error) {
	start := p.pos
	if start >= len(p.src) {
		return "", p.errAt(start, "expected a predicate, found the end of the document")
	}
	switch c := p.src[start]; {
	case c == '<':
		return p.iriRef()
	case c == '[' || c == '_' && start+1 < len(p.src) && p.src[start+1] == ':':
		return "", p.errAt(start, "expected a predicate IRI, found a blank node")
	}
	iri, word, err := p.name()
	switch {
	case err != nil:
		return "", err
	case word == "a":
		return rdfType, nil
	case word != "":
		return "", p.errAt(start, "expected a predicate, found %q", word)
	}
	return iri, nil
}

// object reads an object: an IRI or a literal.
func (p *turtleReader) object() (shelfmark.Term, error) {
	start := p.pos
	if start >= len(p.src) {
		return shelfmark.Term{}, p.errAt(start, "expected an object, found the end of the document")
	}
	switch c := p.src[start]; {
	case c == '<':
		iri, err := p.iriRef()
		return shelfmark.NewIRI(iri), err
	case c == '"' || c == '\'':
		return p.rdfLiteral()
	case c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.':
		return p.number()
	case c == '[' || c == '_' && start+1 < len(p.src) && p.src[start+1] == ':':
		return shelfmark.Term{}, p.errAt(start, msgBlankNode)
	case c == '(':
		iri, err := p.collection()
		return shelfmark.NewIRI(iri), err
	}
	iri, word, err := p.name()
	switch {
	case err != nil:
		return shelfmark.Term{}, err
	case word == "true" || word == "false":
		return shelfmark.NewTypedLiteral(word, xsdBoolean), nil
	case word != "":
		return shelfmark.Term{}, p.errAt(start, "expected an object, found %q", word)
	}
	return shelfmark.NewIRI(iri), nil
}

// collection reads "()", which is rdf:nil; other collections need blank
// nodes and are rejected.
func (p *turtleReader) collection() (string, error) {
	start := p.pos
	p.pos++
	p.skipWS()
	if !p.at(')') {
		return "", p.errAt(start, msgCollection)
	}
	p.pos++
	return rdfNil, nil
}
