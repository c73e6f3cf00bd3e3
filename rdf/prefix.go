package rdf

import "strings"

// Prefix is a namespace prefix known to Shelfmark, such as dcterms for
// http://purl.org/dc/terms/.
type Prefix struct {
	Name      string
	Namespace string
}

// Prefixes returns the table of known prefixes, sorted by name. The slice is
// fresh: callers may change it.
func Prefixes() []Prefix {
	return []Prefix{
		{"bibo", "http://purl.org/ontology/bibo/"},
		{"dc", "http://purl.org/dc/elements/1.1/"},
		{"dcterms", "http://purl.org/dc/terms/"},
		{"ebucore", "http://www.ebu.ch/metadata/ontologies/ebucore/ebucore#"},
		{"edm", "http://www.europeana.eu/schemas/edm/"},
		{"foaf", "http://xmlns.com/foaf/0.1/"},
		{"iana", "http://www.iana.org/assignments/relation/"},
		{"marcrel", "http://id.loc.gov/vocabulary/relators/"},
		{"ore", "http://www.openarchives.org/ore/terms/"},
		{"owl", "http://www.w3.org/2002/07/owl#"},
		{"pcdm", "http://pcdm.org/models#"},
		{"rdf", "http://www.w3.org/1999/02/22-rdf-syntax-ns#"},
		{"rdfs", "http://www.w3.org/2000/01/rdf-schema#"},
		{"schema", "http://schema.org/"},
		{"skos", "http://www.w3.org/2004/02/skos/core#"},
		{"xsd", "http://www.w3.org/2001/XMLSchema#"},
	}
}

// namespaceOf returns the namespace of a known prefix, or "". It is a switch
// rather than a map so that the table stays constant; a test keeps it in
// step with Prefixes.
func namespaceOf(prefix string) string {
	switch prefix {
	case "bibo":
		return "http://purl.org/ontology/bibo/"
	case "dc":
		return "http://purl.org/dc/elements/1.1/"
	case "dcterms":
		return "http://purl.org/dc/terms/"
	case "ebucore":
		return "http://www.ebu.ch/metadata/ontologies/ebucore/ebucore#"
	case "edm":
		return "http://www.europeana.eu/schemas/edm/"
	case "foaf":
		return "http://xmlns.com/foaf/0.1/"
	case "iana":
		return "http://www.iana.org/assignments/relation/"
	case "marcrel":
		return "http://id.loc.gov/vocabulary/relators/"
	case "ore":
		return "http://www.openarchives.org/ore/terms/"
	case "owl":
		return "http://www.w3.org/2002/07/owl#"
	case "pcdm":
		return "http://pcdm.org/models#"
	case "rdf":
		return "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
	case "rdfs":
		return "http://www.w3.org/2000/01/rdf-schema#"
	case "schema":
		return "http://schema.org/"
	case "skos":
		return "http://www.w3.org/2004/02/skos/core#"
	case "xsd":
		return "http://www.w3.org/2001/XMLSchema#"
	}
	return ""
}

// prefixOf returns the known prefix whose namespace is exactly ns, or "".
func prefixOf(ns string) string {
	switch ns {
	case "http://purl.org/ontology/bibo/":
		return "bibo"
	case "http://purl.org/dc/elements/1.1/":
		return "dc"
	case "http://purl.org/dc/terms/":
		return "dcterms"
	case "http://www.ebu.ch/metadata/ontologies/ebucore/ebucore#":
		return "ebucore"
	case "http://www.europeana.eu/schemas/edm/":
		return "edm"
	case "http://xmlns.com/foaf/0.1/":
		return "foaf"
	case "http://www.iana.org/assignments/relation/":
		return "iana"
	case "http://id.loc.gov/vocabulary/relators/":
		return "marcrel"
	case "http://www.openarchives.org/ore/terms/":
		return "ore"
	case "http://www.w3.org/2002/07/owl#":
		return "owl"
	case "http://pcdm.org/models#":
		return "pcdm"
	case "http://www.w3.org/1999/02/22-rdf-syntax-ns#":
		return "rdf"
	case "http://www.w3.org/2000/01/rdf-schema#":
		return "rdfs"
	case "http://schema.org/":
		return "schema"
	case "http://www.w3.org/2004/02/skos/core#":
		return "skos"
	case "http://www.w3.org/2001/XMLSchema#":
		return "xsd"
	}
	return ""
}

// ExpandPrefixed expands a prefixed name such as "dcterms:title" into its
// full IRI. It reports false when s has no colon or its prefix is not in the
// table of Prefixes.
func ExpandPrefixed(s string) (string, bool) {
	i := strings.IndexByte(s, ':')
	if i < 0 {
		return "", false
	}
	ns := namespaceOf(s[:i])
	if ns == "" {
		return "", false
	}
	return ns + s[i+1:], true
}

// splitNamespace splits iri after its last '/' or '#', the boundary at which
// every known namespace ends. It returns the known prefix and the local
// name, or "" and iri when the namespace is not known.
func splitNamespace(iri string) (prefix, local string) {
	i := len(iri) - 1
	for i >= 0 && iri[i] != '/' && iri[i] != '#' {
		i--
	}
	if i < 0 {
		return "", iri
	}
	p := prefixOf(iri[:i+1])
	if p == "" {
		return "", iri
	}
	return p, iri[i+1:]
}

// Compact returns iri as a prefixed name ("dcterms:title") when its
// namespace is a known prefix and the rest is a plain local name (letters,
// digits, '_', '-' and inner '.'), and iri unchanged otherwise. The result
// reads back through ExpandPrefixed and is valid in Turtle and JSON-LD.
func Compact(iri string) string {
	p, local, ok := compactParts(iri)
	if !ok {
		return iri
	}
	return p + ":" + local
}

// compactParts returns the prefix and local name Compact would use for iri,
// and false when it would leave iri unchanged.
func compactParts(iri string) (prefix, local string, ok bool) {
	p, local := splitNamespace(iri)
	if p == "" || !isSimpleLocal(local) {
		return "", "", false
	}
	return p, local, true
}

// isSimpleLocal reports whether s can follow "prefix:" in Turtle without
// escapes: ASCII letters, digits, '_' and '-', and '.' except at the end,
// not starting with '-' or '.'. The empty name is allowed.
func isSimpleLocal(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		case c == '-':
			if i == 0 {
				return false
			}
		case c == '.':
			if i == 0 || i == len(s)-1 {
				return false
			}
		default:
			return false
		}
	}
	return true
}
