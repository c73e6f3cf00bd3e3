package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/shelfmark/shelfmark/bench/gen"
	shttp "github.com/shelfmark/shelfmark/http"
)

// browserBackground bounds waiting for the background jobs
// (identification, thumbnails, OCR) on a busy machine: OCR runs at idle
// priority.
const browserBackground = 8 * time.Minute

// browserScan is a page image of the flow: its file and the words drawn
// on it (words tesseract reads reliably from the generator's font; see
// worker/ocr_test.go).
type browserScan struct {
	path  string
	words []string
}

// browserScans writes three page images, each with words of its own.
func browserScans(t *testing.T, prefix string) []browserScan {
	t.Helper()
	dir := t.TempDir()
	sets := [][]string{
		strings.Fields("APPARATUS CATALOGUE SHELF"),
		strings.Fields("PROCESSOR MEMORY CIRCUIT"),
		strings.Fields("ROLLER SHAFT PLATE"),
	}
	var out []browserScan
	for i, words := range sets {
		p := filepath.Join(dir, fmt.Sprintf("%s-%d.png", prefix, i+1))
		if err := os.WriteFile(p, gen.PageImage(11, i+1, words), 0o644); err != nil {
			t.Fatal(err)
		}
		out = append(out, browserScan{path: p, words: words})
	}
	return out
}

// children are the ids of a work's file sets in their order, read with
// the REST API.
func (s *browserServer) children(t *testing.T, work string) []string {
	t.Helper()
	var page struct {
		Items []struct{ ID string }
	}
	s.api(t, "GET", "/resources/"+work+"/children", nil, http.StatusOK, &page)
	var ids []string
	for _, it := range page.Items {
		ids = append(ids, it.ID)
	}
	return ids
}

// workID reads the work's id from the address of its page.
func (b *browser) workID() string {
	b.t.Helper()
	loc := b.location()
	u, err := url.Parse(loc)
	if err != nil || !strings.HasPrefix(u.Path, "/works/") || strings.Count(u.Path, "/") != 2 {
		b.t.Fatalf("not a work page: %s", loc)
	}
	return strings.TrimPrefix(u.Path, "/works/")
}

// testBrowserFlow is a user's afternoon with the web interface: sign in,
// deposit a work of three page images, see them identified and
// thumbnailed, reorder them by dragging and by keyboard, change the
// title, find the work by a word the OCR read on a page, open it, make it
// private, sign out, and no longer find it.
func testBrowserFlow(t *testing.T, s *browserServer) {
	scans := browserScans(t, "scan")
	b := newBrowser(t, s.base)

	b.signIn("admin", browserAdminPassword, "/deposit")
	b.shot("flow-deposit")
	b.checkClean("the deposit page")
	// the session and the form key are HttpOnly: no script of the page
	// reads them
	var cookies string
	b.eval("the page's cookies", `document.cookie`, &cookies)
	if strings.Contains(cookies, shttp.SessionCookie) || strings.Contains(cookies, "csrf") {
		t.Errorf("a script of the page reads the cookies %q", cookies)
	}

	// deposit: a title, three files chosen, sent
	title := "Survey of the lower river"
	b.run("type the title", chromedp.SendKeys("#value-0", title, chromedp.ByQuery))
	var paths []string
	for _, sc := range scans {
		paths = append(paths, sc.path)
	}
	b.setFiles("choose three page images", "#deposit-files", paths)
	b.waitUploads(len(scans))
	b.shot("flow-deposit-files")
	b.expect("send the deposit", http.StatusOK, chromedp.Click("#deposit-submit", chromedp.ByQuery))
	work := b.workID()
	b.shot("flow-deposited")
	b.checkClean("the new work's page")
	order := s.children(t, work)
	if len(order) != len(scans) {
		t.Fatalf("the work has %d pages, want %d", len(order), len(scans))
	}

	b.waitDerived(len(scans))
	b.shot("flow-identified-thumbnailed")

	// reorder: drag the third page to the top, then move the (new) last
	// page up by keyboard
	b.open("/works/"+work+"/pages", http.StatusOK)
	b.shot("flow-pages")
	b.drag("drag the third page to the top", "#reorder-list > li:nth-child(3)", "#reorder-list > li:nth-child(1)")
	b.shot("flow-pages-dragged")
	want := []string{order[2], order[0], order[1]}
	b.checkListOrder("after dragging", want)
	b.saveOrder(s, work, want)
	b.shot("flow-pages-saved")

	b.open("/works/"+work+"/pages", http.StatusOK)
	b.run("focus the last page", chromedp.Focus("#reorder-list > li:nth-child(3)", chromedp.ByQuery))
	b.keyboardMove("move the last page up", -1)
	want = []string{order[2], order[1], order[0]}
	b.checkListOrder("after the keyboard move", want)
	b.shot("flow-pages-keyboard")
	b.saveOrder(s, work, want)

	// edit the title
	b.open("/works/"+work+"/edit", http.StatusOK)
	b.shot("flow-edit")
	newTitle := "Survey of the lower river, revised"
	titleInput := "#" + b.titleInput()
	b.eval("select the old title", fmt.Sprintf(`document.querySelector(%q).select(); true`, titleInput), nil)
	b.run("type the new title over it", chromedp.SendKeys(titleInput, newTitle, chromedp.ByQuery))
	b.expect("save the edit", http.StatusOK, chromedp.Click(`#edit-form button[type="submit"]:not(.default-submit):not([name])`, chromedp.ByQuery))
	if got := b.workID(); got != work {
		t.Fatalf("after the edit: the page of %s, want %s", got, work)
	}
	b.checkHeading(newTitle)
	b.shot("flow-edited")

	// find it by a word of its second page's text (read by OCR)
	word := strings.ToLower(scans[1].words[0])
	b.searchUntil(word, work, true)
	b.shot("flow-search")
	// the hit is the work, once, found on its second page: the page's
	// number links to that page, searching the book for the word
	if n := b.nodeCount(fmt.Sprintf(`main h3 a[href="/works/%s"]`, work)); n != 1 {
		t.Errorf("the work is listed %d times", n)
	}
	pageLink := fmt.Sprintf(`main .found-pages a[href^="/works/%s?page=%s&q="]`, work, order[1])
	var number string
	b.eval("the page's number", fmt.Sprintf(`(document.querySelector(%q) || {}).textContent || ""`, pageLink), &number)
	if strings.TrimSpace(number) != "2" {
		t.Errorf("the hit does not list page 2 (%s) by its number: %q\n%.600s", order[1], number, b.text())
	}
	b.expect("open the page the word was found on", http.StatusOK, chromedp.Click(pageLink, chromedp.ByQuery))
	if got := b.workID(); got != work {
		t.Fatalf("the hit opened %s, want %s", got, work)
	}
	var loc string
	b.eval("the address", `window.location.search`, &loc)
	if !strings.Contains(loc, "q="+url.QueryEscape(word)) {
		t.Errorf("the page opened at %s, without the search's words", loc)
	}
	b.checkHeading(newTitle)
	b.shot("flow-opened")
	b.workPageTools(t, s, work, newTitle)

	// make it private
	b.open("/works/"+work+"/access", http.StatusOK)
	b.run("choose private", chromedp.Click("#vis-private", chromedp.ByQuery))
	b.shot("flow-access")
	b.expect("save the visibility", http.StatusOK, chromedp.Click(`main form[action$="/access"] button[type="submit"]`, chromedp.ByQuery))
	b.shot("flow-private")
	var res struct{ Visibility string }
	s.api(t, "GET", "/resources/"+work, nil, http.StatusOK, &res)
	if res.Visibility != "private" {
		t.Fatalf("the work is %q, want private", res.Visibility)
	}

	// sign out and no longer find it
	b.expect("sign out", http.StatusOK, chromedp.Click(`form[action="/logout"] button`, chromedp.ByQuery))
	if b.nodeCount(`form[action="/logout"]`) != 0 {
		t.Fatal("still signed in after signing out")
	}
	b.searchUntil(word, work, false)
	b.shot("flow-signed-out-search")
	b.open("/works/"+work, http.StatusNotFound)
	b.checkClean("the last pages")
}

// workPageTools checks the work page as staff and as a reader see it:
// staff get the files' checksums folded under Technical, opened from the
// keyboard; a reader (another browser, signed out) gets the breadcrumbs,
// the viewer before the description, the whole work as a PDF, the IIIF
// manifest's link, no checksums, and a Share button that copies the
// work's address (from the keyboard), axe clean, on a phone too.
func (b *browser) workPageTools(t *testing.T, s *browserServer, work, title string) {
	t.Helper()
	var open bool
	b.eval("the technical view folded", `document.querySelector("details.technical").open`, &open)
	if open {
		t.Error("the technical view of the files is open when the page loads")
	}
	b.tabTo("to the technical view", "details.technical > summary", false, 80)
	b.press("open it with Enter", []string{"Enter"})
	b.eval("the technical view open", `document.querySelector("details.technical").open && document.querySelector("details.technical code.sha") !== null`, &open)
	if !open {
		t.Error("Enter on Technical does not show the files' checksums")
	}
	b.shot("flow-technical")

	r := newBrowserIn(t, s.base, t.Name()+"-reader")
	defer r.close()
	r.run("let the page write to the clipboard", cdpbrowser.GrantPermissions([]cdpbrowser.PermissionType{
		cdpbrowser.PermissionTypeClipboardReadWrite, cdpbrowser.PermissionTypeClipboardSanitizedWrite}).WithOrigin(s.base))
	r.open("/works/"+work, http.StatusOK)
	var page struct {
		Crumb        string
		ViewerFirst  bool
		PDF, IIIF    string
		Technical    int
		ShareVisible bool
	}
	r.eval("the reader's work page", `({
  crumb: (document.querySelector('nav.breadcrumbs a[aria-current="page"]') || {}).textContent || "",
  viewerFirst: !!(document.getElementById("viewer") && document.getElementById("meta-h") &&
    (document.getElementById("viewer").compareDocumentPosition(document.getElementById("meta-h")) & Node.DOCUMENT_POSITION_FOLLOWING)),
  pdf: (document.querySelector(".work-tools a[download]") || {}).href || "",
  iiif: (document.querySelector(".work-tools a.iiif") || {}).href || "",
  technical: document.querySelectorAll("details.technical, code.sha").length,
  shareVisible: !document.getElementById("work-share").hidden,
})`, &page)
	if page.Crumb != title || !page.ViewerFirst || page.Technical != 0 || !page.ShareVisible || !strings.HasSuffix(page.IIIF, "/iiif/"+work+"/manifest") {
		t.Errorf("the reader's work page: %+v", page)
	}
	status, pdf, err := do(s.hc, "GET", page.PDF, "", nil, nil)
	if err != nil || status != http.StatusOK || !strings.HasPrefix(string(pdf), "%PDF-") {
		t.Errorf("Download PDF (%s): %d %v %.20q", page.PDF, status, err, pdf)
	}
	r.shot("flow-reader")
	r.checkClean("the reader's work page")
	axe := axeSource(t)
	r.axe("the reader's work page", axe)
	r.tabTo("to Share", "#work-share", false, 80)
	r.press("share with Enter", []string{"Enter"})
	r.waitFor("the copy said", `document.getElementById("share-status").textContent.includes("copied")`,
		`document.getElementById("share-status").textContent`, browserStep)
	var copied string
	r.eval("the clipboard", `navigator.clipboard.readText()`, &copied)
	if copied != s.base+"/works/"+work {
		t.Errorf("Share copied %q, want the work's address", copied)
	}
	if sw, over := r.reflow(); len(over) > 0 {
		t.Errorf("at 320 px the reader's work page is %d px wide: %v", sw, over)
	}
	r.run("a phone's window", chromedp.EmulateViewport(375, 800))
	r.open("/works/"+work, http.StatusOK)
	r.shot("flow-reader-phone")
	r.axe("the reader's work page on a phone", axe)
}

// titleInput is the id of the value input of the form's first title row.
func (b *browser) titleInput() string {
	b.t.Helper()
	var id string
	b.eval("find the title row", `(() => { for (const li of document.querySelectorAll("li.meta-row")) {
  if (li.querySelector("select").value.endsWith("/title")) return li.querySelector('input[name="value"]').id } return "" })()`, &id)
	if id == "" {
		b.t.Fatal("the form has no title row")
	}
	return id
}

// waitUploads waits until the deposit form holds n files: with script,
// each chosen file is sent at once and the form names its stored bytes.
func (b *browser) waitUploads(n int) {
	b.t.Helper()
	b.waitFor("the files uploaded", fmt.Sprintf(`document.querySelectorAll('#deposit-form input[name="file_sha256"]').length === %d`, n),
		`document.querySelector("#deposit-form").innerText`, browserBackground)
}

// waitDerived reloads the work page until each of its n pages has a
// format name (identification) and a loaded thumbnail (derivatives).
func (b *browser) waitDerived(n int) {
	b.t.Helper()
	b.reloadUntil("the pages identified",
		// textContent: for staff the files' table is folded under Technical
		fmt.Sprintf(`(document.querySelector("main").textContent.match(/Portable Network Graphics/g) || []).length >= %d`, n),
		`document.querySelector("main").innerText`, browserBackground)
	// a page's thumbnail is an img once the derivative exists (a
	// placeholder before); it loads lazily, as it scrolls into view
	thumbs := `Array.from(document.querySelectorAll('main ol.pages > li img'))`
	b.reloadUntil("the pages thumbnailed", fmt.Sprintf(`%s.length >= %d`, thumbs, n),
		`document.querySelector("main").innerText`, browserBackground)
	b.waitFor("the thumbnails loaded", fmt.Sprintf(`(() => { const imgs = %s; imgs.forEach(i => i.scrollIntoView());
  return imgs.filter(i => i.complete && i.naturalWidth > 0).length >= %d })()`, thumbs, n),
		thumbs+`.map(i => i.src + " " + i.complete + " " + i.naturalWidth)`, browserStep)
	b.run("back to the top", chromedp.Evaluate(`window.scrollTo(0, 0)`, nil))
}

// checkListOrder waits until the reorder list shows the pages in want's
// order.
func (b *browser) checkListOrder(what string, want []string) {
	b.t.Helper()
	list := `Array.from(document.querySelectorAll("#reorder-list > li")).map(li => li.dataset.id)`
	b.waitFor(what, fmt.Sprintf(`%s.join(" ") === %q`, list, strings.Join(want, " ")), list, browserStep)
}

// saveOrder sends the reorder form and checks the stored order.
func (b *browser) saveOrder(s *browserServer, work string, want []string) {
	b.t.Helper()
	b.expect("save the order", http.StatusOK, chromedp.Click(`#order-form button[name="save"]:not(.default-submit)`, chromedp.ByQuery))
	if got := s.children(b.t, work); !slices.Equal(got, want) {
		b.t.Fatalf("stored order %v, want %v", got, want)
	}
}

// keyboardMove moves the focused page of the reorder list by dir places
// with the keyboard (Alt+Arrow, the list's own keys).
func (b *browser) keyboardMove(what string, dir int) {
	b.t.Helper()
	key := "ArrowDown"
	if dir < 0 {
		key = "ArrowUp"
	}
	b.press(what, []string{key}, "Alt")
}

// checkHeading checks the page's h1 is want.
func (b *browser) checkHeading(want string) {
	b.t.Helper()
	var h string
	b.eval("the heading", `document.querySelector("h1").innerText`, &h)
	if strings.TrimSpace(h) != want {
		b.t.Fatalf("heading %q, want %q", h, want)
	}
}

// searchUntil searches for word until the work is among the hits (found)
// or is not (!found); the search index follows the background jobs.
func (b *browser) searchUntil(word, work string, found bool) {
	b.t.Helper()
	sel := fmt.Sprintf(`main a[href^="/works/%s"]`, work)
	cond := fmt.Sprintf(`document.querySelector(%q) !== null`, sel)
	if !found {
		cond = "!(" + cond + ")"
	}
	b.open("/search?q="+url.QueryEscape(word), http.StatusOK)
	b.reloadUntil(fmt.Sprintf("search %q finds %s: %v", word, work, found), cond,
		`document.querySelector("main").innerText`, browserBackground)
}

// drag drags the element from onto the element to with the mouse, as a
// user does: press, move in steps, release. HTML drag and drop (which
// SortableJS uses in Chromium) is intercepted and sent as drag events.
func (b *browser) drag(what, from, to string) {
	b.t.Helper()
	// both points are measured in the same scroll position: "nearest"
	// scrolls only an element out of view (centering each in turn moved
	// the page between the two, and on a page taller than the window
	// both came out at its middle, so nothing was dragged)
	center := func(sel string) (float64, float64) {
		var xy []float64
		b.eval("where is "+sel, fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.scrollIntoView({block: "nearest"});
  const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2] })()`, sel), &xy)
		if len(xy) != 2 {
			b.t.Fatalf("%s: no %s", what, sel)
		}
		return xy[0], xy[1]
	}
	x0, y0 := center(from)
	x1, y1 := center(to)
	// a little above the target's middle, so that the dragged element
	// goes before it
	y1 -= 4
	ctx, cancel := context.WithTimeout(b.ctx, browserStep)
	defer cancel()
	intercepted := make(chan *input.DragData, 1)
	chromedp.ListenTarget(ctx, func(ev any) {
		if ev, ok := ev.(*input.EventDragIntercepted); ok {
			select {
			case intercepted <- ev.Data:
			default:
			}
		}
	})
	b.eval("watch for a drag", `window.__dragStarted = false;
document.addEventListener("dragstart", () => { window.__dragStarted = true }, {capture: true, once: true}); true`, nil)
	err := chromedp.Run(ctx, input.SetInterceptDrags(true),
		chromedp.MouseEvent(input.MouseMoved, x0, y0),
		chromedp.MouseEvent(input.MousePressed, x0, y0, chromedp.ButtonLeft, chromedp.ClickCount(1)))
	for i := 1; err == nil && i <= 10; i++ {
		x, y := x0+(x1-x0)*float64(i)/10, y0+(y1-y0)*float64(i)/10
		err = chromedp.Run(ctx, chromedp.MouseEvent(input.MouseMoved, x, y, chromedp.ButtonLeft))
	}
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
	// an HTML drag started in the page reaches the test as an
	// intercepted drag; without one (a drag done with mouse events) the
	// release below drops
	var data *input.DragData
	var started bool
	b.eval("did a drag start", `window.__dragStarted`, &started)
	if started {
		select {
		case data = <-intercepted:
		case <-ctx.Done():
			b.t.Fatalf("%s: the drag started but was not intercepted", what)
		}
		b.t.Logf("%s: an HTML drag, dropped with drag events", what)
	} else {
		b.t.Logf("%s: no HTML drag started; the mouse is released on the target", what)
	}
	if data != nil {
		err = chromedp.Run(ctx,
			input.DispatchDragEvent(input.DragEnter, x1, y1, data),
			input.DispatchDragEvent(input.DragOver, x1, y1, data),
			input.DispatchDragEvent(input.DragOver, x1, y1-1, data),
			input.DispatchDragEvent(input.Drop, x1, y1-1, data))
	}
	if err == nil {
		err = chromedp.Run(ctx, chromedp.MouseEvent(input.MouseReleased, x1, y1, chromedp.ButtonLeft, chromedp.ClickCount(1)),
			input.SetInterceptDrags(false))
	}
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// testBrowserKeyboard signs in, deposits a work of three page images and
// reorders its pages with key presses alone (Tab, Shift+Tab, Enter,
// Space, arrows, typing): no mouse event is sent. The file dialog the
// file input opens on Space is answered by the test, as a user picks
// files in it.
func testBrowserKeyboard(t *testing.T, s *browserServer) {
	scans := browserScans(t, "keys")
	b := newBrowser(t, s.base)

	// the first Tab reaches the link that skips to the content, and
	// Enter on it puts the focus there
	b.open("/login?next=%2Fdeposit", http.StatusOK)
	b.press("the first Tab", []string{"Tab"})
	var skip bool
	b.eval("the skip link", `document.activeElement.matches('a[href="#main"]')`, &skip)
	if !skip {
		t.Errorf("the first Tab focuses %s, not the skip link", b.focused())
	} else {
		b.press("skip to the content", []string{"Enter"})
		b.waitFor("the focus in the content", `document.activeElement === document.getElementById("main")`,
			`document.activeElement.outerHTML.slice(0, 200)`, browserStep)
	}

	// sign in
	b.tabTo("sign in", "#login-name", false, 40)
	b.typeText("type the name", "admin")
	b.press("to the password", []string{"Tab"})
	b.typeText("type the password", browserAdminPassword)
	b.expect("sign in with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	if got := b.location(); got != "/deposit" {
		t.Fatalf("signed in at %s, want /deposit", got)
	}
	b.shot("keys-deposit")

	// the deposit form: title, files, a visibility, send
	title := "Keyboard deposit"
	b.tabTo("to the title", "#value-0", false, 60)
	b.typeText("type the title", title)
	// a repeated field: a row more (its value input takes the focus)
	rows := b.nodeCount("li.meta-row")
	b.tabTo("to the add-a-field button", "button[data-add-row]", false, 60)
	b.press("add a field with Enter", []string{"Enter"})
	b.waitFor("a row added", fmt.Sprintf(`document.querySelectorAll("li.meta-row").length === %d &&
  document.activeElement === document.querySelector("li.meta-row:last-child input[name=value]")`, rows+1),
		`document.activeElement.outerHTML`, browserStep)
	b.typeText("type a second subject", "Keyboards")
	b.tabTo("to the files", "#deposit-files", false, 60)
	var paths []string
	for _, sc := range scans {
		paths = append(paths, sc.path)
	}
	b.chooseFiles("open the file dialog with Space", paths, " ")
	b.waitUploads(len(scans))
	b.tabTo("back to the visibility", "#vis-public", true, 60)
	b.press("choose private with an arrow", []string{"ArrowDown", "ArrowDown"})
	var vis string
	b.eval("the visibility chosen", `document.querySelector('input[name="visibility"]:checked').value`, &vis)
	if vis != "private" {
		t.Fatalf("two ArrowDown presses chose %q, want private", vis)
	}
	b.shot("keys-deposit-filled")
	b.tabTo("to the deposit button", "#deposit-submit", false, 60)
	b.expect("deposit with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	work := b.workID()
	order := s.children(t, work)
	if len(order) != len(scans) {
		t.Fatalf("the work has %d pages, want %d", len(order), len(scans))
	}
	var res struct{ Visibility string }
	s.api(t, "GET", "/resources/"+work, nil, http.StatusOK, &res)
	if res.Visibility != "private" {
		t.Errorf("the work is %q, want private", res.Visibility)
	}
	if text := b.text(); !strings.Contains(text, title) || !strings.Contains(text, "Keyboards") {
		t.Errorf("the work page lacks the title or the added subject: %.800s", text)
	}
	b.shot("keys-deposited")

	// reorder: to the reorder page by its link, the first page down with
	// the list's keys, then the new last page up with its Up button
	// (Space), then save (Enter)
	b.tabTo("to the reorder link", fmt.Sprintf(`main a[href="/works/%s/pages"]`, work), false, 60)
	b.expect("follow the link with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	b.tabTo("to the first page", "#reorder-list > li:nth-child(1)", false, 60)
	b.keyboardMove("move the first page down", +1)
	b.checkListOrder("after a keyboard move down", []string{order[1], order[0], order[2]})
	if f := b.focused(); !strings.Contains(f, "li") {
		t.Errorf("after the move the focus is on %s, not on the page moved", f)
	}
	b.shot("keys-pages-moved")
	b.tabTo("to the last page's Up button", fmt.Sprintf(`#reorder-list > li[data-id="%s"] button[data-move="-1"]`, order[2]), false, 60)
	b.press("press Up with Space", []string{" "})
	want := []string{order[1], order[2], order[0]}
	b.checkListOrder("after the Up button", want)
	b.tabTo("to the save button", `#order-form button[name="save"]:not(.default-submit)`, false, 60)
	b.expect("save with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	if got := s.children(t, work); !slices.Equal(got, want) {
		t.Fatalf("stored order %v, want %v", got, want)
	}
	b.shot("keys-pages-saved")
	b.checkClean("the keyboard flow")
}
