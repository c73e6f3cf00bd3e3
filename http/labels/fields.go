package labels

// This file gives metadata human labels: the catalog key of each known
// predicate (several predicates may share one), the compact name of the
// others, and the few readings of metadata every face shares (a title,
// the literal values of some predicates).

import (
	"sort"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// Namespaces of the vocabularies whose terms have labels: NSSchema and
// NSSchemaS are schema.org under either scheme (both are read alike),
// NSBibo is the Bibliographic Ontology.
const (
	NSSchema  = "http://schema.org/"
	NSSchemaS = "https://schema.org/"
	NSBibo    = "http://purl.org/ontology/bibo/"
)

// prefixes name the namespaces a predicate without a label is shown in
// (as prefix:local).
var prefixes = []struct{ prefix, ns string }{
	{"dc", shelfmark.NSDC}, {"dcterms", shelfmark.NSDCTerms}, {"schema", NSSchema}, {"schema", NSSchemaS},
	{"bibo", NSBibo}, {"foaf", "http://xmlns.com/foaf/0.1/"}, {"rdf", shelfmark.NSRDF},
	{"rdfs", "http://www.w3.org/2000/01/rdf-schema#"}, {"pcdm", shelfmark.NSPCDM}, {"skos", "http://www.w3.org/2004/02/skos/core#"},
	{"marcrel", "http://id.loc.gov/vocabulary/relators/"}, {"edm", "http://www.europeana.eu/schemas/edm/"},
	{"owl", "http://www.w3.org/2002/07/owl#"}, {"mods", "http://www.loc.gov/mods/rdf/v1#"}, {"premis", "http://www.loc.gov/premis/rdf/v3/"},
	{"iiif", "http://iiif.io/api/presentation/3#"}, {"xsd", "http://www.w3.org/2001/XMLSchema#"},
}

// fieldKeys are the catalog keys of the labelled fields, in the order a
// work page lists them; several predicates may share one (dc:title,
// dcterms:title and schema:name are all the title).
var fieldKeys = []struct {
	key   string
	preds []string
}{
	{"work.field.title", []string{"dc:title", "dcterms:title", "schema:name"}},
	{"work.field.alternative", []string{"dcterms:alternative", "schema:alternateName", "bibo:shortTitle"}},
	{"work.field.creator", []string{"dc:creator", "dcterms:creator", "schema:author", "schema:creator"}},
	{"work.field.editor", []string{"bibo:editor", "schema:editor"}},
	{"work.field.contributor", []string{"dc:contributor", "dcterms:contributor", "schema:contributor"}},
	{"work.field.issued", []string{"dcterms:issued", "schema:datePublished"}},
	{"work.field.date", []string{"dc:date", "dcterms:date"}},
	{"work.field.created", []string{"dcterms:created", "schema:dateCreated"}},
	{"work.field.publisher", []string{"dc:publisher", "dcterms:publisher", "schema:publisher"}},
	{"work.field.edition", []string{"bibo:edition", "schema:bookEdition"}},
	{"work.field.abstract", []string{"dcterms:abstract", "schema:abstract", "bibo:abstract"}},
	{"work.field.description", []string{"dc:description", "dcterms:description", "schema:description"}},
	{"work.field.contents", []string{"dcterms:tableOfContents"}},
	{"work.field.subject", []string{"dc:subject", "dcterms:subject", "schema:about"}},
	{"work.field.keywords", []string{"schema:keywords"}},
	{"work.field.type", []string{"dc:type", "dcterms:type", "rdf:type", "schema:genre"}},
	{"work.field.language", []string{"dc:language", "dcterms:language", "schema:inLanguage"}},
	{"work.field.extent", []string{"dcterms:extent", "bibo:numPages", "schema:numberOfPages"}},
	{"work.field.format", []string{"dc:format", "dcterms:format", "dcterms:medium"}},
	{"work.field.partof", []string{"dcterms:isPartOf", "schema:isPartOf"}},
	{"work.field.volume", []string{"bibo:volume", "schema:volumeNumber"}},
	{"work.field.issue", []string{"bibo:issue", "schema:issueNumber"}},
	{"work.field.pages", []string{"bibo:pages", "bibo:pageStart", "bibo:pageEnd", "schema:pagination"}},
	{"work.field.identifier", []string{"dc:identifier", "dcterms:identifier", "schema:identifier"}},
	{"work.field.isbn", []string{"bibo:isbn", "bibo:isbn10", "bibo:isbn13", "schema:isbn"}},
	{"work.field.issn", []string{"bibo:issn", "bibo:eissn", "schema:issn"}},
	{"work.field.doi", []string{"bibo:doi"}},
	{"work.field.handle", []string{"bibo:handle"}},
	{"work.field.source", []string{"dc:source", "dcterms:source"}},
	{"work.field.relation", []string{"dc:relation", "dcterms:relation", "dcterms:references", "dcterms:isReferencedBy", "dcterms:hasPart", "dcterms:isVersionOf"}},
	{"work.field.coverage", []string{"dc:coverage", "dcterms:coverage"}},
	{"work.field.spatial", []string{"dcterms:spatial", "schema:contentLocation"}},
	{"work.field.temporal", []string{"dcterms:temporal", "schema:temporalCoverage"}},
	{"work.field.rights", []string{"dc:rights", "dcterms:rights", "dcterms:accessRights"}},
	{"work.field.license", []string{"dcterms:license", "schema:license"}},
	{"work.field.rightsholder", []string{"dcterms:rightsHolder", "schema:copyrightHolder"}},
	{"work.field.citation", []string{"dcterms:bibliographicCitation"}},
	{"work.field.provenance", []string{"dcterms:provenance"}},
	{"work.field.sameas", []string{"schema:sameAs", "owl:sameAs", "schema:url"}},
}

// labelOf maps a predicate IRI to its label's catalog key and rank.
var labelOf = func() map[string]struct {
	key  string
	rank int
} {
	m := map[string]struct {
		key  string
		rank int
	}{}
	for i, l := range fieldKeys {
		for _, p := range l.preds {
			iri := Expand(p)
			m[iri] = struct {
				key  string
				rank int
			}{l.key, i}
			if strings.HasPrefix(iri, NSSchema) { // schema.org is written with either scheme
				m[NSSchemaS+strings.TrimPrefix(iri, NSSchema)] = m[iri]
			}
		}
	}
	return m
}()

// Expand turns prefix:local into an IRI.
func Expand(name string) string {
	prefix, local, _ := strings.Cut(name, ":")
	for _, p := range prefixes {
		if p.prefix == prefix {
			return p.ns + local
		}
	}
	return name
}

// CompactIRI writes an IRI as prefix:local when its namespace is known.
func CompactIRI(iri string) string {
	for _, p := range prefixes {
		if local, ok := strings.CutPrefix(iri, p.ns); ok && local != "" {
			return p.prefix + ":" + local
		}
	}
	return iri
}

// Field is one labelled field of a work page.
type Field struct {
	Label string
	// Name is the compact predicate (prefix:local, or the IRI), which orders
	// the fields without a label.
	Name   string
	Values []Value
	rank   int
	key    string // the label's message key, "" for an unlabelled field
}

// Value is one value: text, with its language, and a link when it is
// an http(s) IRI (or, after ForReaders, a search). Code is the value as
// stored when Text names it for a reader (a language's code).
type Value struct {
	Text, Lang, Href, Code string
}

// HTTPIRI reports whether an IRI may be a link (http or https only: no
// javascript:, data: and the like).
func HTTPIRI(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// Fields groups metadata by label, labelled fields first in their
// order, then the others by compact name; labels are the messages of
// msgs (one language's catalog, Catalogs.Messages). It allocates a field
// per distinct predicate and a value per statement. The page chosen to
// represent a work (shelfmark.PredThumbnailPage) is left out: it says
// which page is the work's thumbnail, not what the work is.
func Fields(msgs map[string]string, stmts []shelfmark.Statement) []*Field {
	byKey := map[string]*Field{}
	var out []*Field
	for _, st := range stmts {
		if st.Predicate == shelfmark.PredThumbnailPage {
			continue
		}
		key, name, rank := "", CompactIRI(st.Predicate), len(fieldKeys)
		if l, ok := labelOf[st.Predicate]; ok {
			key, rank = l.key, l.rank
		}
		group := key
		if group == "" {
			group = st.Predicate
		}
		f := byKey[group]
		if f == nil {
			f = &Field{Label: name, Name: name, rank: rank, key: key}
			if key != "" {
				f.Label = Translate(msgs, key)
			}
			byKey[group] = f
			out = append(out, f)
		}
		v := Value{Text: st.Object.Value}
		if st.Object.Kind == shelfmark.IRI {
			if HTTPIRI(st.Object.Value) {
				v.Href = st.Object.Value
			}
		} else {
			v.Lang = st.Object.Lang
		}
		f.Values = append(f.Values, v)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].rank != out[j].rank {
			return out[i].rank < out[j].rank
		}
		return out[i].Name < out[j].Name
	})
	return out
}

// titlePreds are the predicates of a title.
var titlePreds = []string{shelfmark.NSDC + "title", shelfmark.NSDCTerms + "title", NSSchema + "name", NSSchemaS + "name"}

// Title picks a title: one in lang, else one without a language,
// else the first.
func Title(stmts []shelfmark.Statement, lang string) (title, titleLang string) {
	var first, plain *shelfmark.Term
	for _, pred := range titlePreds {
		for i := range stmts {
			st := &stmts[i]
			if st.Predicate != pred || st.Object.Kind != shelfmark.Literal || strings.TrimSpace(st.Object.Value) == "" {
				continue
			}
			if lang != "" && (st.Object.Lang == lang || strings.HasPrefix(st.Object.Lang, lang+"-")) {
				return st.Object.Value, st.Object.Lang
			}
			if first == nil {
				first = &st.Object
			}
			if plain == nil && st.Object.Lang == "" {
				plain = &st.Object
			}
		}
	}
	switch {
	case plain != nil:
		return plain.Value, ""
	case first != nil:
		return first.Value, first.Lang
	}
	return "", ""
}

// Literals returns the distinct non-empty literal values (and, with iris,
// IRIs) of the given predicates (prefix:local), in order.
func Literals(stmts []shelfmark.Statement, iris bool, preds ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, name := range preds {
		iri := Expand(name)
		alt := ""
		if strings.HasPrefix(iri, NSSchema) {
			alt = NSSchemaS + strings.TrimPrefix(iri, NSSchema)
		}
		for _, st := range stmts {
			if st.Predicate != iri && (alt == "" || st.Predicate != alt) {
				continue
			}
			if st.Object.Kind == shelfmark.IRI && !iris {
				continue
			}
			v := strings.TrimSpace(st.Object.Value)
			if v != "" && !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// FirstOf is the first of vs, or "" when there is none.
func FirstOf(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}
