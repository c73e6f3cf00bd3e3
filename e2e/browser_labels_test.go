package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestBrowserLabels: a curator opens the pages of a work of three pages
// and, with the keyboard alone, types a label into each page's field,
// reaches "Save labels" by Tab and presses Enter; the page comes back
// with a notice and the labels in their fields, and the IIIF manifest
// gives them as the canvases' labels. Then Enter in a label field saves
// the labels too (it is the form's default button). The page is clean
// and passes axe-core before and after.
func TestBrowserLabels(t *testing.T) {
	chromiumPath(t)
	axe := axeSource(t)
	s := startBrowserServer(t)
	const password = "folio and verso"
	cmd := exec.Command(s.bin, "user", "add", "cara", "--password-stdin", "--data", s.data)
	cmd.Env, cmd.Stdin = cleanEnv(filepath.Dir(s.bin)), strings.NewReader(password+"\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("shelfmark user add cara: %v\n%s", err, out)
	}
	var res struct{ ID string }
	s.api(t, "POST", "/collections", map[string]any{"metadata": map[string]any{"dc:title": "Manuscripts"}, "visibility": "public"},
		http.StatusCreated, &res)
	coll := res.ID
	s.api(t, "PUT", "/resources/"+coll+"/roles", map[string]any{"grants": []map[string]string{{"principal": "user:cara", "role": "curator"}}},
		http.StatusOK, nil)
	s.api(t, "POST", "/works", map[string]any{"metadata": map[string]any{"dc:title": "A book of hours"}, "visibility": "public",
		"memberOf": []string{coll}}, http.StatusCreated, &res)
	work := res.ID
	var pages []string
	for range 3 {
		s.api(t, "POST", "/filesets", map[string]any{"parent": work, "visibility": "public"}, http.StatusCreated, &res)
		pages = append(pages, res.ID)
	}

	b := newBrowser(t, s.base)
	path := "/works/" + work + "/pages"
	b.signIn("cara", password, path)
	if n := b.nodeCount(`#reorder-list input[name="label"]`); n != 3 {
		t.Fatalf("the pages page has %d label fields, want 3: %.600s", n, b.text())
	}
	b.checkClean("the pages page")
	b.axe("the pages page with its label fields", axe)

	labels := []string{"Title page", "p. 1", "f. 2r"}
	for i, id := range pages {
		b.tabTo(fmt.Sprintf("the label of page %d", i+1), "#lab-"+id, false, 40)
		b.typeText(fmt.Sprintf("type the label of page %d", i+1), labels[i])
	}
	b.shot("labels-typed")
	b.tabTo("the Save labels button", `#order-form button[name="labels"]:not(.default-submit)`, false, 20)
	b.expect("save the labels with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	if got := b.location(); got != path+"?notice=labelssaved" {
		t.Fatalf("after saving the labels the browser is at %s, want %s", got, path+"?notice=labelssaved")
	}
	fields := func(what string) []string {
		t.Helper()
		var got []string
		b.eval(what, `Array.from(document.querySelectorAll('#reorder-list input[name="label"]')).map(i => i.value)`, &got)
		return got
	}
	if got := fields("the labels saved"); !slices.Equal(got, labels) || !strings.Contains(b.text(), "Labels saved.") {
		t.Fatalf("after saving: fields %q, page %.600s", got, b.text())
	}
	b.shot("labels-saved")
	b.checkClean("the labels saved")
	b.axe("the pages page after saving the labels", axe)
	if got := canvasLabels(t, s, work); !slices.Equal(got, labels) {
		t.Errorf("the manifest's canvas labels: %q, want %q", got, labels)
	}

	// Enter in a label field saves the labels as well
	b.tabTo("the label of page 1", "#lab-"+pages[0], false, 40)
	b.press("to the end of the label", []string{"End"})
	b.typeText("add to the label", " (recto)")
	b.expect("save with Enter in the field", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	labels[0] = "Title page (recto)"
	if got := fields("the label changed"); !slices.Equal(got, labels) {
		t.Errorf("after Enter in a field: %q, want %q", got, labels)
	}
	if got := canvasLabels(t, s, work); !slices.Equal(got, labels) {
		t.Errorf("the manifest's canvas labels: %q, want %q", got, labels)
	}
	b.checkClean("the label changed")
}

// canvasLabels reads the labels of a work's canvases from its IIIF
// manifest, as a viewer elsewhere does (no credentials).
func canvasLabels(t *testing.T, s *browserServer, work string) []string {
	t.Helper()
	status, body, err := do(s.hc, "GET", s.base+"/iiif/"+work+"/manifest", "", nil, nil)
	if err != nil || status != http.StatusOK {
		t.Fatalf("the manifest: %d %v: %.300s", status, err, body)
	}
	var m struct {
		Items []struct {
			Label map[string][]string `json:"label"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, c := range m.Items {
		out = append(out, strings.Join(c.Label["none"], " "))
	}
	return out
}
