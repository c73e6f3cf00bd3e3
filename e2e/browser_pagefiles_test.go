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
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/shelfmark/shelfmark/bench/gen"
)

// pagesBook is a public work of three page images, each thumbnailed by
// the server's workers, in a collection whose curator signs in.
type pagesBook struct {
	s              *browserServer
	user, password string
	work           string
	pages          []string
}

// newPagesBook stores the book through the API and waits for its pages'
// thumbnails.
func newPagesBook(t *testing.T, title string) *pagesBook {
	t.Helper()
	s := startBrowserServer(t)
	pb := &pagesBook{s: s, user: "cara", password: "folio and verso"}
	cmd := exec.Command(s.bin, "user", "add", pb.user, "--password-stdin", "--data", s.data)
	cmd.Env, cmd.Stdin = cleanEnv(filepath.Dir(s.bin)), strings.NewReader(pb.password+"\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("shelfmark user add %s: %v\n%s", pb.user, err, out)
	}
	var res struct{ ID string }
	s.api(t, "POST", "/collections", map[string]any{"metadata": map[string]any{"dc:title": "Atlases"}, "visibility": "public"},
		http.StatusCreated, &res)
	coll := res.ID
	s.api(t, "PUT", "/resources/"+coll+"/roles", map[string]any{"grants": []map[string]string{{"principal": "user:" + pb.user, "role": "curator"}}},
		http.StatusOK, nil)
	s.api(t, "POST", "/works", map[string]any{"metadata": map[string]any{"dc:title": title}, "visibility": "public",
		"memberOf": []string{coll}}, http.StatusCreated, &res)
	pb.work = res.ID
	for i, words := range []string{"TITLE", "NORTH SHEET", "SOUTH SHEET"} {
		s.api(t, "POST", "/filesets", map[string]any{"parent": pb.work, "visibility": "public"}, http.StatusCreated, &res)
		pb.pages = append(pb.pages, res.ID)
		s.api(t, "POST", "/resources/"+res.ID+"/files?name="+url.QueryEscape(fmt.Sprintf("sheet_%d.png", i+1)),
			rawBody{ctype: "image/png", data: gen.PageImage(14, i+1, strings.Fields(words))}, http.StatusCreated, nil)
	}
	s.api(t, "PUT", "/resources/"+pb.work+"/order", map[string]any{"children": pb.pages}, http.StatusOK, nil)
	s.waitManifest(t, pb.work, func(m *viewerManifest) string {
		for i, c := range m.Items {
			if len(c.Thumbnail) == 0 {
				return fmt.Sprintf("page %d not thumbnailed yet", i+1)
			}
		}
		if len(m.Items) != 3 {
			return fmt.Sprintf("%d canvases", len(m.Items))
		}
		return ""
	})
	return pb
}

// pageThumb is the address of a page's thumbnail on the pages page, ""
// when it shows none.
func pageThumb(b *browser, page string) string {
	b.t.Helper()
	var src string
	b.eval("the thumbnail of "+page, fmt.Sprintf(`(document.querySelector("#p-%s img") || {}).getAttribute ? document.querySelector("#p-%s img").getAttribute("src") : ""`, page, page), &src)
	return src
}

// TestBrowserReplaceFile: a curator replaces the file of the second page
// of a work on its pages page, reaching the page's "Replace file", the
// file field and the button with the keyboard (the file itself is
// chosen as the browser's file chooser would); the page comes back with
// a notice and the new file's name, the old thumbnail is gone, and the
// server's workers make the new file's thumbnail. The page is clean and
// passes axe-core with the replacement form open.
func TestBrowserReplaceFile(t *testing.T) {
	chromiumPath(t)
	axe := axeSource(t)
	pb := newPagesBook(t, "An atlas of two sheets")
	page := pb.pages[1]
	b := newBrowser(t, pb.s.base)
	path := "/works/" + pb.work + "/pages"
	b.signIn(pb.user, pb.password, path)
	old := pageThumb(b, page)
	if old == "" {
		t.Fatalf("the second page shows no thumbnail: %.600s", b.text())
	}

	b.tabTo("the second page's Replace file", "#p-"+page+" details.replace summary", false, 60)
	b.press("open the replacement form", []string{"Enter"})
	b.tabTo("the file field", "#rep-in-"+page, false, 5)
	newFile := filepath.Join(t.TempDir(), "sheet_2_corrected.png")
	if err := os.WriteFile(newFile, gen.PageImage(14, 22, strings.Fields("NORTH SHEET CORRECTED")), 0o644); err != nil {
		t.Fatal(err)
	}
	// what the file chooser the field opens would give it
	b.run("choose the file", chromedp.SetUploadFiles("#rep-in-"+page, []string{newFile}, chromedp.ByQuery))
	b.checkClean("the pages page with the replacement form open")
	b.axe("the pages page with the replacement form open", axe)
	b.shot("replace-chosen")
	b.tabTo("the Replace button", `button[form="rep-`+page+`"]`, false, 5)
	b.expect("replace the file with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	if got := b.location(); !strings.HasPrefix(got, path+"?notice=filereplaced") {
		t.Fatalf("after replacing the file the browser is at %s", got)
	}
	if text := b.text(); !strings.Contains(text, "The page’s file was replaced") || !strings.Contains(text, "sheet_2_corrected.png") {
		t.Fatalf("after replacing: %.800s", text)
	}
	if status, _, err := do(pb.s.hc, "GET", pb.s.base+old, "", nil, nil); err != nil || status == http.StatusOK {
		t.Errorf("the replaced page's old thumbnail answers %d (%v)", status, err)
	}
	b.checkClean("the file replaced")
	b.axe("the pages page after the replacement", axe)

	// the new file's thumbnail, made in the background
	deadline := time.Now().Add(browserBackground)
	for {
		if src := pageThumb(b, page); src != "" && src != old {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new thumbnail for the page after %v", browserBackground)
		}
		time.Sleep(time.Second)
		b.open(path, http.StatusOK)
	}
	b.shot("replace-thumbnailed")
	b.checkClean("the new thumbnail")
}

// TestBrowserThumbnailPage: a curator makes the third page of a work its
// thumbnail on the pages page by keyboard ("Use as thumbnail", then
// Enter); the page marks it, and a reader who searches for the work's
// title sees that page's thumbnail on the hit. "Use the first page"
// takes the choice back. The pages and search pages are clean and pass
// axe-core.
func TestBrowserThumbnailPage(t *testing.T) {
	chromiumPath(t)
	axe := axeSource(t)
	pb := newPagesBook(t, "An atlas of the estuary")
	b := newBrowser(t, pb.s.base)
	path := "/works/" + pb.work + "/pages"
	b.signIn(pb.user, pb.password, path)
	first, third := pageThumb(b, pb.pages[0]), pageThumb(b, pb.pages[2])
	if b.nodeCount("#p-"+pb.pages[0]+" .represents") != 1 {
		t.Errorf("the first page is not marked as the work's thumbnail before a choice")
	}
	b.axe("the pages page with its thumbnail buttons", axe)

	b.tabTo("the third page's Use as thumbnail", "#p-"+pb.pages[2]+` button[formaction$="/thumbnail"]`, false, 80)
	b.expect("choose it with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	if got := b.location(); !strings.HasPrefix(got, path+"?notice=thumbnailsaved") {
		t.Fatalf("after choosing the thumbnail the browser is at %s", got)
	}
	if !strings.Contains(b.text(), "The work’s thumbnail was chosen.") || b.nodeCount("#p-"+pb.pages[2]+" .represents") != 1 ||
		b.nodeCount("#p-"+pb.pages[0]+" .represents") != 0 {
		t.Fatalf("after choosing, the pages page: %.800s", b.text())
	}
	b.shot("thumbnail-chosen")
	b.checkClean("the thumbnail chosen")
	b.axe("the pages page after choosing the thumbnail", axe)

	// a reader's search finds the work with the chosen page's thumbnail
	reader := newBrowserIn(t, pb.s.base, t.Name()+"-reader")
	hitThumb := func() string {
		var src string
		reader.eval("the hit's thumbnail", `(document.querySelector("img.thumb") || {}).getAttribute ? document.querySelector("img.thumb").getAttribute("src") : ""`, &src)
		return src
	}
	deadline := time.Now().Add(browserBackground)
	for {
		reader.open("/search?q=estuary", http.StatusOK)
		if got := hitThumb(); got == third {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the search's hit shows %q, want the third page's %s", got, third)
		}
		time.Sleep(time.Second)
	}
	reader.shot("thumbnail-in-search")
	reader.checkClean("the search with the chosen thumbnail")
	reader.axe("the search with the chosen thumbnail", axe)

	// taken back: the first page's again
	b.tabTo("Use the first page", "#p-"+pb.pages[2]+` button[formaction$="/thumbnail"]`, false, 80)
	b.expect("take the choice back with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	reader.open("/search?q=estuary", http.StatusOK)
	if got := hitThumb(); got != first {
		t.Errorf("after the choice was taken back the hit shows %q, want the first page's %s", got, first)
	}
}
