package iiif

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/labels"
)

// TestIIIFOCRSeeAlso: the seeAlso of a page's hOCR and ALTO name their
// formats by profile and are labelled in the catalogs' languages.
func TestIIIFOCRSeeAlso(t *testing.T) {
	cats, err := labels.Load(os.DirFS(".."), "ui/locales")
	if err != nil {
		t.Fatal(err)
	}
	h := New(kit.Deps{}, cats, Options{})
	for _, c := range []struct {
		use, name, mediaType, profile string
	}{
		{shelfmark.UseOCR, "p.hocr", "application/xhtml+xml", HOCRProfile},
		{shelfmark.UseOCR, "p.txt", "text/plain", ""},
		{shelfmark.UseALTO, "p.alto.xml", "application/xml", ALTOProfile},
	} {
		f := &shelfmark.Resource{ID: "f1", Kind: shelfmark.KindFile, File: &shelfmark.File{Name: c.name, MediaType: c.mediaType, Use: c.use}}
		sa := h.ocrSeeAlso(f)
		if sa.Profile != c.profile || sa.Format != c.mediaType || sa.Type != "Dataset" || sa.ID != "" {
			t.Errorf("%s %s: seeAlso %+v", c.use, c.name, sa)
		}
		var label langMap
		if err := json.Unmarshal(sa.label, &label); err != nil || len(label["en"]) != 1 || label["en"][0] == "" {
			t.Errorf("%s: label %s (%v)", c.use, sa.label, err)
		}
	}
}
