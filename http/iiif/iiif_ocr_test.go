package iiif

import (
	"os"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/labels"
)

// TestIIIFOCRSeeAlso: the seeAlso of a page's hOCR and ALTO name their
// formats by profile; other files have none.
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
		{shelfmark.UseALTO, "p.alto.xml", "application/xml", ALTOProfile},
		{shelfmark.UseAccess, "p.jpg", "image/jpeg", ""},
	} {
		f := &shelfmark.Resource{ID: "f1", Kind: shelfmark.KindFile, File: &shelfmark.File{Name: c.name, MediaType: c.mediaType, Use: c.use}}
		sa := h.ocrSeeAlso("https://x.example", f)
		switch {
		case c.profile == "" && sa != nil:
			t.Errorf("%s: seeAlso %v", c.use, sa)
		case c.profile != "" && (sa["profile"] != c.profile || sa["format"] != c.mediaType || sa["type"] != "Dataset" || sa["id"] != "https://x.example"+kit.ContentURL("f1")):
			t.Errorf("%s: seeAlso %v", c.use, sa)
		}
	}
}
