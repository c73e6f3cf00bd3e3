package http

// This file gives a work's metadata human labels, and derives from it
// what others read: the Highwire Press citation_* tags (Google Scholar),
// a schema.org description in JSON-LD, and the fields of citations
// (ui_work_cite.go).

import (
	"sort"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// Namespaces of the vocabularies whose terms have labels.
const (
	nsSchema  = "http://schema.org/"
	nsSchemaS = "https://schema.org/"
	nsBibo    = "http://purl.org/ontology/bibo/"
)

// uiPrefixes name the namespaces a predicate without a label is shown in
// (as prefix:local).
var uiPrefixes = []struct{ prefix, ns string }{
	{"dc", shelfmark.NSDC}, {"dcterms", shelfmark.NSDCTerms}, {"schema", nsSchema}, {"schema", nsSchemaS},
	{"bibo", nsBibo}, {"foaf", "http://xmlns.com/foaf/0.1/"}, {"rdf", shelfmark.NSRDF},
	{"rdfs", "http://www.w3.org/2000/01/rdf-schema#"}, {"pcdm", shelfmark.NSPCDM}, {"skos", "http://www.w3.org/2004/02/skos/core#"},
	{"marcrel", "http://id.loc.gov/vocabulary/relators/"}, {"edm", "http://www.europeana.eu/schemas/edm/"},
	{"owl", "http://www.w3.org/2002/07/owl#"}, {"mods", "http://www.loc.gov/mods/rdf/v1#"}, {"premis", "http://www.loc.gov/premis/rdf/v3/"},
	{"iiif", "http://iiif.io/api/presentation/3#"}, {"xsd", "http://www.w3.org/2001/XMLSchema#"},
}

// fieldLabels are the catalog keys of the labelled fields, in the order a
// work page lists them; several predicates may share one (dc:title,
// dcterms:title and schema:name are all the title).
var fieldLabels = []struct {
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
	for i, l := range fieldLabels {
		for _, p := range l.preds {
			iri := expand(p)
			m[iri] = struct {
				key  string
				rank int
			}{l.key, i}
			if strings.HasPrefix(iri, nsSchema) { // schema.org is written with either scheme
				m[nsSchemaS+strings.TrimPrefix(iri, nsSchema)] = m[iri]
			}
		}
	}
	return m
}()

// expand turns prefix:local into an IRI.
func expand(name string) string {
	prefix, local, _ := strings.Cut(name, ":")
	for _, p := range uiPrefixes {
		if p.prefix == prefix {
			return p.ns + local
		}
	}
	return name
}

// compactIRI writes an IRI as prefix:local when its namespace is known.
func compactIRI(iri string) string {
	for _, p := range uiPrefixes {
		if local, ok := strings.CutPrefix(iri, p.ns); ok && local != "" {
			return p.prefix + ":" + local
		}
	}
	return iri
}

// uiField is one labelled field of a work page.
type uiField struct {
	Label string
	// Name is the compact predicate (prefix:local, or the IRI), which orders
	// the fields without a label.
	Name   string
	Values []uiValue
	rank   int
}

// uiValue is one value: text, with its language, and a link when it is
// an http(s) IRI.
type uiValue struct {
	Text, Lang, Href string
}

// httpIRI reports whether an IRI may be a link (http or https only: no
// javascript:, data: and the like).
func httpIRI(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// labelFields groups metadata by label, labelled fields first in their
// order, then the others by compact name.
func labelFields(p *uiPage, stmts []shelfmark.Statement) []*uiField {
	byKey := map[string]*uiField{}
	var out []*uiField
	for _, st := range stmts {
		key, name, rank := "", compactIRI(st.Predicate), len(fieldLabels)
		if l, ok := labelOf[st.Predicate]; ok {
			key, rank = l.key, l.rank
		}
		group := key
		if group == "" {
			group = st.Predicate
		}
		f := byKey[group]
		if f == nil {
			f = &uiField{Label: name, Name: name, rank: rank}
			if key != "" {
				f.Label = p.T(key)
			}
			byKey[group] = f
			out = append(out, f)
		}
		v := uiValue{Text: st.Object.Value}
		if st.Object.Kind == shelfmark.IRI {
			if httpIRI(st.Object.Value) {
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
var titlePreds = []string{shelfmark.NSDC + "title", shelfmark.NSDCTerms + "title", nsSchema + "name", nsSchemaS + "name"}

// workTitle picks a title: one in lang, else one without a language,
// else the first.
func workTitle(stmts []shelfmark.Statement, lang string) (title, titleLang string) {
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

// citation is what a work's citations are made of.
type citation struct {
	Title       string
	Authors     []string
	Editors     []string
	Date        string // as catalogued
	Publisher   string
	Abstract    string
	Languages   []string
	Keywords    []string
	DOI, ISBN   string
	ISSN        string
	Container   string // the journal or series (dcterms:isPartOf as text)
	Volume      string
	Issue       string
	Pages       string
	FirstPage   string
	LastPage    string
	Edition     string
	License     string
	Type        string // "book", "article", "thesis" or ""
	URL         string
	Identifiers []string
}

// literals returns the distinct non-empty literal values (and, with iris,
// IRIs) of the given predicates (prefix:local), in order.
func literals(stmts []shelfmark.Statement, iris bool, preds ...string) []string {
	var out []string
	seen := map[string]bool{}
	for _, name := range preds {
		iri := expand(name)
		alt := ""
		if strings.HasPrefix(iri, nsSchema) {
			alt = nsSchemaS + strings.TrimPrefix(iri, nsSchema)
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

func firstOf(vs []string) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0]
}

// citationOf reads a work's citation from its metadata.
func citationOf(stmts []shelfmark.Statement, title, url string) *citation {
	c := &citation{Title: title, URL: url,
		Authors:     literals(stmts, false, "dc:creator", "dcterms:creator", "schema:author", "schema:creator"),
		Editors:     literals(stmts, false, "bibo:editor", "schema:editor"),
		Date:        firstOf(literals(stmts, false, "dcterms:issued", "schema:datePublished", "dc:date", "dcterms:date", "dcterms:created", "schema:dateCreated")),
		Publisher:   firstOf(literals(stmts, false, "dc:publisher", "dcterms:publisher", "schema:publisher")),
		Abstract:    firstOf(literals(stmts, false, "dcterms:abstract", "schema:abstract", "bibo:abstract", "dc:description", "dcterms:description", "schema:description")),
		Languages:   literals(stmts, false, "dc:language", "dcterms:language", "schema:inLanguage"),
		Keywords:    literals(stmts, false, "dc:subject", "dcterms:subject", "schema:keywords", "schema:about"),
		DOI:         firstOf(literals(stmts, false, "bibo:doi")),
		ISBN:        firstOf(literals(stmts, false, "bibo:isbn13", "bibo:isbn", "bibo:isbn10", "schema:isbn")),
		ISSN:        firstOf(literals(stmts, false, "bibo:issn", "bibo:eissn", "schema:issn")),
		Container:   firstOf(literals(stmts, false, "dcterms:isPartOf", "schema:isPartOf")),
		Volume:      firstOf(literals(stmts, false, "bibo:volume", "schema:volumeNumber")),
		Issue:       firstOf(literals(stmts, false, "bibo:issue", "schema:issueNumber")),
		Pages:       firstOf(literals(stmts, false, "bibo:pages", "schema:pagination")),
		FirstPage:   firstOf(literals(stmts, false, "bibo:pageStart")),
		LastPage:    firstOf(literals(stmts, false, "bibo:pageEnd")),
		Edition:     firstOf(literals(stmts, false, "bibo:edition", "schema:bookEdition")),
		License:     firstOf(literals(stmts, true, "dcterms:license", "schema:license")),
		Identifiers: literals(stmts, false, "dc:identifier", "dcterms:identifier"),
	}
	if c.FirstPage == "" && c.Pages != "" {
		if a, b, ok := strings.Cut(c.Pages, "-"); ok {
			c.FirstPage, c.LastPage = strings.TrimSpace(a), strings.TrimSpace(strings.TrimLeft(b, "-"))
		}
	}
	for _, t := range append(literals(stmts, true, "dc:type", "dcterms:type", "rdf:type", "schema:genre"), "") {
		l := strings.ToLower(t)
		switch {
		case strings.Contains(l, "thesis") || strings.Contains(l, "dissertation"):
			c.Type = "thesis"
		case strings.Contains(l, "article"):
			c.Type = "article"
		case strings.Contains(l, "book") || strings.Contains(l, "monograph"):
			c.Type = "book"
		default:
			continue
		}
		break
	}
	return c
}

// year is the four-digit year a date begins with, or "".
func year(date string) string {
	if len(date) >= 4 {
		y := date[:4]
		if strings.Trim(y, "0123456789") == "" {
			return y
		}
	}
	return ""
}

// scholarDate writes an ISO date (2024-03-05, 2024-03, 2024) as Google
// Scholar's citation_publication_date wants it (2024/03/05); other dates
// are left as they are.
func scholarDate(date string) string {
	d := date
	if len(d) > 10 {
		d = d[:10]
	}
	if y := year(d); y != "" && strings.Trim(d, "0123456789-") == "" {
		return strings.ReplaceAll(strings.TrimRight(d, "-"), "-", "/")
	}
	return date
}

// uiMeta is one <meta name content> tag.
type uiMeta struct {
	Name, Content string
}

// workMeta derives the Highwire Press tags and the schema.org JSON-LD of a
// work page.
func (s *Server) workMeta(p *uiPage, res *shelfmark.Resource, d *uiWorkData, files map[shelfmark.ID][]*shelfmark.Resource) ([]uiMeta, map[string]any) {
	c := citationOf(res.Metadata, d.Title, d.Canonical)
	var meta []uiMeta
	add := func(name string, vs ...string) {
		for _, v := range vs {
			if v != "" {
				meta = append(meta, uiMeta{Name: name, Content: v})
			}
		}
	}
	add("citation_title", c.Title)
	add("citation_author", c.Authors...)
	if c.Date != "" {
		add("citation_publication_date", scholarDate(c.Date))
	}
	add("citation_publisher", c.Publisher)
	add("citation_language", c.Languages...)
	add("citation_keywords", c.Keywords...)
	add("citation_doi", c.DOI)
	add("citation_isbn", c.ISBN)
	add("citation_issn", c.ISSN)
	switch c.Type {
	case "article":
		add("citation_journal_title", c.Container)
	case "thesis":
		add("citation_dissertation_institution", c.Publisher)
	}
	add("citation_volume", c.Volume)
	add("citation_issue", c.Issue)
	add("citation_firstpage", c.FirstPage)
	add("citation_lastpage", c.LastPage)
	add("citation_abstract_html_url", d.Canonical)
	var pdf, thumb string
	for _, it := range d.Items {
		for _, f := range files[it.ID] {
			switch {
			case pdf == "" && (f.File.Use == shelfmark.UseOriginal || f.File.Use == "") && pdfFile(f.File):
				pdf = p.Base + contentURL(f.ID)
			case thumb == "" && f.File.Use == shelfmark.UseThumbnail:
				thumb = p.Base + contentURL(f.ID)
			}
		}
	}
	add("citation_pdf_url", pdf)

	ld := map[string]any{"@context": "https://schema.org", "@type": "CreativeWork", "@id": d.Canonical, "url": d.Canonical, "name": c.Title}
	switch c.Type {
	case "book":
		ld["@type"] = "Book"
	case "article":
		ld["@type"] = "ScholarlyArticle"
	case "thesis":
		ld["@type"] = "Thesis"
	}
	people := func(names []string) []map[string]string {
		out := make([]map[string]string, len(names))
		for i, n := range names {
			out[i] = map[string]string{"@type": "Person", "name": n}
		}
		return out
	}
	if len(c.Authors) > 0 {
		ld["author"] = people(c.Authors)
	}
	if len(c.Editors) > 0 {
		ld["editor"] = people(c.Editors)
	}
	set := func(k, v string) {
		if v != "" {
			ld[k] = v
		}
	}
	set("datePublished", c.Date)
	if c.Publisher != "" {
		ld["publisher"] = map[string]string{"@type": "Organization", "name": c.Publisher}
	}
	set("description", c.Abstract)
	set("inLanguage", firstOf(c.Languages))
	if len(c.Keywords) > 0 {
		ld["keywords"] = strings.Join(c.Keywords, ", ")
	}
	set("isbn", c.ISBN)
	set("license", c.License)
	set("thumbnailUrl", thumb)
	if c.DOI != "" {
		ld["identifier"] = map[string]string{"@type": "PropertyValue", "propertyID": "DOI", "value": c.DOI}
	}
	if len(d.Collections) > 0 {
		var parts []map[string]string
		for _, l := range d.Collections {
			parts = append(parts, map[string]string{"@type": "Collection", "name": l.Text, "url": p.Base + l.Href})
		}
		ld["isPartOf"] = parts
	}
	if pdf != "" {
		ld["encoding"] = map[string]string{"@type": "MediaObject", "encodingFormat": "application/pdf", "contentUrl": pdf}
	}
	return meta, ld
}

// pdfFile reports whether a file is a PDF, by characterization or, before
// it ran, by its declared media type.
func pdfFile(f *shelfmark.File) bool {
	if f.Format.Known() && f.Format.MediaType != "" {
		return f.Format.MediaType == "application/pdf"
	}
	return strings.HasPrefix(f.MediaType, "application/pdf")
}
