package iiif

import (
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// ALTOProfile names ALTO 3.x in a seeAlso: the version tesseract writes
// (namespace http://www.loc.gov/standards/alto/ns-v3#).
const ALTOProfile = "http://www.loc.gov/standards/alto/v3/alto.xsd"

// ocrSeeAlso is the seeAlso entry of a page's OCR file: its hOCR (use
// ocr) or its ALTO (use alto), with the profile that names the format;
// nil for other files.
func (s *Handler) ocrSeeAlso(base string, f *shelfmark.Resource) map[string]any {
	mt := kit.FileMediaType(f.File)
	sa := map[string]any{"id": base + kit.ContentURL(f.ID), "type": "Dataset", "format": mt}
	switch f.File.Use {
	case shelfmark.UseOCR:
		sa["label"] = s.iiifLabels("iiif.ocr")
		if strings.HasSuffix(strings.ToLower(f.File.Name), ".hocr") || strings.Contains(mt, "xhtml") {
			sa["profile"] = HOCRProfile
		}
	case shelfmark.UseALTO:
		sa["label"] = s.iiifLabels("iiif.alto")
		sa["profile"] = ALTOProfile
	default:
		return nil
	}
	return sa
}
