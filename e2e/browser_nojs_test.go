package e2e

import (
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// testBrowserNoScript deposits a work of three page images, reorders its
// pages, edits its title and makes it private in a browser that runs no
// script: every form works without it (the files go in the deposit form
// itself, each move button sends the reorder form).
func testBrowserNoScript(t *testing.T, s *browserServer) {
	scans := browserScans(t, "plain")
	b := newBrowser(t, s.base)
	b.run("turn script off", emulation.SetScriptExecutionDisabled(true))

	b.signIn("admin", browserAdminPassword, "/deposit")
	title := "Deposited without script"
	b.run("type the title", chromedp.SendKeys("#value-0", title, chromedp.ByQuery))
	var paths []string
	for _, sc := range scans {
		paths = append(paths, sc.path)
	}
	b.setFiles("choose three page images", "#deposit-files", paths)
	if n := b.nodeCount("#uploads li"); n != 0 {
		t.Fatalf("without script, %d files were uploaded ahead of the form", n)
	}
	b.shot("nojs-deposit")
	b.expect("send the deposit with its files", http.StatusOK, chromedp.Click("#deposit-submit", chromedp.ByQuery))
	work := b.workID()
	b.checkHeading(title)
	order := s.children(t, work)
	if len(order) != len(scans) {
		t.Fatalf("the work has %d pages, want %d", len(order), len(scans))
	}
	b.shot("nojs-deposited")

	// the first page down: the form comes back with it moved; then save
	b.open("/works/"+work+"/pages", http.StatusOK)
	b.expect("press the first page's Down button", http.StatusOK,
		chromedp.Click(fmt.Sprintf(`#reorder-list > li[data-id="%s"] button[name="down"]`, order[0]), chromedp.ByQuery))
	want := []string{order[1], order[0], order[2]}
	b.checkListOrder("after Down", want)
	b.shot("nojs-pages-moved")
	b.saveOrder(s, work, want)

	// edit the title
	b.open("/works/"+work+"/edit", http.StatusOK)
	titleInput := "#" + b.titleInput()
	b.run("clear the title", chromedp.Clear(titleInput, chromedp.ByQuery))
	b.run("type the new title", chromedp.SendKeys(titleInput, title+", revised", chromedp.ByQuery))
	b.expect("save the edit", http.StatusOK, chromedp.Click(`#edit-form button[type="submit"]:not(.default-submit):not([name])`, chromedp.ByQuery))
	b.checkHeading(title + ", revised")

	// private
	b.open("/works/"+work+"/access", http.StatusOK)
	b.run("choose private", chromedp.Click("#vis-private", chromedp.ByQuery))
	b.expect("save the visibility", http.StatusOK, chromedp.Click(`main form[action$="/access"] button[type="submit"]`, chromedp.ByQuery))
	var res struct{ Visibility string }
	s.api(t, "GET", "/resources/"+work, nil, http.StatusOK, &res)
	if res.Visibility != "private" {
		t.Errorf("the work is %q, want private", res.Visibility)
	}
	if got := s.children(t, work); !slices.Equal(got, want) {
		t.Errorf("stored order %v, want %v", got, want)
	}
	b.shot("nojs-private")
	b.checkClean("the pages without script")
}
