package ui

// This file gives a work's metadata human labels, and derives from it
// what others read: the Highwire Press citation_* tags (Google Scholar)
// and a schema.org description in JSON-LD, from the citation package cite
// reads.

import (
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/labels"
	"github.com/shelfmark/shelfmark/http/ui/cite"
)

// uiMeta is one <meta name content> tag.
type uiMeta struct {
	Name, Content string
}

// workMeta derives the Highwire Press tags and the schema.org JSON-LD of a
// work page.
func (s *Handler) workMeta(p *uiPage, res *shelfmark.Resource, d *uiWorkData, files map[shelfmark.ID][]*shelfmark.Resource) ([]uiMeta, map[string]any) {
	c := cite.Of(res.Metadata, d.Title, d.Canonical)
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
		add("citation_publication_date", cite.ScholarDate(c.Date))
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
	// the thumbnail of the page chosen to represent the work, when it is
	// among the pages shown and the reader may see it; else the first
	// page's that is
	chosen := shelfmark.ThumbnailPageOf(res.Metadata)
	var pdf, thumb, chosenThumb string
	for _, it := range d.Items {
		for _, f := range files[it.ID] {
			switch {
			case pdf == "" && (f.File.Use == shelfmark.UseOriginal || f.File.Use == "") && pdfFile(f.File):
				pdf = p.Base + kit.ContentURL(f.ID)
			case f.File.Use == shelfmark.UseThumbnail && it.ID == chosen && chosenThumb == "":
				chosenThumb = p.Base + kit.ContentURL(f.ID)
			case thumb == "" && f.File.Use == shelfmark.UseThumbnail:
				thumb = p.Base + kit.ContentURL(f.ID)
			}
		}
	}
	if chosenThumb != "" {
		thumb = chosenThumb
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
