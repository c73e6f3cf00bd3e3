package iiif

import (
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// ALTOProfile names ALTO 3.x in a seeAlso: the version tesseract writes
// (namespace http://www.loc.gov/standards/alto/ns-v3#).
const ALTOProfile = "http://www.loc.gov/standards/alto/v3/alto.xsd"

// iiifSeeAlso is a seeAlso entry of a canvas: a page's OCR file, a
// Dataset. It writes itself as encoding/json writes the map of the same
// members (by key, profile left out when empty), and its label is the
// handler's, written as JSON once: a book's every page has one or two,
// and a map of each, encoded by reflection, with a map of each page's
// title, made an OCR'd book's manifest take twice as long to build.
type iiifSeeAlso struct {
	ID, Type, Format, Profile string
	// label is the entry's label, a language map as JSON (nil: none)
	label []byte
}

// MarshalJSON implements json.Marshaler with appendJSON.
func (a iiifSeeAlso) MarshalJSON() ([]byte, error) { return a.appendJSON(nil), nil }

// appendJSON appends the entry: its members in the order of their keys.
func (a *iiifSeeAlso) appendJSON(b []byte) []byte {
	b = appendMember(b, '{', "format", a.Format)
	b = appendMember(b, ',', "id", a.ID)
	if a.label != nil {
		b = append(append(b, `,"label":`...), a.label...)
	}
	if a.Profile != "" {
		b = appendMember(b, ',', "profile", a.Profile)
	}
	b = appendMember(b, ',', "type", a.Type)
	return append(b, '}')
}

// ocrSeeAlso is the seeAlso entry of a page's OCR file, f: its hOCR
// (use ocr) or its ALTO (use alto), with the profile that names the
// format, but without its ID (f's content URL), which a canvas writes
// with its own ids. Other files have none: f must be of one of those
// uses.
func (s *Handler) ocrSeeAlso(f *shelfmark.Resource) iiifSeeAlso {
	mt := kit.FileMediaType(f.File)
	sa := iiifSeeAlso{Type: "Dataset", Format: mt}
	switch f.File.Use {
	case shelfmark.UseOCR:
		sa.label = s.ocrLabel
		if strings.HasSuffix(strings.ToLower(f.File.Name), ".hocr") || strings.Contains(mt, "xhtml") {
			sa.Profile = HOCRProfile
		}
	case shelfmark.UseALTO:
		sa.label, sa.Profile = s.altoLabel, ALTOProfile
	}
	return sa
}
