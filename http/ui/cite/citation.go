// Package cite reads a work's citation from its metadata and writes it in
// the formats reference managers import: BibTeX and RIS. It is pure
// formatting: what a caller may see is decided before a citation is made.
package cite

import (
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/labels"
)

// Citation is what a work's citations are made of, read from its
// metadata by Of.
type Citation struct {
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

// Of reads a work's citation from its metadata statements, with its title
// and the URL of its page.
func Of(stmts []shelfmark.Statement, title, url string) *Citation {
	c := &Citation{Title: title, URL: url,
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

// Year is the four-digit year a date begins with, or "".
func Year(date string) string {
	if len(date) >= 4 {
		y := date[:4]
		if strings.Trim(y, "0123456789") == "" {
			return y
		}
	}
	return ""
}

// ScholarDate writes an ISO date (2024-03-05, 2024-03, 2024) as Google
// Scholar's citation_publication_date wants it (2024/03/05); other dates
// are left as they are.
func ScholarDate(date string) string {
	d := date
	if len(d) > 10 {
		d = d[:10]
	}
	if y := Year(d); y != "" && strings.Trim(d, "0123456789-") == "" {
		return strings.ReplaceAll(strings.TrimRight(d, "-"), "-", "/")
	}
	return date
}
