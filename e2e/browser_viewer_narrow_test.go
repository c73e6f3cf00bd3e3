package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/shelfmark/shelfmark/bench/gen"
)

// TestBrowserViewerNarrow opens the book viewer of a short book on a
// phone's 375 pixels with its search panel open (?q= searches the book
// for a word OCR read on page 2): the panel does not cover the page's
// image (it lies below it), the image keeps most of the window's width,
// the search field and the hit are reached by keyboard, the hit opens
// its page, and axe-core's WCAG 2.1 A/AA rules pass.
func TestBrowserViewerNarrow(t *testing.T) {
	chromiumPath(t)
	axe := axeSource(t)
	s := startBrowserServer(t)
	var coll struct{ ID string }
	s.api(t, "POST", "/collections", map[string]any{"metadata": map[string]any{"dc:title": "Pamphlets"}, "visibility": "public"},
		http.StatusCreated, &coll)
	tree := t.TempDir()
	dir := filepath.Join(tree, "pamphlet")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "metadata.json"), []byte(`{"dc:title": "A pamphlet of three pages"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, words := range []string{"LIBRARY RECORD", "ROLLER SHAFT " + viewerWord + " PLATE", "INDEX"} {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("page_%d.png", i+1)), gen.PageImage(14, i+1, strings.Fields(words)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(s.bin, "ingest", tree, "--server", s.base, "--token", s.token, "--collection", coll.ID)
	cmd.Env = cleanEnv(filepath.Dir(s.bin))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("shelfmark ingest --server: %v\n%s", err, out)
	}
	var members struct{ Items []struct{ ID string } }
	s.api(t, "GET", "/resources/"+coll.ID+"/members", nil, http.StatusOK, &members)
	if len(members.Items) != 1 {
		t.Fatalf("the collection holds %d works, want the pamphlet", len(members.Items))
	}
	work := members.Items[0].ID
	s.api(t, "PATCH", "/resources/"+work, map[string]any{"visibility": "public"}, http.StatusOK, nil)
	m := s.waitManifest(t, work, func(m *viewerManifest) string {
		if len(m.Items) != 3 {
			return fmt.Sprintf("%d canvases", len(m.Items))
		}
		for i, c := range m.Items {
			if c.Width == 0 || len(c.Thumbnail) == 0 {
				return fmt.Sprintf("page %d not sized and thumbnailed yet", i+1)
			}
		}
		if len(m.Items[1].SeeAlso) == 0 {
			return "page 2 not read by OCR yet"
		}
		return ""
	})

	b := newBrowser(t, s.base)
	b.run("a phone's window", chromedp.EmulateViewport(375, 740))
	b.open("/works/"+work+"?q="+url.QueryEscape(strings.ToLower(viewerWord)), http.StatusOK)
	b.waitFor("?q= opens the viewer at page 2, the hit", viewerOn(m.Items[1].ID), viewerState, browserStep)
	b.waitFor("page 2's image loaded", viewerImageLoaded(m.Items[1]), "", browserStep)
	b.waitFor("the search panel shows the hit", fmt.Sprintf(`document.querySelector('#viewer-mount .mirador-companion-window-left') &&
  document.querySelector('#viewer-mount .mirador-companion-window-left').innerText.toUpperCase().includes(%q)`, viewerWord), "", browserStep)
	b.run("scroll to the viewer", chromedp.ScrollIntoView("#viewer", chromedp.ByQuery))
	var box viewerBoxes
	b.eval("the panel and the page", viewerBoxesJS, &box)
	t.Logf("at 375 px: %+v", box)
	if box.Missing != "" {
		t.Fatalf("at 375 px: %s", box.Missing)
	}
	if box.Overlap > 0 {
		t.Errorf("at 375 px the search panel covers %.0f square pixels of the page's image (panel %v, image %v)", box.Overlap, box.Panel, box.Canvas)
	}
	if box.Canvas[2] < 0.8*375 || box.Canvas[3] < 200 {
		t.Errorf("at 375 px the page's image has %v×%v pixels, want most of the window's width", box.Canvas[2], box.Canvas[3])
	}
	if box.Panel[1] < box.Canvas[1]+box.Canvas[3]-1 {
		t.Errorf("at 375 px the search panel (top %v) is not below the page's image (bottom %v)", box.Panel[1], box.Canvas[1]+box.Canvas[3])
	}
	b.shotOf("viewer-narrow-search", "#viewer")
	b.checkClean("the viewer at 375 px with its search panel")

	// by keyboard: to the search field, and the hit opens its page
	b.open("/works/"+work+"?q="+url.QueryEscape(strings.ToLower(viewerWord)), http.StatusOK)
	b.waitFor("the viewer at the hit again", viewerOn(m.Items[1].ID), viewerState, browserStep)
	b.waitFor("the search panel's field", `document.querySelector('#viewer-mount input[id^="search-"]')`, "", browserStep)
	b.tabTo("the search field by keyboard", `#viewer-mount input[id^="search-"]`, false, 80)
	b.tabTo("the results, scrolled by keyboard", `#viewer-mount .mirador-companion-window-left .mirador-scrollto-scrollable`, false, 20)
	b.press("scroll the results", []string{"ArrowDown", "ArrowDown", "ArrowDown"})
	// the browser scrolls smoothly: the box moves in a moment
	b.waitFor("the arrow keys scroll the results", `document.activeElement.scrollTop > 0`,
		`(() => { const e = document.activeElement; return e.className + " " + e.scrollTop + "/" + e.scrollHeight + "/" + e.clientHeight })()`, browserStep)
	b.axe("the work page at 375 px with the viewer's search panel open", axe)
	b.checkClean("the viewer at 375 px after axe-core")
	b.run("the window as it was", chromedp.EmulateViewport(1280, 900))
}

// viewerBoxes are the boxes, in CSS pixels (left, top, width, height), of
// the viewer's side panel and of the page's image, and how much they
// overlap.
type viewerBoxes struct {
	Panel   []float64 `json:"panel"`
	Canvas  []float64 `json:"canvas"`
	Overlap float64   `json:"overlap"`
	Missing string    `json:"missing"`
}

// viewerBoxesJS measures viewerBoxes.
const viewerBoxesJS = `(() => { const p = document.querySelector('#viewer-mount .mirador-companion-window-left'),
  c = document.querySelector('#viewer-mount .openseadragon-canvas');
  if (!p || !c) return {missing: (p ? "" : "no side panel ") + (c ? "" : "no image"), panel: [], canvas: [], overlap: 0};
  const a = p.getBoundingClientRect(), b = c.getBoundingClientRect();
  const ox = Math.max(0, Math.min(a.right, b.right) - Math.max(a.left, b.left)), oy = Math.max(0, Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top));
  return {panel: [a.left, a.top, a.width, a.height], canvas: [b.left, b.top, b.width, b.height], overlap: ox * oy, missing: ""} })()`
