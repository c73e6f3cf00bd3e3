package api

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/rdf"
)

// isRDF reports whether a media type is one of the RDF syntaxes.
func isRDF(mt string) bool {
	switch mt {
	case "text/turtle", "application/n-triples", "application/ld+json":
		return true
	}
	return false
}

func unsupported(mt string) error {
	return &shelfmark.Error{Code: shelfmark.EUNSUPPORTED,
		Message: fmt.Sprintf("Content-Type %q cannot be read here; send application/json, application/ld+json, text/turtle or application/n-triples.", mt),
		Details: map[string]any{"accepted": []string{"application/json", "application/ld+json", "text/turtle", "application/n-triples"}}}
}

// parseRDFMetadata parses an RDF body about subject: every statement must
// have the resource itself ("<>") as its subject.
func parseRDFMetadata(body []byte, mt, subject string) ([]shelfmark.Statement, error) {
	triples, err := rdf.ParseBytes(body, mt, subject, rdf.MaxTriples(maxStatements))
	if err != nil {
		return nil, err
	}
	out := make([]shelfmark.Statement, len(triples))
	for i, t := range triples {
		if t.Subject.Kind != shelfmark.IRI || t.Subject.Value != subject {
			return nil, &shelfmark.Error{Code: shelfmark.EINVALID,
				Message: fmt.Sprintf("Statement %d is about <%s>; only statements about the resource itself (<> or <%s>) are stored.", i+1, t.Subject.Value, subject),
				Details: map[string]any{"statement": i + 1, "subject": t.Subject.Value}}
		}
		out[i] = shelfmark.Statement{Predicate: t.Predicate, Object: t.Object}
	}
	return out, nil
}

func contentCharset(mt string) string {
	if strings.HasPrefix(mt, "text/") {
		return "; charset=utf-8"
	}
	return ""
}

func pcdmClass(k shelfmark.Kind) string {
	switch k {
	case shelfmark.KindCollection:
		return "Collection"
	case shelfmark.KindFile:
		return "File"
	}
	return "Object"
}

func negotiate(r *http.Request) (string, bool) { return rdf.Negotiate(r.Header.Get("Accept")) }

func notAcceptable(r *http.Request) error {
	return &shelfmark.Error{Code: shelfmark.ENOTACCEPTABLE,
		Message: fmt.Sprintf("No representation matches Accept %q; this resource is available as %s.", r.Header.Get("Accept"), strings.Join(rdf.ReadableTypes(), ", ")),
		Details: map[string]any{"available": rdf.ReadableTypes()}}
}
