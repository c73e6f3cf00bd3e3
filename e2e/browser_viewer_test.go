package e2e

import (
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"

	"github.com/shelfmark/shelfmark/bench/gen"
)

const (
	// viewerPages is the length of the viewer's book.
	viewerPages = 300
	// viewerHitPage is the only page with the word searched for;
	// viewerTurnTo the page the reader turns to.
	viewerHitPage = 120
	viewerTurnTo  = 200
	// viewerWord is the word searched for (one tesseract reads reliably
	// from the generator's font; see worker/ocr_test.go).
	viewerWord = "APPARATUS"
	// viewerPageW and viewerPageH are the size of the book's blank pages:
	// small, so that their derivatives and OCR are quick.
	viewerPageW, viewerPageH = 600, 800
)

// TestBrowserViewer opens the book viewer of the work page on a book of
// 300 generated pages, ingested with `shelfmark ingest --server` into a
// real `shelfmark serve` whose workers make the derivatives and read the
// pages' text: the viewer shows page 1, zooms in, turns to page 200 (by
// the address and by its next-page button, the address following), finds
// the word OCR read on page 120 with its search panel and lands there
// (and there again when the address asks for the search with ?q=); no
// CSP violation, script error or failed request, and axe-core's WCAG
// 2.1 A/AA rules pass on the page with the viewer.
func TestBrowserViewer(t *testing.T) {
	chromiumPath(t)
	axe := axeSource(t)
	s := startBrowserServer(t)

	var coll struct{ ID string }
	s.api(t, "POST", "/collections", map[string]any{"metadata": map[string]any{"dc:title": "Registers"}, "visibility": "public"},
		http.StatusCreated, &coll)
	tree := viewerBook(t)
	start := time.Now()
	cmd := exec.Command(s.bin, "ingest", tree, "--server", s.base, "--token", s.token, "--collection", coll.ID)
	cmd.Env = cleanEnv(filepath.Dir(s.bin))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("shelfmark ingest --server: %v\n%s", err, out)
	}
	ingested := time.Since(start)
	var members struct{ Items []struct{ ID string } }
	s.api(t, "GET", "/resources/"+coll.ID+"/members", nil, http.StatusOK, &members)
	if len(members.Items) != 1 {
		t.Fatalf("the collection holds %d works, want the book", len(members.Items))
	}
	work := members.Items[0].ID
	s.api(t, "PATCH", "/resources/"+work, map[string]any{"visibility": "public"}, http.StatusOK, nil)

	// the pipeline: every page characterized (canvas sized) and
	// thumbnailed, and page 120's text read with its word boxes
	m := s.waitManifest(t, work, func(m *viewerManifest) string {
		if len(m.Items) != viewerPages {
			return fmt.Sprintf("%d canvases", len(m.Items))
		}
		ready := 0
		for _, c := range m.Items {
			if c.Width > 0 && len(c.Thumbnail) > 0 {
				ready++
			}
		}
		if ready < viewerPages {
			return fmt.Sprintf("%d of %d canvases sized and thumbnailed", ready, viewerPages)
		}
		if len(m.Items[viewerHitPage-1].SeeAlso) == 0 {
			return fmt.Sprintf("page %d not read by OCR yet", viewerHitPage)
		}
		return ""
	})
	t.Logf("a book of %d pages: ingested in %v, derivatives and OCR of page %d done %v after the start",
		viewerPages, ingested.Round(time.Millisecond), viewerHitPage, time.Since(start).Round(time.Millisecond))
	if m.searchService() == "" {
		t.Fatalf("the manifest offers no IIIF Content Search service: %v", m.Service)
	}
	canvas := func(n int) string { return m.Items[n-1].ID }
	page := func(n int) string { return canvas(n)[strings.LastIndex(canvas(n), "/")+1:] }

	b := newBrowser(t, s.base)
	b.open("/works/"+work, http.StatusOK)
	b.waitFor("the viewer shows page 1", viewerOn(canvas(1)), viewerState, browserStep)
	b.waitFor("page 1's image loaded", viewerImageLoaded(m.Items[0]), `performance.getEntriesByType("resource").map(e => e.name).slice(-8)`, browserStep)
	if b.nodeCount("#viewer-fallback:not([hidden])") != 0 {
		t.Error("the viewer is shown, and so is the hint for browsers without script")
	}
	b.shot("viewer-first")

	// zoom in with the viewer's own button
	var zoom float64
	b.eval("the zoom", viewerZoom, &zoom)
	b.run("zoom in", chromedp.Click(`#viewer-mount button[aria-label="Zoom in"]`, chromedp.ByQuery))
	b.waitFor("zoomed in", fmt.Sprintf(`%s > %g * 1.2`, viewerZoom, zoom), viewerZoom, browserStep)
	b.checkClean("the viewer on page 1")

	// turn to page 200: open the page of page 199, then the next page
	b.open("/works/"+work+"?page="+url.QueryEscape(page(viewerTurnTo-1)), http.StatusOK)
	b.waitFor(fmt.Sprintf("the viewer opened at page %d", viewerTurnTo-1), viewerOn(canvas(viewerTurnTo-1)), viewerState, browserStep)
	b.run("next page", chromedp.Click(`#viewer-mount button[aria-label="Next item"]`, chromedp.ByQuery))
	b.waitFor(fmt.Sprintf("the viewer at page %d", viewerTurnTo), viewerOn(canvas(viewerTurnTo)), viewerState, browserStep)
	b.waitFor(fmt.Sprintf("page %d's image loaded", viewerTurnTo), viewerImageLoaded(m.Items[viewerTurnTo-1]), "", browserStep)
	b.waitFor("the address follows the page", fmt.Sprintf(`new URLSearchParams(location.search).get("page") === %q`, page(viewerTurnTo)),
		`location.href`, browserStep)

	// search the book for the word on page 120, with the search panel
	b.run("open the sidebar", chromedp.Click(`#viewer-mount button[aria-label="Toggle sidebar"]`, chromedp.ByQuery))
	b.waitFor("the search panel's button", `document.querySelector('#viewer-mount [role="tab"][aria-label="Search"], #viewer-mount button[aria-label="Search"]')`,
		`Array.from(document.querySelectorAll("#viewer-mount [aria-label]")).map(e => e.getAttribute("aria-label"))`, browserStep)
	// clicked where it is once the side bar has slid open
	b.eval("open the search panel", `document.querySelector('#viewer-mount [role="tab"][aria-label="Search"], #viewer-mount button[aria-label="Search"]').click(), true`, nil)
	b.waitFor("the search field", `document.querySelector('#viewer-mount input[id^="search-"]')`,
		`Array.from(document.querySelectorAll("#viewer-mount [aria-label]")).map(e => e.getAttribute("aria-label"))`, browserStep)
	b.run("type the word", chromedp.SendKeys(`#viewer-mount input[id^="search-"]`,
		strings.ToLower(viewerWord)+"\n", chromedp.ByQuery))
	b.waitFor(fmt.Sprintf("the viewer at page %d, the search's hit", viewerHitPage), viewerOn(canvas(viewerHitPage)), viewerState, browserStep)
	b.waitFor(fmt.Sprintf("page %d's image loaded", viewerHitPage), viewerImageLoaded(m.Items[viewerHitPage-1]), "", browserStep)
	b.waitFor("the address follows the hit", fmt.Sprintf(`new URLSearchParams(location.search).get("page") === %q`, page(viewerHitPage)),
		`location.href`, browserStep)
	if text := b.text(); !strings.Contains(strings.ToUpper(text), viewerWord) {
		t.Errorf("the search panel does not show the hit's text %q: %.800s", viewerWord, text)
	}
	// the picture without the pointer's tooltip or the field's focus
	b.run("move the pointer away", chromedp.MouseEvent(input.MouseMoved, 1, 1))
	b.eval("leave the search field", `document.activeElement && document.activeElement.blur(), true`, nil)
	b.shotOf("viewer", "#viewer")
	b.checkClean("the viewer after turning pages and searching")
	b.axe("the work page with the viewer open at a search hit", axe)
	b.checkClean("the viewer after axe-core")

	// ?q= opens the viewer with the search done, at its hit
	b.open("/works/"+work+"?q="+url.QueryEscape(strings.ToLower(viewerWord)), http.StatusOK)
	b.waitFor(fmt.Sprintf("?q= opens the viewer at page %d", viewerHitPage), viewerOn(canvas(viewerHitPage)), viewerState, browserStep)
	b.checkClean("the viewer opened with ?q=")

	viewerLanguages(t, b, work, canvas(1))
}

// viewerLanguages opens the work's viewer in English and in Spanish (a
// language the interface has and Mirador does not ship) with its side
// bar's "about this item" panel, and checks that the viewer's controls
// and the manifest's labels (the whole work as PDF, among its formats)
// are in the page's language, and no other language's label shows.
func viewerLanguages(t *testing.T, b *browser, work, first string) {
	t.Helper()
	pdf := map[string]string{}
	for _, lang := range []string{"en", "de", "fr", "es"} {
		m := readCatalog(t, lang)
		if m["iiif.pdf"] == "" {
			t.Fatalf("%s: no message iiif.pdf", lang)
		}
		pdf[lang] = m["iiif.pdf"]
	}
	es := viewerTranslations(t)["es"]
	controls := map[string][2]string{ // toggle the side bar, zoom in
		"en": {"Toggle sidebar", "Zoom in"},
		"es": {es["toggleWindowSideBar"], es["zoomIn"]},
	}
	for _, lang := range []string{"en", "es"} {
		c := controls[lang]
		if c[0] == "" || c[1] == "" || lang != "en" && (c[0] == controls["en"][0] || c[1] == controls["en"][1]) {
			t.Fatalf("%s: the viewer's labels %q are missing or English", lang, c)
		}
		b.open("/works/"+work+"?lang="+lang, http.StatusOK)
		b.waitFor(lang+": the viewer shows page 1", viewerOn(first), viewerState, browserStep)
		b.waitFor(lang+": the zoom button in the page's language", fmt.Sprintf(`document.querySelector('#viewer-mount button[aria-label=%q]') !== null`, c[1]),
			`Array.from(document.querySelectorAll("#viewer-mount [aria-label]")).map(e => e.getAttribute("aria-label"))`, browserStep)
		b.run(lang+": open the side bar", chromedp.Click(fmt.Sprintf(`#viewer-mount button[aria-label=%q]`, c[0]), chromedp.ByQuery))
		b.waitFor(lang+": the whole work as PDF among the formats, in the page's language", fmt.Sprintf(`document.querySelector("#viewer-mount").innerText.includes(%q)`, pdf[lang]),
			`document.querySelector("#viewer-mount").innerText`, browserStep)
		var text string
		b.eval(lang+": the viewer's text", `document.querySelector("#viewer-mount").innerText`, &text)
		for other, label := range pdf {
			if other != lang && strings.Contains(text, label) {
				t.Errorf("%s: the viewer shows the %s label %q", lang, other, label)
			}
		}
		b.shotOf("viewer-about-"+lang, "#viewer")
		b.checkClean("the viewer in " + lang)
	}
}

// readCatalog is the interface's message catalog of lang, from the
// source tree.
func readCatalog(t *testing.T, lang string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "http", "ui", "locales", lang, "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("catalog %s: %v (%d files)", lang, err, len(files))
	}
	m := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		part := map[string]string{}
		if err := json.Unmarshal(b, &part); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for k, v := range part {
			m[k] = v
		}
	}
	return m
}

// viewerTranslations are the viewer's own translations of the languages
// Mirador does not ship, from the source tree's static/viewer-lang.js.
func viewerTranslations(t *testing.T) map[string]map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "http", "ui", "static", "viewer-lang.js"))
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	start, end := strings.Index(src, "= {"), strings.LastIndex(src, "};")
	if start < 0 || end < start {
		t.Fatal("viewer-lang.js: no translations object")
	}
	m := map[string]map[string]string{}
	if err := json.Unmarshal([]byte(src[start+2:end+1]), &m); err != nil {
		t.Fatalf("viewer-lang.js: %v", err)
	}
	return m
}

// shotOf saves a PNG screenshot of the element selector matches, named
// and numbered as shot names and numbers them.
func (b *browser) shotOf(name, selector string) {
	b.t.Helper()
	var png []byte
	b.run("screenshot "+name, chromedp.ScrollIntoView(selector, chromedp.ByQuery), chromedp.Screenshot(selector, &png, chromedp.ByQuery))
	b.n++
	for i, d := range b.shots {
		file := fmt.Sprintf("%02d-%s.png", b.n, name)
		if i > 0 {
			readme, ok := readmeShots[name]
			if !ok {
				continue
			}
			file = readme + ".png"
		}
		if err := os.WriteFile(filepath.Join(d, file), png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
}

// viewerManifest is what the test reads of a IIIF manifest.
type viewerManifest struct {
	Items   []viewerCanvas `json:"items"`
	Service []struct {
		ID      string `json:"id"`
		AID     string `json:"@id"`
		Type    string `json:"type"`
		Profile string `json:"profile"`
	} `json:"service"`
}

// viewerCanvas is what the test reads of a canvas.
type viewerCanvas struct {
	ID        string            `json:"id"`
	Width     int               `json:"width"`
	Thumbnail []json.RawMessage `json:"thumbnail"`
	SeeAlso   []json.RawMessage `json:"seeAlso"`
	Items     []struct {
		Items []struct {
			Body struct {
				ID      string `json:"id"`
				Service []struct {
					ID  string `json:"id"`
					AID string `json:"@id"`
				} `json:"service"`
			} `json:"body"`
		} `json:"items"`
	} `json:"items"`
}

// searchService is the address of the manifest's Content Search 1.0
// service (what Mirador speaks), "" when it offers none.
func (m *viewerManifest) searchService() string {
	for _, s := range m.Service {
		if s.Profile == "http://iiif.io/api/search/1/search" || s.Type == "SearchService1" {
			if s.ID != "" {
				return s.ID
			}
			return s.AID
		}
	}
	return ""
}

// waitManifest reads the work's manifest until ready finds nothing
// missing (returns ""), or fails the test after browserBackground.
func (s *browserServer) waitManifest(t *testing.T, work string, ready func(*viewerManifest) string) *viewerManifest {
	t.Helper()
	deadline := time.Now().Add(browserBackground)
	for {
		var m viewerManifest
		status, body, err := do(s.hc, "GET", s.base+"/iiif/"+work+"/manifest", "", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if status != http.StatusOK {
			t.Fatalf("GET /iiif/%s/manifest: %d: %.300s", work, status, body)
		}
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("the manifest: %v", err)
		}
		missing := ready(&m)
		if missing == "" {
			return &m
		}
		if time.Now().After(deadline) {
			t.Fatalf("the book's manifest not ready after %v: %s", browserBackground, missing)
		}
		time.Sleep(time.Second)
	}
}

// viewerState describes the viewer's window: the canvas it shows.
const viewerState = `(() => { const v = window.shelfmarkViewer; if (!v) return "no viewer mounted";
  const ws = Object.values(v.store.getState().windows || {}); return ws.length ? ws[0].canvasId : "no window" })()`

// viewerZoom is the zoom of the viewer's window.
const viewerZoom = `(() => { const v = window.shelfmarkViewer, s = v && v.store.getState();
  const id = s && Object.keys(s.windows || {})[0]; const vp = id && s.viewers && s.viewers[id]; return vp && vp.zoom || 0 })()`

// viewerOn is a condition: the viewer's window shows the canvas.
func viewerOn(canvas string) string {
	return fmt.Sprintf(`%s === %q`, viewerState, canvas)
}

// viewerImageLoaded is a condition: the browser loaded the image painted
// on a canvas: the image itself, or a tile of its image service when it
// has one.
func viewerImageLoaded(c viewerCanvas) string {
	prefix := ""
	if len(c.Items) > 0 && len(c.Items[0].Items) > 0 {
		body := c.Items[0].Items[0].Body
		prefix = body.ID
		if len(body.Service) > 0 {
			prefix = body.Service[0].ID
			if prefix == "" {
				prefix = body.Service[0].AID
			}
			prefix += "/"
		}
	}
	return fmt.Sprintf(`performance.getEntriesByType("resource").some(e => e.name.startsWith(%q) && e.responseEnd > 0 && !e.name.endsWith("/info.json"))`, prefix)
}

// viewerBook writes the book: a folder of 300 page images, blank but
// for a mark of their number (each page's bytes its own), with words on
// the first page and the searched word on page 120 only.
func viewerBook(t *testing.T) string {
	t.Helper()
	tree := t.TempDir()
	dir := filepath.Join(tree, "register")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := `{"dc:title": "A register of three hundred pages", "dc:date": "1861"}`
	if err := os.WriteFile(filepath.Join(dir, "metadata.json"), []byte(meta), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= viewerPages; i++ {
		var data []byte
		switch i {
		case 1:
			data = gen.PageImage(14, i, strings.Fields("LIBRARY RECORD"))
		case viewerHitPage:
			data = gen.PageImage(14, i, strings.Fields("ROLLER SHAFT "+viewerWord+" PLATE"))
		default:
			img := image.NewGray(image.Rect(0, 0, viewerPageW, viewerPageH))
			for p := range img.Pix {
				img.Pix[p] = 0xff
			}
			// the page's number in binary, as small squares in the
			// bottom margin
			for bit := 0; bit < 9; bit++ {
				if i&(1<<bit) == 0 {
					continue
				}
				for y := viewerPageH - 40; y < viewerPageH-34; y++ {
					for x := 40 + bit*10; x < 46+bit*10; x++ {
						img.SetGray(x, y, color.Gray{Y: 0x40})
					}
				}
			}
			var buf strings.Builder
			if err := png.Encode(&buf, img); err != nil {
				t.Fatal(err)
			}
			data = []byte(buf.String())
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("page_%03d.png", i)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tree
}
