package shelfmark

// TermKind tells IRIs from literals. Blank nodes are not stored: metadata
// objects are literals or IRIs (docs/design.md, data model).
type TermKind uint8

const (
	// IRI is an absolute IRI.
	IRI TermKind = iota
	// Literal is a literal with an optional language tag or datatype.
	Literal
)

// XSDString is the datatype of plain literals; it is stored as "".
const XSDString = "http://www.w3.org/2001/XMLSchema#string"

// RDFLangString is the datatype of language-tagged literals; it is implied
// by a non-empty Lang and stored as "".
const RDFLangString = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"

// Term is an RDF term: an IRI or a literal. For literals, Lang is a BCP 47
// tag (lower-cased) or "", and Datatype is an absolute IRI or "" for
// xsd:string and language-tagged strings.
type Term struct {
	Kind     TermKind
	Value    string
	Lang     string
	Datatype string
}

// NewIRI returns an IRI term.
func NewIRI(iri string) Term { return Term{Kind: IRI, Value: iri} }

// NewLiteral returns a plain (xsd:string) literal.
func NewLiteral(s string) Term { return Term{Kind: Literal, Value: s} }

// NewLangLiteral returns a language-tagged literal.
func NewLangLiteral(s, lang string) Term { return Term{Kind: Literal, Value: s, Lang: lang} }

// NewTypedLiteral returns a literal with a datatype; xsd:string is stored as
// a plain literal.
func NewTypedLiteral(s, datatype string) Term {
	if datatype == XSDString {
		datatype = ""
	}
	return Term{Kind: Literal, Value: s, Datatype: datatype}
}

// Triple is a parsed RDF statement with its subject, as read from a client's
// document before it is attached to a resource.
type Triple struct {
	Subject   Term
	Predicate string
	Object    Term
}

// Statement is a stored metadata statement; its subject is the resource
// that holds it.
type Statement struct {
	Predicate string
	Object    Term
}

// Well-known namespaces.
const (
	NSRDF     = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
	NSDC      = "http://purl.org/dc/elements/1.1/"
	NSDCTerms = "http://purl.org/dc/terms/"
	NSPCDM    = "http://pcdm.org/models#"
)

// DedupeStatements returns stmts without repeats, keeping first occurrences
// in order: an RDF graph is a set.
func DedupeStatements(stmts []Statement) []Statement {
	seen := make(map[Statement]struct{}, len(stmts))
	out := stmts[:0:0]
	for _, s := range stmts {
		if _, ok := seen[s]; ok {
			continue
		}
		seen[s] = struct{}{}
		out = append(out, s)
	}
	return out
}
