package http

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// wordBox is where hocrOf puts word j of line k: 150×50 pixels at
// (100+200j, 100+100k), in the OCR's pixels.
func wordBox(j, k int) (x0, y0, x1, y1 int) {
	return 100 + 200*j, 100 + 100*k, 250 + 200*j, 150 + 100*k
}

// hocrOf writes hOCR of a page of w×h pixels holding text, a line per
// line of text, words as wordBox places them.
func hocrOf(w, h int, text string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title></title></head><body>
<div class='ocr_page' id='page_1' title='image "p.tif"; bbox 0 0 %d %d; ppageno 0'>
`, w, h)
	for k, line := range strings.Split(text, "\n") {
		fmt.Fprintf(&b, "<span class='ocr_line' id='line_%d' title='bbox 0 0 1 1'>", k)
		for j, word := range strings.Fields(line) {
			x0, y0, x1, y1 := wordBox(j, k)
			fmt.Fprintf(&b, "<span class='ocrx_word' title='bbox %d %d %d %d; x_wconf 90'>%s</span> ", x0, y0, x1, y1, html.EscapeString(word))
		}
		b.WriteString("</span>\n")
	}
	b.WriteString("</div></body></html>\n")
	return []byte(b.String())
}

// altoOf writes ALTO of a page as hocrOf does hOCR.
func altoOf(w, h int, text string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<alto xmlns="http://www.loc.gov/standards/alto/ns-v3#"><Description><MeasurementUnit>pixel</MeasurementUnit></Description>
<Layout><Page WIDTH="%d" HEIGHT="%d"><PrintSpace><TextBlock>
`, w, h)
	for k, line := range strings.Split(text, "\n") {
		b.WriteString("<TextLine>")
		for j, word := range strings.Fields(line) {
			x0, y0, x1, y1 := wordBox(j, k)
			fmt.Fprintf(&b, `<String HPOS="%d" VPOS="%d" WIDTH="%d" HEIGHT="%d" CONTENT="%s"/><SP/>`, x0, y0, x1-x0, y1-y0, html.EscapeString(word))
		}
		b.WriteString("</TextLine>\n")
	}
	b.WriteString("</TextBlock></PrintSpace></Page></Layout></alto>\n")
	return []byte(b.String())
}

// bookPage is a page of ocrBook: its OCR (hOCR of an image of ocrW×ocrH
// pixels, 2000×3000 when 0; ALTO only with alto) or, with plain, only
// extracted text; hidden makes the page (file set) private.
type bookPage struct {
	text                string
	ocrW, ocrH          int
	plain, hidden, alto bool
}

// ocrBook makes a work whose pages (in order) have a TIFF original of
// 2000×3000 pixels and the OCR pages describe.
func ocrBook(t testing.TB, e *policyEnv, vis shelfmark.Visibility, title string, pages []bookPage) (*shelfmark.Resource, []shelfmark.ID) {
	t.Helper()
	ctx := context.Background()
	w := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Visibility: vis, Metadata: titled(title)}})[0]
	sets := make([]*shelfmark.NewResource, len(pages))
	for i, p := range pages {
		sets[i] = &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}
		if p.hidden {
			sets[i].Visibility = shelfmark.Private
		}
	}
	fss := e.createAll(ctx, sets)
	ids := make([]shelfmark.ID, len(fss))
	tif := e.putBytes("page.tif", "image/tiff", []byte("a page"))
	tif.Format = &shelfmark.Format{PRONOM: "fmt/353", Name: "Tagged Image File Format", MediaType: "image/tiff", Width: 2000, Height: 3000}
	var files []*shelfmark.NewResource
	for i, p := range pages {
		ids[i] = fss[i].ID
		orig := *tif
		files = append(files, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fss[i].ID, File: &orig})
		var f *shelfmark.File
		switch {
		case p.plain:
			f = e.putBytes("page.txt", "text/plain; charset=utf-8", []byte(p.text))
			f.Use = shelfmark.UseText
		case p.alto:
			f = e.putBytes("page.xml", "application/xml", altoOf(2000, 3000, p.text))
			f.Use = shelfmark.UseALTO
		default:
			ow, oh := p.ocrW, p.ocrH
			if ow == 0 {
				ow, oh = 2000, 3000
			}
			f = e.putBytes("page.hocr", "application/xhtml+xml", hocrOf(ow, oh, p.text))
			f.Use = shelfmark.UseOCR
		}
		files = append(files, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fss[i].ID, File: f})
	}
	e.createAll(ctx, files)
	if _, err := e.repo.SetOrder(ctx, w.ID, ids, 0); err != nil {
		t.Fatal(err)
	}
	return w, ids
}

// search1Doc is a Content Search 1.0 response as tests read it.
type search1Doc struct {
	Context []string `json:"@context"`
	ID      string   `json:"@id"`
	Type    string   `json:"@type"`
	Within  struct {
		Type    string   `json:"@type"`
		Total   int      `json:"total"`
		First   string   `json:"first"`
		Last    string   `json:"last"`
		Ignored []string `json:"ignored"`
	} `json:"within"`
	Next       string `json:"next"`
	Prev       string `json:"prev"`
	StartIndex int    `json:"startIndex"`
	Resources  []struct {
		ID         string `json:"@id"`
		Type       string `json:"@type"`
		Motivation string `json:"motivation"`
		Resource   struct {
			Type  string `json:"@type"`
			Chars string `json:"chars"`
		} `json:"resource"`
		On string `json:"on"`
	} `json:"resources"`
	Hits []struct {
		Type        string   `json:"@type"`
		Annotations []string `json:"annotations"`
		Match       string   `json:"match"`
		Before      string   `json:"before"`
		After       string   `json:"after"`
	} `json:"hits"`
}

// search2Doc is a Content Search 2.0 response as tests read it.
type search2Doc struct {
	Context string `json:"@context"`
	ID      string `json:"id"`
	Type    string `json:"type"`
	PartOf  struct {
		ID    string            `json:"id"`
		Type  string            `json:"type"`
		Total int               `json:"total"`
		First map[string]string `json:"first"`
		Last  map[string]string `json:"last"`
	} `json:"partOf"`
	Next       map[string]string `json:"next"`
	Prev       map[string]string `json:"prev"`
	StartIndex int               `json:"startIndex"`
	Ignored    []string          `json:"ignored"`
	Items      []struct {
		ID         string            `json:"id"`
		Type       string            `json:"type"`
		Motivation string            `json:"motivation"`
		Body       map[string]string `json:"body"`
		Target     string            `json:"target"`
	} `json:"items"`
	Annotations []struct {
		Type  string `json:"type"`
		Items []struct {
			ID         string          `json:"id"`
			Type       string          `json:"type"`
			Motivation string          `json:"motivation"`
			Target     json.RawMessage `json:"target"`
		} `json:"items"`
	} `json:"annotations"`
}

func search1(t *testing.T, e *policyEnv, path string, hdrs ...string) (*search1Doc, *response) {
	t.Helper()
	r := e.do("GET", path, nil, hdrs...)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var d search1Doc
	if err := json.Unmarshal(r.Body, &d); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, r.Body)
	}
	if d.Type != "sc:AnnotationList" || len(d.Context) != 2 || d.Context[1] != search1Context || d.Within.Type != "sc:Layer" {
		t.Errorf("GET %s: not a Content Search 1.0 response: %s", path, r.Body)
	}
	return &d, r
}

func search2(t *testing.T, e *policyEnv, path string, hdrs ...string) (*search2Doc, *response) {
	t.Helper()
	r := e.do("GET", path, nil, hdrs...)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
	}
	var d search2Doc
	if err := json.Unmarshal(r.Body, &d); err != nil {
		t.Fatalf("GET %s: %v: %s", path, err, r.Body)
	}
	if d.Type != "AnnotationPage" || d.Context != search2Context || d.PartOf.Type != "AnnotationCollection" || d.PartOf.First["id"] == "" {
		t.Errorf("GET %s: not a Content Search 2.0 response: %s", path, r.Body)
	}
	return &d, r
}

// xywh is the fragment of a box of words j0..j1 of line k, scaled.
func xywh(j0, j1, k, scale int) string {
	x0, y0, _, _ := wordBox(j0, k)
	_, _, x1, y1 := wordBox(j1, k)
	return fmt.Sprintf("#xywh=%d,%d,%d,%d", x0*scale, y0*scale, (x1-x0)*scale, (y1-y0)*scale)
}

// TestIIIFSearch: hits of words (by their stems, as the index matches
// them), phrases and prefixes in a book's OCR,
// with their boxes on the canvas (scaled when the OCR read an image of
// another size, the whole canvas for text without boxes; from ALTO when a
// page has no hOCR), as Content
// Search 1.0 and 2.0; a page must hold every word; pages the caller may
// not read give none; the manifest lists both services.
func TestIIIFSearch(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{BaseURL: "https://repo.example.org"})
	w, pages := ocrBook(t, e, shelfmark.Public, "A bestiary", []bookPage{
		{text: "Of birds and beasts\nthe bird in the hand"},
		{text: "nothing to see here"},
		{text: "A Bird in\nthe hand is worth two"},
		{text: "half a bird", ocrW: 1000, ocrH: 1500},
		{text: "a bird without boxes", plain: true},
		{text: "a hidden bird", hidden: true},
		{text: "Ein Vögelchen, café"},
		{text: "an alto bird", alto: true},
	})
	base := "https://repo.example.org"
	canvas := func(i int) string { return base + "/iiif/" + string(w.ID) + "/canvas/" + string(pages[i]) }
	path := func(v int, q string) string {
		return fmt.Sprintf("/iiif/%s/search/%d?q=%s", w.ID, v, url.QueryEscape(q))
	}

	d, r := search1(t, e, path(1, "bird"), anonymously...)
	if r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Error("a public work's search is not offered to every origin")
	}
	// birds is bird to the stemmer, as in the index
	wantOn := []string{canvas(0) + xywh(1, 1, 0, 1), canvas(0) + xywh(1, 1, 1, 1), canvas(2) + xywh(1, 1, 0, 1), canvas(3) + xywh(2, 2, 0, 2), canvas(4), canvas(7) + xywh(2, 2, 0, 1)}
	if len(d.Resources) != len(wantOn) || len(d.Hits) != len(wantOn) || d.Within.Total != len(wantOn) {
		t.Fatalf("bird: %d resources, %d hits, total %d, want %d: %s", len(d.Resources), len(d.Hits), d.Within.Total, len(wantOn), r.Body)
	}
	for i, a := range d.Resources {
		if a.On != wantOn[i] || a.Type != "oa:Annotation" || a.Motivation != "sc:painting" || a.Resource.Type != "cnt:ContentAsText" {
			t.Errorf("bird, annotation %d: %+v, want on %s", i, a, wantOn[i])
		}
		if h := d.Hits[i]; h.Type != "search:Hit" || len(h.Annotations) != 1 || h.Annotations[0] != a.ID || !strings.EqualFold(strings.TrimSuffix(h.Match, "s"), "bird") {
			t.Errorf("bird, hit %d: %+v", i, h)
		}
	}
	if h := d.Hits[0]; h.Before != "Of " || h.Match != "birds" || d.Resources[0].Resource.Chars != "birds" {
		t.Errorf("bird, hit 0: before %q, match %q, after %q", h.Before, h.Match, h.After)
	}
	if h := d.Hits[1]; h.Before != "Of birds and beasts the " || h.After != " in the hand" || d.Resources[1].Resource.Chars != "bird" {
		t.Errorf("bird, hit 1: before %q, match %q, after %q", h.Before, h.Match, h.After)
	}
	if d.Next != "" || d.Prev != "" || d.Within.First != "" || d.StartIndex != 0 {
		t.Errorf("one page of hits is paged: %s", r.Body)
	}
	if d.ID != base+path(1, "bird") {
		t.Errorf("@id %s", d.ID)
	}

	// the admin also finds the hidden page; not offered to other origins
	d, r = search1(t, e, path(1, "bird"))
	if len(d.Hits) != len(wantOn)+1 || r.Header.Get("Access-Control-Allow-Origin") != "" && r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Errorf("the admin's search: %d hits", len(d.Hits))
	}

	// a phrase: one hit, one annotation per line it covers
	d, r = search1(t, e, path(1, `"bird in the hand"`), anonymously...)
	if len(d.Hits) != 2 || len(d.Resources) != 3 || d.Within.Total != 3 {
		t.Fatalf("phrase: %s", r.Body)
	}
	if h := d.Hits[0]; len(h.Annotations) != 1 || d.Resources[0].On != canvas(0)+xywh(1, 4, 1, 1) || h.Match != "bird in the hand" || d.Resources[0].Resource.Chars != "bird in the hand" {
		t.Errorf("phrase on one line: %+v %+v", h, d.Resources[0])
	}
	if h := d.Hits[1]; len(h.Annotations) != 2 || d.Resources[1].On != canvas(2)+xywh(1, 2, 0, 1) || d.Resources[2].On != canvas(2)+xywh(0, 1, 1, 1) ||
		h.Match != "Bird in the hand" || h.Before != "A " || h.After != " is worth two" {
		t.Errorf("phrase over two lines: %+v %+v", h, d.Resources[1:])
	}

	for _, c := range []struct {
		q    string
		want []string
	}{
		{"bird worth", []string{canvas(2) + xywh(1, 1, 0, 1), canvas(2) + xywh(3, 3, 1, 1)}},                                                                                                 // every word on a page
		{"BIRDS", []string{canvas(0) + xywh(1, 1, 0, 1), canvas(0) + xywh(1, 1, 1, 1), canvas(2) + xywh(1, 1, 0, 1), canvas(3) + xywh(2, 2, 0, 2), canvas(4), canvas(7) + xywh(2, 2, 0, 1)}}, // birds and bird: bird
		{`"of birds"`, []string{canvas(0) + xywh(0, 1, 0, 1)}},
		{"birds -hand", []string{canvas(3) + xywh(2, 2, 0, 2), canvas(4), canvas(7) + xywh(2, 2, 0, 1)}},
		{"unicorn OR beasts", []string{canvas(0) + xywh(3, 3, 0, 1)}},
		{"bir*", []string{canvas(0) + xywh(1, 1, 0, 1), canvas(0) + xywh(1, 1, 1, 1), canvas(2) + xywh(1, 1, 0, 1), canvas(3) + xywh(2, 2, 0, 2), canvas(4), canvas(7) + xywh(2, 2, 0, 1)}},
		{"vogelchen cafe", []string{canvas(6) + xywh(1, 1, 0, 1), canvas(6) + xywh(2, 2, 0, 1)}},
		{"Café", []string{canvas(6) + xywh(2, 2, 0, 1)}},
		{"unicorn", nil},
		{"bird unicorn", nil},
	} {
		d, r := search1(t, e, path(1, c.q), anonymously...)
		var got []string
		for _, a := range d.Resources {
			got = append(got, a.On)
		}
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%q: %v, want %v (%s)", c.q, got, c.want, r.Body)
		}
	}

	// 2.0: the same hits, the text around them in contextualizing
	// annotations
	d2, r := search2(t, e, path(2, `"bird in the hand"`), anonymously...)
	if r.Header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(r.Header.Get("Content-Type"), "ld+json") {
		t.Errorf("2.0 headers: %v", r.Header)
	}
	if len(d2.Items) != 3 || d2.PartOf.Total != 3 || len(d2.Annotations) != 1 || len(d2.Annotations[0].Items) != 2 || d2.Next != nil {
		t.Fatalf("2.0 phrase: %s", r.Body)
	}
	if it := d2.Items[0]; it.Type != "Annotation" || it.Motivation != "painting" || it.Target != canvas(0)+xywh(1, 4, 1, 1) ||
		it.Body["type"] != "TextualBody" || it.Body["value"] != "bird in the hand" || it.Body["format"] != "text/plain" {
		t.Errorf("2.0 item 0: %+v", it)
	}
	var one struct {
		Type     string              `json:"type"`
		Source   string              `json:"source"`
		Selector []map[string]string `json:"selector"`
	}
	m := d2.Annotations[0].Items[0]
	if err := json.Unmarshal(m.Target, &one); err != nil || m.Motivation != "contextualizing" || one.Type != "SpecificResource" || one.Source != d2.Items[0].ID ||
		fmt.Sprint(one.Selector) != "[map[exact:bird in the hand prefix:Of birds and beasts the  type:TextQuoteSelector]]" {
		t.Errorf("2.0 match 0: %s %+v %v", m.Target, one, err)
	}
	var two []struct {
		Source   string              `json:"source"`
		Selector []map[string]string `json:"selector"`
	}
	if err := json.Unmarshal(d2.Annotations[0].Items[1].Target, &two); err != nil || len(two) != 2 || two[0].Source != d2.Items[1].ID || two[1].Source != d2.Items[2].ID ||
		fmt.Sprint(two[0].Selector, two[1].Selector) != "[map[exact:Bird in prefix:A  type:TextQuoteSelector]] [map[exact:the hand suffix: is worth two type:TextQuoteSelector]]" {
		t.Errorf("2.0 match over two lines: %s %v", d2.Annotations[0].Items[1].Target, err)
	}
	validatePrezi3Items(t, r.Body)

	// motivation: painting (or sc:painting) matches, another none; date
	// and user are ignored, and said to be
	if d, _ := search1(t, e, path(1, "bird")+"&motivation=sc:painting&date=2020-01-01T00:00:00Z/2021-01-01T00:00:00Z", anonymously...); len(d.Hits) != 6 || fmt.Sprint(d.Within.Ignored) != "[date]" {
		t.Errorf("motivation sc:painting: %d hits, ignored %v", len(d.Hits), d.Within.Ignored)
	}
	if d, r := search2(t, e, path(2, "bird")+"&motivation=commenting&user=https://example.org/u", anonymously...); len(d.Items) != 0 || d.PartOf.Total != 0 || fmt.Sprint(d.Ignored) != "[user]" {
		t.Errorf("motivation commenting: %s", r.Body)
	}

	// the manifest lists both services; Mirador finds 1.0 by its profile
	var man struct {
		Service []map[string]string `json:"service"`
	}
	r = e.do("GET", "/iiif/"+string(w.ID)+"/manifest", nil, anonymously...)
	readIIIF(t, r)
	if err := json.Unmarshal(r.Body, &man); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("[map[id:%[1]s/search/2 profile:%[2]s type:SearchService2] map[id:%[1]s/search/1 profile:%[3]s type:SearchService1]]",
		base+"/iiif/"+string(w.ID), search2Profile, search1Profile)
	if fmt.Sprint(man.Service) != want {
		t.Errorf("manifest services %v, want %s", man.Service, want)
	}
	validatePrezi3(t, "Manifest", r.Body)
}

// validatePrezi3Items loads the annotations of a Content Search 2.0
// response (its items and its contextualizing annotations) into
// iiif-prezi3's Annotation model. The page itself is not loaded: its
// partOf, ignored and startIndex are Content Search's, not in the
// Presentation 3.0 schema the package follows.
func validatePrezi3Items(t *testing.T, body []byte) {
	t.Helper()
	py := prezi3Python(t)
	f := filepath.Join(t.TempDir(), "doc.json")
	if err := os.WriteFile(f, body, 0o644); err != nil {
		t.Fatal(err)
	}
	script := `import json, sys
from iiif_prezi3 import Annotation
with open(sys.argv[1]) as f:
    doc = json.load(f)
annos = doc["items"] + [a for p in doc.get("annotations", []) for a in p["items"]]
assert annos
for a in annos:
    json.loads(Annotation(**a).json())
`
	if out, err := exec.Command(py, "-c", script, f).CombinedOutput(); err != nil {
		t.Errorf("iiif-prezi3 refuses an annotation: %v\n%s", err, out)
	}
}

// TestIIIFSearchLanguage: a book's words are stemmed in its work's
// language (dcterms:language), as the index stems them, and so is the
// query: a French book's chevaux is found by cheval, the same OCR in a
// book without a language (English) is not.
func TestIIIFSearchLanguage(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	ctx := context.Background()
	fr, _ := ocrBook(t, e, shelfmark.Public, "Un livre", []bookPage{{text: "Les grands chevaux\nblancs du village"}})
	if _, err := e.repo.UpdateResource(ctx, fr.ID, shelfmark.ResourceUpdate{Add: []shelfmark.Statement{
		{Predicate: shelfmark.NSDCTerms + "language", Object: shelfmark.NewLiteral("fre")}}}); err != nil {
		t.Fatal(err)
	}
	en, _ := ocrBook(t, e, shelfmark.Public, "A book", []bookPage{{text: "Les grands chevaux\nblancs du village"}})
	for _, c := range []struct {
		work shelfmark.ID
		q    string
		want int
	}{
		{fr.ID, "cheval", 1},
		{fr.ID, "chevaux", 1},
		{fr.ID, "%22grand%20cheval%22", 1},
		{en.ID, "chevaux", 1},
		{en.ID, "cheval", 0},
		{fr.ID, "cheval", 1}, // the OCR of both is the same file: cached apart by language
	} {
		d, _ := search2(t, e, "/iiif/"+string(c.work)+"/search/2?q="+c.q, anonymously...)
		if len(d.Items) != c.want {
			t.Errorf("%s in %s: %d hits, want %d", c.q, c.work, len(d.Items), c.want)
		}
	}
}

// TestIIIFSearchPaging: more hits than a response holds are paged, with
// next and prev, the total and each page's start.
func TestIIIFSearchPaging(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	line := strings.TrimSpace(strings.Repeat("bird ", 90))
	var pages []bookPage
	for range 3 {
		pages = append(pages, bookPage{text: line + "\n" + line})
	}
	w, _ := ocrBook(t, e, shelfmark.Public, "Many birds", pages) // 540 hits
	p1 := "/iiif/" + string(w.ID) + "/search/1?q=bird"
	d, _ := search1(t, e, p1, anonymously...)
	if len(d.Hits) != iiifSearchPage || d.Within.Total != 540 || d.StartIndex != 0 || d.Next == "" || d.Prev != "" ||
		!strings.HasSuffix(d.Within.First, p1) || !strings.HasSuffix(d.Within.Last, p1+"&page=3") {
		t.Fatalf("page 1: %d hits, within %+v, next %q", len(d.Hits), d.Within, d.Next)
	}
	seen := map[string]bool{}
	for _, a := range d.Resources {
		seen[a.ID] = true
	}
	next, _ := url.Parse(d.Next)
	d, _ = search1(t, e, next.RequestURI(), anonymously...)
	if len(d.Hits) != iiifSearchPage || d.StartIndex != iiifSearchPage || d.Prev == "" || d.Next == "" {
		t.Fatalf("page 2: %d hits, start %d, prev %q, next %q", len(d.Hits), d.StartIndex, d.Prev, d.Next)
	}
	for _, a := range d.Resources {
		seen[a.ID] = true
	}
	d2, _ := search2(t, e, "/iiif/"+string(w.ID)+"/search/2?q=bird&page=3", anonymously...)
	if len(d2.Items) != 540-2*iiifSearchPage || d2.StartIndex != 2*iiifSearchPage || d2.Next != nil || d2.Prev == nil || d2.PartOf.Total != 540 {
		t.Fatalf("page 3: %d items, start %d, next %v", len(d2.Items), d2.StartIndex, d2.Next)
	}
	for _, a := range d2.Items {
		seen[strings.Replace(a.ID, "/search/2", "/search/1", 1)] = true
	}
	if len(seen) != 540 {
		t.Errorf("the pages hold %d distinct annotations, want 540", len(seen))
	}
}

// TestIIIFSearchAccess: a hidden work's search is 404 as its manifest is;
// a readable one that is not public is not offered to other origins nor
// kept by shared caches; bad input is a precise 4xx.
func TestIIIFSearchAccess(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	priv, pages := ocrBook(t, e, shelfmark.Private, "A private diary", []bookPage{{text: "my secret bird"}})
	for _, v := range []string{"1", "2"} {
		path := "/iiif/" + string(priv.ID) + "/search/" + v + "?q=secret"
		r := e.do("GET", path, nil, anonymously...)
		if r.Status != http.StatusNotFound || !strings.Contains(r.Header.Get("Content-Type"), "json") || strings.Contains(string(r.Body), "secret") {
			t.Errorf("anonymous, private work: %d %s %s", r.Status, r.Header.Get("Content-Type"), r.Body)
		}
		r = e.do("GET", path, nil) // the admin
		if r.Status != http.StatusOK || !strings.Contains(string(r.Body), "secret") {
			t.Errorf("the admin's search of a private work: %d %s", r.Status, r.Body)
		}
		if h := r.Header.Get("Access-Control-Allow-Origin"); h != "" || !strings.HasPrefix(r.Header.Get("Cache-Control"), "private") {
			t.Errorf("a private work's search: Access-Control-Allow-Origin %q, Cache-Control %q", h, r.Header.Get("Cache-Control"))
		}
	}
	ctx := context.Background()
	coll := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled("Diaries")}})[0]
	work := "/iiif/" + string(priv.ID) + "/search/1"
	for _, c := range []struct {
		path   string
		status int
		want   string
	}{
		{work, 400, "q="},
		{work + "?q=", 400, "q="},
		{work + "?q=%20%20", 400, "q="},
		{work + "?q=--", 400, "no words"},
		{work + "?q=a&q=b", 400, "once"},
		{work + "?q=" + strings.Repeat("a", shelfmark.MaxSearchQueryBytes+1), 400, "at most"},
		{work + "?q=" + strings.Repeat("a+", 40), 400, "at most"},
		{work + "?q=a&page=0", 400, "page"},
		{work + "?q=a&page=x", 400, "page"},
		{work + "?q=a&page=", 400, "page"},
		{work + "?q=a&page=99999999999", 400, "page"},
		{"/iiif/" + string(pages[0]) + "/search/1?q=a", 404, "/iiif/" + string(priv.ID) + "/search/1"},
		{"/iiif/" + string(coll.ID) + "/search/2?q=a", 404, "is a collection"},
		{"/iiif/not-an-id/search/1?q=a", 404, ""},
		{"/iiif/" + string(priv.ID) + "/search/3?q=a", 404, ""},
	} {
		r := e.do("GET", c.path, nil)
		var body kit.ErrorBody
		if r.Status != c.status || json.Unmarshal(r.Body, &body) != nil || body.Message == "" || !strings.Contains(body.Message, c.want) {
			t.Errorf("GET %.80s: %d %s, want %d with %q", c.path, r.Status, r.Body, c.status, c.want)
		}
	}
	if r := e.do("POST", work+"?q=a", ""); r.Status != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", r.Status)
	}
}

// TestIIIFSearchCost: a search of a 300-page book runs the statements a
// search of a 10-page one runs (a read of the children and one of their
// files per 1,000 pages); the first search reads each page's OCR once,
// a second reads none (the word boxes are cached by the file's digest).
func TestIIIFSearchCost(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		book := func(n int) shelfmark.ID {
			pages := make([]bookPage, n)
			for i := range pages {
				pages[i] = bookPage{text: fmt.Sprintf("page %d of %d\nthe end", i+1, n)}
			}
			w, _ := ocrBook(t, e, shelfmark.Public, fmt.Sprint(n, " pages"), pages)
			return w.ID
		}
		small, large := book(10), book(300)
		run := func(w shelfmark.ID) ([]string, int64, int) {
			reads := e.srv.iiif.OCRReads()
			mark := e.tr.mark()
			d, _ := search1(t, e, "/iiif/"+string(w)+"/search/1?q=the", anonymously...)
			return e.tr.sinceSorted(mark), e.srv.iiif.OCRReads() - reads, d.Within.Total
		}
		for _, c := range []struct {
			w shelfmark.ID
			n int
		}{{small, 10}, {large, 300}} {
			if _, reads, hits := run(c.w); reads != int64(c.n) || hits != c.n {
				t.Errorf("the first search of %d pages read %d files and found %d hits", c.n, reads, hits)
			}
			if _, reads, _ := run(c.w); reads != 0 {
				t.Errorf("the second search of %d pages read %d files", c.n, reads)
			}
		}
		a, _, _ := run(small)
		b, _, _ := run(large)
		if strings.Join(a, "\n") != strings.Join(b, "\n") || len(a) == 0 {
			t.Errorf("a search of 10 pages ran %d statements, of 300 pages %d:\n%s\n---\n%s", len(a), len(b), strings.Join(a, "\n"), strings.Join(b, "\n"))
		}
		t.Logf("%s: %d statements for a search of 10 or of 300 pages", backend, len(a))
	})
}

// BenchmarkIIIFSearch searches a 1,200-page book of 300 OCR words a page
// (hOCR of about 30 KB a page) for a word on every page: with the word
// boxes cached (the second and later searches of a book) and with an
// empty cache (every page's hOCR read and parsed).
func BenchmarkIIIFSearch(b *testing.B) {
	e := newPolicyEnv(b, "sqlite", Options{})
	words := strings.Fields("the quick brown fox jumps over a lazy dog while readers search inside the book")
	pages := make([]bookPage, 1200)
	for i := range pages {
		var lines []string
		for k := range 30 {
			var l []string
			for j := range 10 {
				l = append(l, words[(i+k*10+j)%len(words)])
			}
			lines = append(lines, strings.Join(l, " "))
		}
		lines[0] += fmt.Sprint(" page", i)
		pages[i] = bookPage{text: strings.Join(lines, "\n")}
	}
	w, _ := ocrBook(b, e, shelfmark.Public, "Twelve hundred pages", pages)
	path := "/iiif/" + string(w.ID) + "/search/1?q=fox"
	for _, cached := range []bool{true, false} {
		b.Run(fmt.Sprintf("cached=%v", cached), func(b *testing.B) {
			e.do("GET", path, nil, anonymously...)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if !cached {
					e.srv.iiif.ForgetOCR()
				}
				if r := e.do("GET", path, nil, anonymously...); r.Status != http.StatusOK {
					b.Fatalf("%d", r.Status)
				}
			}
		})
	}
}

// TestIIIFSearchTesseract searches the hOCR tesseract writes of an image
// of a line of text placed at (100, 200): the hit's box lies within the
// line, and a later word's box to the right of an earlier one's. Without
// vips or tesseract it skips.
func TestIIIFSearchTesseract(t *testing.T) {
	for _, tool := range []string{"vips", "vipsheader", "tesseract"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	dir := t.TempDir()
	run := func(name string, args ...string) string {
		t.Helper()
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	text, inv, img := filepath.Join(dir, "t.png"), filepath.Join(dir, "i.png"), filepath.Join(dir, "page.png")
	run("vips", "text", text, "Shelfmark finds the heron here.", "--dpi", "300")
	run("vips", "invert", text, inv)
	var lw, lh int
	fmt.Sscan(run("vipsheader", "-f", "width", inv), &lw)
	fmt.Sscan(run("vipsheader", "-f", "height", inv), &lh)
	pw, ph := lw+200, lh+400
	run("vips", "embed", inv, img, "100", "200", fmt.Sprint(pw), fmt.Sprint(ph), "--extend", "white")
	run("tesseract", img, filepath.Join(dir, "page"), "-l", "eng", "hocr")
	hocr, err := os.ReadFile(filepath.Join(dir, "page.hocr"))
	if err != nil {
		t.Fatal(err)
	}

	e := newPolicyEnv(t, "sqlite", Options{})
	ctx := context.Background()
	w := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Metadata: titled("One line")}})[0]
	fs := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: w.ID}})[0]
	orig := e.putBytes("page.png", "image/png", []byte("the page"))
	orig.Format = &shelfmark.Format{PRONOM: "fmt/11", Name: "Portable Network Graphics", MediaType: "image/png", Width: pw, Height: ph}
	oc := e.putBytes("page.hocr", "application/xhtml+xml", hocr)
	oc.Use = shelfmark.UseOCR
	e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFile, Parent: fs.ID, File: orig}, {Kind: shelfmark.KindFile, Parent: fs.ID, File: oc}})
	if _, err := e.repo.SetOrder(ctx, w.ID, []shelfmark.ID{fs.ID}, 0); err != nil {
		t.Fatal(err)
	}
	box := func(q string) [4]int {
		t.Helper()
		d, r := search1(t, e, "/iiif/"+string(w.ID)+"/search/1?q="+q, anonymously...)
		if len(d.Resources) != 1 {
			t.Fatalf("%s: %s\nhOCR:\n%s", q, r.Body, hocr)
		}
		var b [4]int
		_, frag, _ := strings.Cut(d.Resources[0].On, "#xywh=")
		if n, err := fmt.Sscanf(frag, "%d,%d,%d,%d", &b[0], &b[1], &b[2], &b[3]); n != 4 || err != nil {
			t.Fatalf("%s: on %s", q, d.Resources[0].On)
		}
		if b[0] < 95 || b[1] < 195 || b[0]+b[2] > 100+lw+5 || b[1]+b[3] > 200+lh+5 || b[2] < 10 || b[3] < 10 {
			t.Errorf("%s: box %v outside the line at 100,200 of %d×%d", q, b, lw, lh)
		}
		return b
	}
	heron, here := box("heron"), box("here")
	if heron[0]+heron[2] > here[0] {
		t.Errorf("heron %v does not end left of here %v", heron, here)
	}
}
