package rdf

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/piprate/json-gold/ld"
	"github.com/shelfmark/shelfmark"
)

// noRemoteLoader is the document loader given to json-gold: it refuses to
// fetch remote contexts, so that a request body cannot make the server
// reach out to arbitrary URLs (or wait for them).
type noRemoteLoader struct{}

// errRemoteContext is returned by noRemoteLoader.
var errRemoteContext = errors.New("remote contexts are not loaded")

// LoadDocument implements ld.DocumentLoader by refusing every URL.
func (noRemoteLoader) LoadDocument(u string) (*ld.RemoteDocument, error) {
	return nil, ld.NewJsonLdError(ld.LoadingRemoteContextFailed, fmt.Errorf("%w: %s", errRemoteContext, u))
}

// parseJSONLD reads a JSON-LD document into s: it is expanded against base
// and converted to RDF by github.com/piprate/json-gold in safe mode (keys
// that map to no IRI are errors rather than silently dropped).
func parseJSONLD(src []byte, base string, s *sink) error {
	// encoding/json would replace bytes that are not UTF-8, and lone
	// surrogate escapes, with U+FFFD.
	if err := CheckJSONText(JSONLD, src); err != nil {
		return err
	}
	var doc any
	if err := json.Unmarshal(src, &doc); err != nil {
		return jsonSyntaxError(JSONLD, src, err)
	}
	switch doc.(type) {
	case map[string]any, []any:
	default:
		return invalid(JSONLD, "the document must be a JSON object or an array of objects")
	}
	if err := checkJSONLDLanguages(doc); err != nil {
		return err
	}
	if err := checkJSONLDPercents(doc); err != nil {
		return err
	}
	opts := ld.NewJsonLdOptions(base)
	opts.DocumentLoader = noRemoteLoader{}
	opts.SafeMode = true
	ds, err := jsonLDToRDF(doc, opts)
	if err != nil {
		return err
	}
	for name, quads := range ds.Graphs {
		if name != "@default" && len(quads) > 0 {
			return invalid(JSONLD, "named graphs are not supported; put the statements at the top level")
		}
	}
	for _, q := range ds.Graphs["@default"] {
		subject, err := jsonLDIRI(q.Subject, "subject")
		if err != nil {
			return err
		}
		predicate, err := jsonLDIRI(q.Predicate, "predicate")
		if err != nil {
			return err
		}
		var object shelfmark.Term
		if lit, ok := q.Object.(ld.Literal); ok {
			datatype := lit.Datatype
			if lit.Language != "" {
				datatype = ""
			} else if reason := checkIRI(datatype); reason != "" {
				return invalid(JSONLD, "%s", reason)
			}
			var reason string
			if object, reason = newLiteral(lit.Value, lit.Language, datatype); reason != "" {
				return invalid(JSONLD, "%s", reason)
			}
		} else {
			iri, err := jsonLDIRI(q.Object, "object")
			if err != nil {
				return err
			}
			object = shelfmark.NewIRI(iri)
		}
		if err := s.add(subject, predicate, object); err != nil {
			return err
		}
	}
	return nil
}

// checkJSONLDLanguages returns an error for an "@language" that is not a
// language tag anywhere in doc: json-gold drops such values silently, and
// the repository must not lose a client's statements without saying so.
func checkJSONLDLanguages(doc any) error {
	switch v := doc.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "@language" && s != "" {
				if _, ok := normalizeLang(s); !ok {
					return invalid(JSONLD, "%q is not a language tag", s)
				}
			}
			if err := checkJSONLDLanguages(x); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range v {
			if err := checkJSONLDLanguages(x); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkJSONLDPercents returns an error for a property, "@id" or "@type"
// holding a "%" that does not start a percent-encoded octet, here or in the
// context: json-gold drops such statements silently, and the repository must
// not lose a client's statements without saying so.
func checkJSONLDPercents(doc any) error {
	bad := barePercent
	switch v := doc.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "@context" {
				// term definitions, @vocab and @base become IRIs
				if err := checkContextPercents(x, bad); err != nil {
					return err
				}
				continue
			}
			if bad(k) {
				return invalid(JSONLD, "the property %q is not a valid IRI: %% must start a percent-encoded octet such as %%25", k)
			}
			if sv, ok := x.(string); ok && (k == "@id" || k == "@type") && bad(sv) {
				return invalid(JSONLD, "%s %q is not a valid IRI: %% must start a percent-encoded octet such as %%25", k, sv)
			}
			if err := checkJSONLDPercents(x); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range v {
			if err := checkJSONLDPercents(x); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkContextPercents refuses any string in a context with a bare "%".
func checkContextPercents(ctx any, bad func(string) bool) error {
	switch v := ctx.(type) {
	case string:
		if bad(v) {
			return invalid(JSONLD, "the context holds %q, which is not a valid IRI: %% must start a percent-encoded octet such as %%25", v)
		}
	case map[string]any:
		for k, x := range v {
			if bad(k) {
				return invalid(JSONLD, "the context term %q is not valid: %% must start a percent-encoded octet such as %%25", k)
			}
			if err := checkContextPercents(x, bad); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range v {
			if err := checkContextPercents(x, bad); err != nil {
				return err
			}
		}
	}
	return nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// jsonLDToRDF runs json-gold, turning its errors into EINVALID and a panic
// into an error.
func jsonLDToRDF(doc any, opts *ld.JsonLdOptions) (ds *ld.RDFDataset, err error) {
	defer func() {
		if r := recover(); r != nil {
			ds, err = nil, invalid(JSONLD, "the document cannot be processed (%v)", r)
		}
	}()
	res, err := ld.NewJsonLdProcessor().ToRDF(doc, opts)
	if err != nil {
		if errors.Is(err, errRemoteContext) || isRemoteContextError(err) {
			return nil, invalid(JSONLD, "remote contexts are not supported; put the context inline in \"@context\"")
		}
		return nil, invalid(JSONLD, "%v", err)
	}
	ds, ok := res.(*ld.RDFDataset)
	if !ok {
		return nil, fmt.Errorf("rdf: json-gold returned %T, not a dataset", res)
	}
	return ds, nil
}

// isRemoteContextError reports whether json-gold failed to load a remote
// context or document (it does not always wrap the loader's error).
func isRemoteContextError(err error) bool {
	var e *ld.JsonLdError
	return errors.As(err, &e) && (e.Code == ld.LoadingRemoteContextFailed || e.Code == ld.LoadingDocumentFailed)
}

// jsonLDIRI returns the IRI of a json-gold node, or an error for a blank
// node or a relative IRI.
func jsonLDIRI(n ld.Node, role string) (string, error) {
	switch n := n.(type) {
	case ld.IRI:
		if reason := checkIRI(n.Value); reason != "" {
			return "", invalid(JSONLD, "%s", reason)
		}
		return n.Value, nil
	case ld.BlankNode:
		return "", invalid(JSONLD, "a node without \"@id\" is a blank node, and %s", msgBlankNode)
	}
	return "", invalid(JSONLD, "the %s must be an IRI", role)
}

// jsonSyntaxError converts an encoding/json error into an EINVALID error
// with the line and column of the offending byte.
func jsonSyntaxError(mediaType string, src []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		line, col := position(src, int(se.Offset)-1)
		if int(se.Offset) >= len(src) {
			line, col = position(src, len(src))
		}
		return positionError(mediaType, line, col, "%s", se.Error())
	}
	return invalid(mediaType, "%v", err)
}

// appendJSONLD appends a JSON-LD document for the statements of subject: an
// "@context" with the prefixes the keys and datatypes use, "@id", and the
// same properties as the plain JSON form.
func appendJSONLD(dst []byte, subject string, stmts []shelfmark.Statement) []byte {
	var used []string
	for _, st := range stmts {
		used = addUsedPrefix(used, st.Predicate)
		if st.Object.Kind == shelfmark.Literal && st.Object.Datatype != "" {
			used = addUsedPrefix(used, st.Object.Datatype)
		}
	}
	slices.Sort(used)
	dst = append(dst, `{"@context":{`...)
	for i, p := range used {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, p)
		dst = append(dst, ':')
		dst = appendJSONString(dst, namespaceOf(p))
	}
	dst = append(dst, `},"@id":`...)
	dst = appendJSONString(dst, subject)
	return appendJSONProperties(dst, stmts, true)
}

// addUsedPrefix adds the prefix Compact uses for iri, if any, to used.
func addUsedPrefix(used []string, iri string) []string {
	p, _, ok := compactParts(iri)
	if ok && !slices.Contains(used, p) {
		used = append(used, p)
	}
	return used
}
