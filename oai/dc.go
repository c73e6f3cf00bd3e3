package oai

import (
	"context"
	"slices"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// DublinCore is the oai_dc format every OAI-PMH provider must offer: the 15
// elements of simple Dublin Core, rendered from a work's metadata.
//
// Statements whose predicate is a DC element (http://purl.org/dc/elements/1.1/)
// or the DCMI term of the same name (http://purl.org/dc/terms/) map to that
// element; DCMI refinements map to the element they refine, as DCMI's
// "dumb-down" rule says (dcterms:alternative to title, dcterms:issued to
// date, dcterms:isPartOf to relation, …). Every other predicate is left
// out. Elements come in the order of the DC element set, and within an
// element in the order of the metadata; language tags become xml:lang;
// IRIs are written as text.
type DublinCore struct{}

// Prefix implements Format.
func (DublinCore) Prefix() string { return "oai_dc" }

// Schema implements Format.
func (DublinCore) Schema() string { return "http://www.openarchives.org/OAI/2.0/oai_dc.xsd" }

// Namespace implements Format.
func (DublinCore) Namespace() string { return "http://www.openarchives.org/OAI/2.0/oai_dc/" }

// dcElements are the 15 elements in the order of the DC element set.
var dcElements = [...]string{"title", "creator", "subject", "description", "publisher", "contributor",
	"date", "type", "format", "identifier", "source", "language", "relation", "coverage", "rights"}

// dcRefines maps DCMI terms that refine an element to that element.
var dcRefines = map[string]string{
	"alternative": "title",
	"abstract":    "description", "tableOfContents": "description",
	"available": "date", "created": "date", "dateAccepted": "date", "dateCopyrighted": "date",
	"dateSubmitted": "date", "issued": "date", "modified": "date", "valid": "date",
	"extent": "format", "medium": "format",
	"bibliographicCitation": "identifier",
	"conformsTo":            "relation", "hasFormat": "relation", "hasPart": "relation", "hasVersion": "relation",
	"isFormatOf": "relation", "isPartOf": "relation", "isReferencedBy": "relation", "isReplacedBy": "relation",
	"isRequiredBy": "relation", "isVersionOf": "relation", "references": "relation", "replaces": "relation",
	"requires": "relation",
	"spatial":  "coverage", "temporal": "coverage",
	"accessRights": "rights", "license": "rights",
}

// dcElement returns the DC element a predicate maps to, or "".
func dcElement(predicate string) string {
	var local string
	switch {
	case strings.HasPrefix(predicate, shelfmark.NSDC):
		local = predicate[len(shelfmark.NSDC):]
	case strings.HasPrefix(predicate, shelfmark.NSDCTerms):
		local = predicate[len(shelfmark.NSDCTerms):]
		if e, ok := dcRefines[local]; ok {
			return e
		}
	default:
		return ""
	}
	for _, e := range dcElements {
		if e == local {
			return e
		}
	}
	return ""
}

const oaiDCOpen = `<oai_dc:dc xmlns:oai_dc="http://www.openarchives.org/OAI/2.0/oai_dc/" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.openarchives.org/OAI/2.0/oai_dc/ http://www.openarchives.org/OAI/2.0/oai_dc.xsd">`

// Render implements Format: every public work has an oai_dc record, even
// one without Dublin Core metadata (an empty oai_dc:dc is valid).
func (DublinCore) Render(_ context.Context, w *Work) ([]byte, bool, error) {
	var byElem [len(dcElements)][]shelfmark.Term
	for _, f := range w.Fields {
		e := dcElement(f.Predicate)
		if e == "" {
			continue
		}
		for i, name := range dcElements {
			if name == e {
				byElem[i] = append(byElem[i], f.Objects...)
				break
			}
		}
	}
	b := make([]byte, 0, 1024)
	b = append(b, oaiDCOpen...)
	for i, terms := range byElem {
		for j, t := range terms {
			if slices.Contains(terms[:j], t) {
				continue // dc:title and dcterms:title may say the same
			}
			b = append(b, "<dc:"...)
			b = append(b, dcElements[i]...)
			if t.Lang != "" {
				b = append(b, ` xml:lang="`...)
				b = appendEscaped(b, t.Lang)
				b = append(b, '"')
			}
			b = append(b, '>')
			b = appendEscaped(b, t.Value)
			b = append(b, "</dc:"...)
			b = append(b, dcElements[i]...)
			b = append(b, '>')
		}
	}
	b = append(b, "</oai_dc:dc>"...)
	return b, true, nil
}
