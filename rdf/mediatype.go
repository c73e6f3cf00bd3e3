package rdf

import (
	"strconv"
	"strings"
)

// Media types read and written by this package.
const (
	JSON     = "application/json"      // plain JSON metadata (ParseJSONMetadata, JSONMetadata)
	JSONLD   = "application/ld+json"   // JSON-LD
	Turtle   = "text/turtle"           // Turtle 1.1
	NTriples = "application/n-triples" // N-Triples
)

// ReadableTypes returns the media types of metadata bodies this package
// reads, in the server's order of preference: application/json (through
// ParseJSONMetadata) and the RDF syntaxes that Parse reads. The slice is
// fresh. Negotiate chooses among the same types for responses.
func ReadableTypes() []string {
	return []string{JSON, JSONLD, Turtle, NTriples}
}

// baseMediaType returns the media type of a Content-Type value without its
// parameters, lower-cased and trimmed: "Text/Turtle; charset=utf-8" gives
// "text/turtle".
func baseMediaType(contentType string) string {
	if i := strings.IndexByte(contentType, ';'); i >= 0 {
		contentType = contentType[:i]
	}
	return strings.ToLower(strings.TrimSpace(contentType))
}

// Negotiate chooses the representation of metadata for an Accept header:
// the offered type (application/json, application/ld+json, text/turtle,
// application/n-triples) with the highest q-value, exact matches beating
// type/* and */* ranges, and ties going to the order of ReadableTypes. An
// empty Accept, or one whose best match is */*, gives application/json. It
// reports false when Accept excludes every offered type (a 406).
func Negotiate(accept string) (mediaType string, ok bool) {
	if strings.TrimSpace(accept) == "" {
		return JSON, true
	}
	offers := [...]string{JSON, JSONLD, Turtle, NTriples}
	var q [len(offers)]float64
	var spec [len(offers)]int // specificity of the range that set q: -1 none, 0 */*, 1 type/*, 2 exact
	for i := range spec {
		spec[i] = -1
	}
	for _, part := range strings.Split(accept, ",") {
		rng, qv, valid := parseAcceptRange(part)
		if !valid {
			continue
		}
		for i, o := range offers {
			s := matchRange(rng, o)
			if s > spec[i] {
				spec[i], q[i] = s, qv
			}
		}
	}
	best := -1
	for i := range offers {
		if spec[i] < 0 || q[i] <= 0 {
			continue
		}
		if best < 0 || q[i] > q[best] || (q[i] == q[best] && spec[i] > spec[best]) {
			best = i
		}
	}
	if best < 0 {
		return "", false
	}
	return offers[best], true
}

// parseAcceptRange splits one element of an Accept header into its media
// range (lower-cased) and q-value (1 when absent).
func parseAcceptRange(part string) (rng string, q float64, ok bool) {
	params := strings.Split(part, ";")
	rng = strings.ToLower(strings.TrimSpace(params[0]))
	if rng == "" || strings.Count(rng, "/") != 1 {
		return "", 0, false
	}
	q = 1
	for _, p := range params[1:] {
		k, v, found := strings.Cut(p, "=")
		if !found || !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f < 0 || f > 1 {
			return "", 0, false
		}
		q = f
	}
	return rng, q, true
}

// matchRange returns how specifically a media range matches mediaType: 2
// for an exact match, 1 for type/*, 0 for */*, -1 for no match.
func matchRange(rng, mediaType string) int {
	switch {
	case rng == mediaType:
		return 2
	case rng == "*/*":
		return 0
	case strings.HasSuffix(rng, "/*") && strings.HasPrefix(mediaType, rng[:len(rng)-1]):
		return 1
	}
	return -1
}
