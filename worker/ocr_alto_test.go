package worker

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// toolTestALTODoc is the part of an ALTO document the tests look at.
type toolTestALTODoc struct {
	XMLName xml.Name `xml:"alto"`
	Unit    string   `xml:"Description>MeasurementUnit"`
	Layout  struct {
		Pages []struct {
			ID     string `xml:"ID,attr"`
			Number int    `xml:"PHYSICAL_IMG_NR,attr"`
			Width  int    `xml:"WIDTH,attr"`
			Height int    `xml:"HEIGHT,attr"`
			Lines  []struct {
				Strings []toolTestALTOString `xml:"String"`
			} `xml:"PrintSpace>ComposedBlock>TextBlock>TextLine"`
		} `xml:"Page"`
	}
}

type toolTestALTOString struct {
	ID      string `xml:"ID,attr"`
	Content string `xml:"CONTENT,attr"`
	HPos    int    `xml:"HPOS,attr"`
	VPos    int    `xml:"VPOS,attr"`
	Width   int    `xml:"WIDTH,attr"`
	Height  int    `xml:"HEIGHT,attr"`
}

// words are the contents of the document's strings, in order.
func (d *toolTestALTODoc) words() []string {
	var w []string
	for _, p := range d.Layout.Pages {
		for _, l := range p.Lines {
			for _, s := range l.Strings {
				w = append(w, s.Content)
			}
		}
	}
	return w
}

// toolTestALTO checks that doc is a well-formed ALTO 3 document (xmllint,
// when installed, and encoding/xml) of pages pages, pixel-measured, whose
// IDs are unique and whose strings lie within their pages, and returns it.
// No ALTO schema is at hand offline (none ships in a package registry the
// build may use), so the schema itself is not checked: its namespace, the
// elements and attributes read here, and unique IDs (xsd:ID) are.
func toolTestALTO(t *testing.T, doc []byte, pages int) *toolTestALTODoc {
	t.Helper()
	if xmllint, err := exec.LookPath("xmllint"); err == nil {
		p := filepath.Join(t.TempDir(), "alto.xml")
		if err := os.WriteFile(p, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(xmllint, "--noout", "--nonet", p).CombinedOutput(); err != nil {
			t.Fatalf("xmllint: ALTO not well-formed: %v\n%s", err, out)
		}
	}
	var d toolTestALTODoc
	if err := xml.Unmarshal(doc, &d); err != nil {
		t.Fatalf("ALTO: %v\n%.500s", err, doc)
	}
	if d.XMLName.Space != ALTONamespace {
		t.Errorf("ALTO namespace %q, want %q", d.XMLName.Space, ALTONamespace)
	}
	if d.Unit != "pixel" {
		t.Errorf("ALTO measures in %q", d.Unit)
	}
	if len(d.Layout.Pages) != pages {
		t.Fatalf("ALTO has %d pages, want %d", len(d.Layout.Pages), pages)
	}
	seen := map[string]bool{}
	id := func(s string) {
		if s == "" || seen[s] {
			t.Errorf("ALTO ID %q empty or repeated", s)
		}
		seen[s] = true
	}
	for _, p := range d.Layout.Pages {
		id(p.ID)
		if p.Width <= 0 || p.Height <= 0 {
			t.Errorf("ALTO page %s is %d×%d", p.ID, p.Width, p.Height)
		}
		for _, l := range p.Lines {
			for _, s := range l.Strings {
				id(s.ID)
				if s.Content == "" || s.HPos < 0 || s.VPos < 0 || s.Width <= 0 || s.Height <= 0 ||
					s.HPos+s.Width > p.Width || s.VPos+s.Height > p.Height {
					t.Errorf("ALTO string %+v outside its %d×%d page", s, p.Width, p.Height)
				}
			}
		}
	}
	return &d
}
