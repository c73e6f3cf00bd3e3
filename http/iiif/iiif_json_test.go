package iiif

import (
	"encoding/json"
	"reflect"
	"testing"
)

// plainCanvas is iiifCanvasDoc without its methods: what encoding/json
// makes of it by reflection.
type plainCanvas iiifCanvasDoc

// jsonCanvases are canvases with every member empty and set, with text
// that encoding/json escapes (quotes, HTML, control characters, non-ASCII,
// invalid UTF-8).
func jsonCanvases() []*iiifCanvasDoc {
	svc := []iiifService{{ID: "http://x/iiif/p1/image", Type: "ImageService3", Profile: "level0"}}
	return []*iiifCanvasDoc{
		{},
		{ID: "http://x/iiif/w/canvas/p1", Type: "Canvas", Label: langMap{"en": {"Page 1"}, "de": {"Seite 1"}, "none": {"1"}},
			Width: 2000, Height: 3000,
			Items: []iiifAnnoPage{{ID: "http://x/p", Type: "AnnotationPage", Items: []iiifAnno{{ID: "a", Type: "Annotation", Motivation: "painting",
				Body: iiifContent{ID: "http://x/iiif/p1/image/full/max/0/default.jpg", Type: "Image", Format: "image/jpeg", Service: svc}, Target: "t"}}}},
			Thumbnail: []iiifContent{{ID: "http://x/t.jpg", Type: "Image", Format: "image/jpeg", Width: 150, Height: -1}},
			SeeAlso: []iiifSeeAlso{{ID: "http://x/ocr", Type: "Dataset", Format: "application/xhtml+xml", Profile: "http://kba.cloud/hocr-spec/1.2/", label: []byte(`{"en":["OCR"]}`)},
				{ID: "http://x/alto", Type: "Dataset", Format: "application/xml"}}},
		{ID: `a "quoted" <b>&amp;</b>`, Type: "é\u2028\x01\t\n", Label: langMap{"fr": {"Page \xff", "two"}, "en": nil},
			Items: []iiifAnnoPage{{Items: []iiifAnno{}}}, Thumbnail: []iiifContent{}, SeeAlso: []iiifSeeAlso{}},
		{ID: "http://x/iiif/w/canvas/p2", Type: "Canvas", title: `Folio 2 "recto" <i>&</i>`, titleLang: "la", Label: langMap{"en": {"ignored"}}},
		{Label: langMap{}, Items: []iiifAnnoPage{}},
	}
}

// TestCanvasJSONAsEncodingJSON: a canvas writes itself byte for byte as
// encoding/json writes its struct (a canvas with a title as the struct
// whose Label is the map of that title).
func TestCanvasJSONAsEncodingJSON(t *testing.T) {
	for i, c := range jsonCanvases() {
		plain := *(*plainCanvas)(c)
		if c.title != "" {
			plain.Label = langMap{c.titleLang: {c.title}}
		}
		want, err := json.Marshal(&plain)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.appendJSON([]byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		if string(got[1:]) != string(want) {
			t.Errorf("canvas %d:\n got %s\nwant %s", i, got[1:], want)
		}
	}
}

// TestManifestJSON: a manifest with its canvases (a canvasList) after
// its other members reads as encoding/json's encoding of it with the
// canvases as they are, with or without canvases, whether marshalManifest
// or encoding/json writes it.
func TestManifestJSON(t *testing.T) {
	for _, items := range [][]*iiifCanvasDoc{jsonCanvases(), {}} {
		list := &canvasList{}
		for _, c := range items {
			if err := list.add(c); err != nil {
				t.Fatal(err)
			}
		}
		for _, doc := range []map[string]any{
			{"@context": Context, "id": "http://x/iiif/w/manifest", "type": "Manifest", "label": langMap{"none": {"<A> & B"}}},
			{},
		} {
			doc["items"] = list
			got, err := marshalManifest(doc, nil)
			if err != nil {
				t.Fatal(err)
			}
			viaJSON, err := json.Marshal(doc) // the list's MarshalJSON
			if err != nil {
				t.Fatal(err)
			}
			doc["items"] = items
			want, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			var w any
			if err := json.Unmarshal(want, &w); err != nil {
				t.Fatal(err)
			}
			for _, got := range [][]byte{got, viaJSON} {
				var g any
				if err := json.Unmarshal(got, &g); err != nil {
					t.Fatalf("%s: %v", got, err)
				}
				if !reflect.DeepEqual(g, w) {
					t.Errorf("manifest:\n got %s\nwant %s", got, want)
				}
			}
		}
	}
}

// FuzzAppendString: any string is written as encoding/json writes it.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `"\<>&`, "\x00\x1f\x7f", "é\u2028\u2029", "\xff\xfe", "\ufffd"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); string(got) != string(want) {
			t.Errorf("%q: %s, want %s", s, got, want)
		}
	})
}

// TestSeeAlsoJSONAsMap: a seeAlso entry writes itself byte for byte as
// encoding/json writes the map of its members, with and without a label
// and a profile, and with text encoding/json escapes.
func TestSeeAlsoJSONAsMap(t *testing.T) {
	label := langMap{"en": {"OCR <text> & more"}, "de": {"Volltext"}, "none": {"\u2028\x01"}}
	for i, a := range []iiifSeeAlso{
		{ID: "http://x/ocr", Type: "Dataset", Format: "application/xhtml+xml", Profile: "http://kba.cloud/hocr-spec/1.2/", label: label.appendJSON(nil)},
		{ID: "http://x/alto", Type: "Dataset", Format: "application/xml"},
		{ID: `a "quoted" <b>&amp;</b>`, Type: "é", Format: "", label: langMap{}.appendJSON(nil)},
	} {
		m := map[string]any{"id": a.ID, "type": a.Type, "format": a.Format}
		if a.label != nil {
			var l langMap
			if err := json.Unmarshal(a.label, &l); err != nil {
				t.Fatal(err)
			}
			m["label"] = l
		}
		if a.Profile != "" {
			m["profile"] = a.Profile
		}
		want, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.appendJSON([]byte("x")); string(got[1:]) != string(want) {
			t.Errorf("entry %d:\n got %s\nwant %s", i, got[1:], want)
		}
	}
}
