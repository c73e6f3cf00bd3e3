package rdf

import (
	"fmt"
	"io"
	"mime"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// DefaultMaxTriples is the number of statements Parse accepts in one
// document unless MaxTriples says otherwise: the engine's limit on the
// statements of one resource.
const DefaultMaxTriples = shelfmark.MaxStatements

// Option changes how Parse reads a document.
type Option func(*parseConfig)

// parseConfig holds the options of one Parse call.
type parseConfig struct {
	maxTriples int
}

// MaxTriples caps the number of statements a document may hold; Parse
// returns EINVALID ("too many statements") beyond it. n <= 0 removes the
// cap.
func MaxTriples(n int) Option {
	return func(c *parseConfig) { c.maxTriples = n }
}

// Parse reads an RDF document in one of the media types text/turtle,
// application/n-triples or application/ld+json (parameters such as
// charset=utf-8 are allowed) and returns its statements in document order.
// Relative IRIs, including <>, resolve against base, which must be an
// absolute IRI or "" (then relative IRIs are errors).
//
// Errors are *shelfmark.Error values: EUNSUPPORTED for another media type,
// EINVALID for a syntax error (with "line" and "column" in Details when the
// position is known), a blank node, an IRI that is not absolute, or more
// statements than the cap. A failure to read r is returned wrapped.
func Parse(r io.Reader, mediaType, base string, opts ...Option) ([]shelfmark.Triple, error) {
	mt, err := rdfMediaType(mediaType)
	if err != nil {
		return nil, err
	}
	src, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("rdf: reading %s document: %w", formatName(mt), err)
	}
	return ParseBytes(src, mediaType, base, opts...)
}

// ParseBytes is Parse of a document already in memory, with no copy of
// it: a request body read whole is parsed where it lies.
func ParseBytes(src []byte, mediaType, base string, opts ...Option) ([]shelfmark.Triple, error) {
	mt, err := rdfMediaType(mediaType)
	if err != nil {
		return nil, err
	}
	if base != "" && (!isAbsoluteIRI(base) || badIRIChar(base) >= 0) {
		return nil, fmt.Errorf("rdf: parse %s: base %q is not an absolute IRI", mt, base)
	}
	cfg := parseConfig{maxTriples: DefaultMaxTriples}
	for _, o := range opts {
		o(&cfg)
	}
	return parseBytes(src, mt, base, cfg)
}

// parseBytes parses src, already known to be in media type mt.
func parseBytes(src []byte, mt, base string, cfg parseConfig) ([]shelfmark.Triple, error) {
	// About one triple per 40 bytes in Turtle and N-Triples; the cap
	// bounds what a huge body can make us reserve up front.
	s := &sink{max: cfg.maxTriples, out: make([]shelfmark.Triple, 0, min(len(src)/40+1, 1024))}
	var err error
	switch mt {
	case Turtle:
		err = parseTurtle(src, base, s)
	case NTriples:
		err = parseNTriples(src, base, s)
	case JSONLD:
		err = parseJSONLD(src, base, s)
	}
	if err != nil {
		return nil, err
	}
	return s.out, nil
}

// rdfMediaType returns the base media type of contentType if Parse reads
// it, or an EUNSUPPORTED error naming the types it reads.
func rdfMediaType(contentType string) (string, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, params = baseMediaType(contentType), nil
	}
	switch mt {
	case Turtle, NTriples, JSONLD:
	default:
		return "", &shelfmark.Error{
			Code:    shelfmark.EUNSUPPORTED,
			Message: fmt.Sprintf("Cannot read RDF metadata in %q; send text/turtle, application/n-triples or application/ld+json.", contentType),
			Details: map[string]any{"accepted": []string{Turtle, NTriples, JSONLD}},
		}
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") && !strings.EqualFold(cs, "us-ascii") {
		return "", &shelfmark.Error{
			Code:    shelfmark.EUNSUPPORTED,
			Message: fmt.Sprintf("Cannot read %s in charset %q; send UTF-8.", formatName(mt), cs),
			Details: map[string]any{"accepted": []string{"utf-8"}},
		}
	}
	return mt, nil
}

// sink collects parsed triples and enforces the cap on their number.
type sink struct {
	out []shelfmark.Triple
	max int
}

// add appends a triple, or returns the "too many statements" error.
func (s *sink) add(subject, predicate string, object shelfmark.Term) error {
	if s.max > 0 && len(s.out) >= s.max {
		return tooManyStatements(s.max)
	}
	s.out = append(s.out, shelfmark.Triple{Subject: shelfmark.NewIRI(subject), Predicate: predicate, Object: object})
	return nil
}

// tooManyStatements is the error for a document over the cap.
func tooManyStatements(max int) *shelfmark.Error {
	return &shelfmark.Error{
		Code:    shelfmark.EINVALID,
		Message: fmt.Sprintf("The document has too many statements: at most %d are accepted.", max),
		Details: map[string]any{"limit": max},
	}
}

// normalizeLang checks a language tag against the Turtle LANGTAG grammar
// ([a-zA-Z]+ ('-' [a-zA-Z0-9]+)*) and returns it in lower case.
func normalizeLang(tag string) (string, bool) {
	if tag == "" {
		return "", false
	}
	first, lower := true, true
	n := 0 // length of the current subtag
	for i := 0; i < len(tag); i++ {
		c := tag[i]
		switch {
		case c >= 'A' && c <= 'Z':
			lower = false
			n++
		case c >= 'a' && c <= 'z':
			n++
		case c >= '0' && c <= '9' && !first:
			n++
		case c == '-' && n > 0:
			first, n = false, 0
		default:
			return "", false
		}
	}
	if n == 0 {
		return "", false
	}
	if lower {
		return tag, true
	}
	return strings.ToLower(tag), true
}

// newLiteral builds a literal term from a parsed value, language tag and
// datatype IRI (either may be ""), or returns a reason it is invalid.
func newLiteral(value, lang, datatype string) (shelfmark.Term, string) {
	if lang != "" {
		l, ok := normalizeLang(lang)
		if !ok {
			return shelfmark.Term{}, fmt.Sprintf("%q is not a language tag", lang)
		}
		return shelfmark.NewLangLiteral(value, l), ""
	}
	if datatype == shelfmark.RDFLangString {
		return shelfmark.Term{}, "a literal of type rdf:langString needs a language tag"
	}
	return shelfmark.NewTypedLiteral(value, datatype), ""
}

// checkIRI returns a reason the IRI cannot be stored, or "".
func checkIRI(iri string) string {
	if r := badIRIChar(iri); r >= 0 {
		return fmt.Sprintf("the IRI <%s> contains the character %q, which IRIs may not contain", iri, r)
	}
	if !isAbsoluteIRI(iri) {
		return fmt.Sprintf("the IRI <%s> is relative and there is no base IRI to resolve it against", iri)
	}
	if barePercent(iri) {
		// RFC 3987: "%" only starts a percent-encoded octet. Every reader
		// refuses it alike (json-gold would otherwise drop such statements).
		return fmt.Sprintf("the IRI <%s> has a %% that does not start a percent-encoded octet (write %%25 for a percent sign)", iri)
	}
	return ""
}

// barePercent reports whether s has a "%" not followed by two hex digits.
func barePercent(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && (i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2])) {
			return true
		}
	}
	return false
}
