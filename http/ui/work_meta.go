package ui

// This file gives a work's metadata human labels, and derives from it
// what others read: the Highwire Press citation_* tags (Google Scholar),
// a schema.org description in JSON-LD, and the fields of citations
// (work_cite.go).

import (
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/labels"
)

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

// citationOf reads a work's citation from its metadata.
func citationOf(stmts []shelfmark.Statement, title, url string) *citation {
	c := &citation{Title: title, URL: url,
		Authors:     labels.Literals(stmts, false, "dc:creator", "dcterms:creator", "schema:author", "schema:creator"),
		Editors:     labels.Literals(stmts, false, "bibo:editor", "schema:editor"),
		Date:        labels.FirstOf(labels.Literals(stmts, false, "dcterms:issued", "schema:datePublished", "dc:date", "dcterms:date", "dcterms:created", "schema:dateCreated")),
		Publisher:   labels.FirstOf(labels.Literals(stmts, false, "dc:publisher", "dcterms:publisher", "schema:publisher")),
		Abstract:    labels.FirstOf(labels.Literals(stmts, false, "dcterms:abstract", "schema:abstract", "bibo:abstract", "dc:description", "dcterms:description", "schema:description")),
		Languages:   labels.Literals(stmts, false, "dc:language", "dcterms:language", "schema:inLanguage"),
		Keywords:    labels.Literals(stmts, false, "dc:subject", "dcterms:subject", "schema:keywords", "schema:about"),
		DOI:         labels.FirstOf(labels.Literals(stmts, false, "bibo:doi")),
		ISBN:        labels.FirstOf(labels.Literals(stmts, false, "bibo:isbn13", "bibo:isbn", "bibo:isbn10", "schema:isbn")),
		ISSN:        labels.FirstOf(labels.Literals(stmts, false, "bibo:issn", "bibo:eissn", "schema:issn")),
		Container:   labels.FirstOf(labels.Literals(stmts, false, "dcterms:isPartOf", "schema:isPartOf")),
		Volume:      labels.FirstOf(labels.Literals(stmts, false, "bibo:volume", "schema:volumeNumber")),
		Issue:       labels.FirstOf(labels.Literals(stmts, false, "bibo:issue", "schema:issueNumber")),
		Pages:       labels.FirstOf(labels.Literals(stmts, false, "bibo:pages", "schema:pagination")),
		FirstPage:   labels.FirstOf(labels.Literals(stmts, false, "bibo:pageStart")),
		LastPage:    labels.FirstOf(labels.Literals(stmts, false, "bibo:pageEnd")),
		Edition:     labels.FirstOf(labels.Literals(stmts, false, "bibo:edition", "schema:bookEdition")),
		License:     labels.FirstOf(labels.Literals(stmts, true, "dcterms:license", "schema:license")),
		Identifiers: labels.Literals(stmts, false, "dc:identifier", "dcterms:identifier"),
	}
	if c.FirstPage == "" && c.Pages != "" {
		if a, b, ok := strings.Cut(c.Pages, "-"); ok {
			c.FirstPage, c.LastPage = strings.TrimSpace(a), strings.TrimSpace(strings.TrimLeft(b, "-"))
		}
	}
	for _, t := range append(labels.Literals(stmts, true, "dc:type", "dcterms:type", "rdf:type", "schema:genre"), "") {
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
func (s *Handler) workMeta(p *uiPage, res *shelfmark.Resource, d *uiWorkData, files map[shelfmark.ID][]*shelfmark.Resource) ([]uiMeta, map[string]any) {
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
				pdf = p.Base + kit.ContentURL(f.ID)
			case thumb == "" && f.File.Use == shelfmark.UseThumbnail:
				thumb = p.Base + kit.ContentURL(f.ID)
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
	set("inLanguage", labels.FirstOf(c.Languages))
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
