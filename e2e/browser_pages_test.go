package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/shelfmark/shelfmark/bench/gen"
)

// browserFixtures are the resources the page checks show, made through
// the REST API, and the files their forms send.
type browserFixtures struct {
	collection, work, fileSet, private, deleted string
	// badManifest is a CSV manifest with a bad row, for the bulk form;
	// dir is where the checks write more.
	badManifest, dir string
}

// rawBody is a request body sent as is, with its media type.
type rawBody struct {
	ctype string
	data  []byte
}

// makeBrowserFixtures makes a public collection with a public work of one
// page image, a private work and a deleted one.
func makeBrowserFixtures(t *testing.T, s *browserServer) *browserFixtures {
	t.Helper()
	var f browserFixtures
	var res struct{ ID string }
	s.api(t, "POST", "/collections", map[string]any{"metadata": map[string]any{"dc:title": "Maps of the Rhine",
		"dc:description": "Printed maps of the river and its towns."}, "visibility": "public"}, http.StatusCreated, &res)
	f.collection = res.ID
	s.api(t, "POST", "/works", map[string]any{"metadata": map[string]any{
		"dc:title": "Atlas of the Rhine", "dc:creator": "Hydrographic Office", "dc:date": "1899",
		"dc:subject": []string{"Rivers", "Maps"}, "dc:language": "en",
		"dc:description": "A river atlas in forty sheets."}, "memberOf": []string{f.collection}, "visibility": "public"},
		http.StatusCreated, &res)
	f.work = res.ID
	s.api(t, "POST", "/filesets", map[string]any{"parent": f.work, "visibility": "public"}, http.StatusCreated, &res)
	f.fileSet = res.ID
	s.api(t, "POST", "/resources/"+f.fileSet+"/files?name=sheet1.png",
		rawBody{"image/png", gen.PageImage(7, 1, strings.Fields("RIVER ATLAS SHEET ONE"))}, http.StatusCreated, nil)
	s.api(t, "POST", "/works", map[string]any{"metadata": map[string]any{"dc:title": "Private notes"}, "visibility": "private"},
		http.StatusCreated, &res)
	f.private = res.ID
	s.api(t, "POST", "/works", map[string]any{"metadata": map[string]any{"dc:title": "Withdrawn work"}, "visibility": "public"},
		http.StatusCreated, &res)
	f.deleted = res.ID
	s.api(t, "DELETE", "/resources/"+f.deleted, nil, http.StatusNoContent, nil)

	f.dir = t.TempDir()
	f.badManifest = filepath.Join(f.dir, "bad.csv")
	if err := os.WriteFile(f.badManifest, []byte("source_identifier,title,creator,file\nb1,First bulk work,Clerk,\nb2,,Clerk,missing.png\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &f
}

// browserPage is one page the accessibility check shows: the template
// it renders, to whom, and the status it answers.
type browserPage struct {
	// template is the file in http/ui/templates (without .html).
	template string
	// name names the screenshot.
	name string
	// path is the page opened first.
	path func(f *browserFixtures) string
	// prepare runs on the page opened, before the buttons are pressed
	// (fills a form, changes the resource behind it).
	prepare func(b *browser, s *browserServer, f *browserFixtures)
	// submit are buttons (CSS selectors) pressed one after another, each
	// loading a page; the last is the page checked.
	submit []string
	// signedIn: shown to the administrator (else to anyone signed out).
	signedIn bool
	// status is the status of the page checked.
	status int
}

// browserEdits numbers the changes the conflict page's check makes, so
// that each is a change.
var browserEdits atomic.Int64

// fixed is a path that needs no fixture.
func fixed(p string) func(*browserFixtures) string { return func(*browserFixtures) string { return p } }

// browserPages are the pages checked, at least one per template. A new
// template needs a row here (testBrowserPages fails without one).
var browserPages = []browserPage{
	// signed out
	{template: "home", name: "home", path: fixed("/"), status: http.StatusOK},
	{template: "collection", name: "collection", path: func(f *browserFixtures) string { return "/collections/" + f.collection }, status: http.StatusOK},
	{template: "work", name: "work", path: func(f *browserFixtures) string { return "/works/" + f.work }, status: http.StatusOK},
	{template: "search", name: "search", path: fixed("/search?q=atlas"), status: http.StatusOK},
	{template: "search", name: "search-empty", path: fixed("/search"), status: http.StatusOK},
	{template: "search", name: "search-no-hits", path: fixed("/search?q=zyxwvu"), status: http.StatusOK},
	{template: "login", name: "login", path: fixed("/login"), status: http.StatusOK},
	{template: "login", name: "login-refused", path: fixed("/login"), status: http.StatusUnauthorized,
		prepare: func(b *browser, _ *browserServer, _ *browserFixtures) {
			b.run("fill the sign-in form", chromedp.SendKeys("#login-name", "admin", chromedp.ByQuery),
				chromedp.SendKeys("#login-password", "not the password", chromedp.ByQuery))
		}, submit: []string{`main form button[type="submit"]`}},
	{template: "error", name: "error-404", path: fixed("/no-such-page"), status: http.StatusNotFound},
	{template: "error", name: "error-404-private", path: func(f *browserFixtures) string { return "/works/" + f.private }, status: http.StatusNotFound},
	{template: "error", name: "error-410", path: func(f *browserFixtures) string { return "/works/" + f.deleted }, status: http.StatusGone},

	// signed in as the administrator
	{template: "home", name: "home-signed-in", path: fixed("/"), signedIn: true, status: http.StatusOK},
	{template: "work", name: "work-signed-in", path: func(f *browserFixtures) string { return "/works/" + f.work }, signedIn: true, status: http.StatusOK},
	{template: "error", name: "error-404-signed-in", path: fixed("/no-such-page"), signedIn: true, status: http.StatusNotFound},
	{template: "deposit", name: "deposit", path: fixed("/deposit"), signedIn: true, status: http.StatusOK},
	{template: "deposit", name: "deposit-refused", path: fixed("/deposit"), signedIn: true, status: http.StatusBadRequest,
		prepare: func(b *browser, _ *browserServer, _ *browserFixtures) {
			// a title of spaces passes the browser's check, not the server's
			b.run("type a blank title", chromedp.SendKeys("#value-0", "   ", chromedp.ByQuery))
		}, submit: []string{"#deposit-submit"}},
	{template: "edit", name: "edit", path: func(f *browserFixtures) string { return "/works/" + f.work + "/edit" }, signedIn: true, status: http.StatusOK},
	{template: "edit", name: "collection-edit", path: func(f *browserFixtures) string { return "/collections/" + f.collection + "/edit" }, signedIn: true, status: http.StatusOK},
	{template: "conflict", name: "conflict", path: func(f *browserFixtures) string { return "/works/" + f.work + "/edit" }, signedIn: true,
		prepare: func(b *browser, s *browserServer, f *browserFixtures) {
			// someone else changes the work while the form is open
			s.api(b.t, "PATCH", "/resources/"+f.work, map[string]any{"add": map[string]any{
				"dc:description": fmt.Sprintf("A note of the cataloguer (%d).", browserEdits.Add(1))}}, http.StatusOK, nil)
		}, submit: []string{`#edit-form button[type="submit"]:not(.default-submit):not([name])`}, status: http.StatusConflict},
	{template: "pages", name: "pages", path: func(f *browserFixtures) string { return "/works/" + f.work + "/pages" }, signedIn: true, status: http.StatusOK},
	{template: "access", name: "access", path: func(f *browserFixtures) string { return "/works/" + f.work + "/access" }, signedIn: true, status: http.StatusOK},
	{template: "history", name: "history-page", path: func(f *browserFixtures) string { return "/works/" + f.work + "/history" }, signedIn: true, status: http.StatusOK},
	{template: "delete", name: "delete", path: func(f *browserFixtures) string { return "/works/" + f.work + "/delete" }, signedIn: true, status: http.StatusOK},
	{template: "collection_new", name: "collection-new", path: fixed("/collections/new"), signedIn: true, status: http.StatusOK},
	{template: "roles", name: "roles", path: func(f *browserFixtures) string { return "/collections/" + f.collection + "/roles" }, signedIn: true, status: http.StatusOK},
	{template: "collection_new", name: "collection-new-sub", path: func(f *browserFixtures) string { return "/collections/new?parent=" + f.collection }, signedIn: true, status: http.StatusOK},
	{template: "bulk", name: "bulk", path: fixed("/bulk"), signedIn: true, status: http.StatusOK},
	{template: "bulkpreview", name: "bulk-preview", path: fixed("/bulk"), signedIn: true, status: http.StatusOK,
		prepare: func(b *browser, _ *browserServer, f *browserFixtures) {
			b.setFiles("choose the manifest", "#bulk-manifest", []string{f.badManifest})
		}, submit: []string{`main form[action="/bulk"] button[type="submit"]`}},
	{template: "bulkrun", name: "bulk-run", path: fixed("/bulk"), signedIn: true, status: http.StatusOK,
		prepare: func(b *browser, _ *browserServer, f *browserFixtures) {
			// works of their own each time: works stored before are skipped
			n := browserEdits.Add(1)
			p := filepath.Join(f.dir, fmt.Sprintf("good-%d.csv", n))
			csv := fmt.Sprintf("source_identifier,title,creator,date\ng%[1]d-1,Ledger of the harbour,Clerk,1901\ng%[1]d-2,Ledger of the quay,Clerk,1902\n", n)
			if err := os.WriteFile(p, []byte(csv), 0o644); err != nil {
				b.t.Fatal(err)
			}
			b.setFiles("choose the manifest", "#bulk-manifest", []string{p})
		}, submit: []string{`main form[action="/bulk"] button[type="submit"]`, `main form[action$="/start"] button[type="submit"]`}},
	{template: "bulk", name: "bulk-with-runs", path: fixed("/bulk"), signedIn: true, status: http.StatusOK},
	{template: "admin", name: "admin", path: fixed("/admin"), signedIn: true, status: http.StatusOK},
	{template: "admin_jobs", name: "admin-jobs", path: fixed("/admin"), signedIn: true, status: http.StatusOK,
		submit: []string{`main a[href^="/admin/jobs/"]`}},
	{template: "admin_users", name: "admin-users", path: fixed("/admin/users"), signedIn: true, status: http.StatusOK},
	{template: "admin_tokens", name: "admin-tokens", path: fixed("/admin/tokens?user=admin"), signedIn: true, status: http.StatusOK},
	{template: "admin_token", name: "admin-token-created", path: fixed("/admin/tokens?user=admin"), signedIn: true, status: http.StatusCreated,
		submit: []string{`main form[action="/admin/tokens"][method="post"] button[type="submit"]`}},
	{template: "admin_audit", name: "admin-audit", path: fixed("/admin/audit"), signedIn: true, status: http.StatusOK},
	{template: "admin_fixity", name: "admin-fixity", path: fixed("/admin/fixity"), signedIn: true, status: http.StatusOK},
	{template: "admin_usage", name: "admin-usage", path: fixed("/admin/usage"), signedIn: true, status: http.StatusOK},
	{template: "workspace", name: "workspace", path: fixed("/workspace"), signedIn: true, status: http.StatusOK},
	{template: "access_requests", name: "access-requests", path: fixed("/access-requests"), signedIn: true, status: http.StatusOK},
	{template: "workspace_run", name: "workspace-run", path: fixed("/workspace"), signedIn: true, status: http.StatusOK,
		prepare: func(b *browser, _ *browserServer, f *browserFixtures) {
			// the public work made public: a change that changes nothing
			b.run("tick the work", chromedp.Click("#ws-id-"+f.work, chromedp.ByQuery))
		}, submit: []string{"#ws-apply"}},
}

// uiTemplates lists the page templates of the interface.
func uiTemplates(t *testing.T) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join("..", "http", "ui", "templates", "*.html"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no templates in http/ui/templates: %v", err)
	}
	var ts []string
	for _, n := range names {
		ts = append(ts, strings.TrimSuffix(filepath.Base(n), ".html"))
	}
	return ts
}

// testBrowserPages shows every page template in chromium and runs
// axe-core's WCAG 2.1 A/AA rules on it; no page may report a
// Content-Security-Policy violation or a script error.
func testBrowserPages(t *testing.T, s *browserServer, axe string) {
	checked := map[string]bool{}
	for _, p := range browserPages {
		checked[p.template] = true
	}
	for _, tpl := range uiTemplates(t) {
		if !checked[tpl] {
			t.Errorf("http/ui/templates/%s.html has no page in browserPages (browser_pages_test.go): add one", tpl)
		}
	}
	f := makeBrowserFixtures(t, s)
	b := newBrowser(t, s.base)

	// the checks themselves: axe-core finds an image without a text
	// alternative, the page reports an inline script its CSP refuses,
	// and the browser the image that is not there
	b.open("/login", http.StatusOK)
	b.checkClean("login")
	b.eval("break the page", `(() => {
  const img = document.createElement("img"); img.src = "/no-such-image.png"; document.querySelector("main").appendChild(img);
  const s = document.createElement("script"); s.textContent = "window.__inlineRan = 1"; document.body.appendChild(s);
  return true })()`, nil)
	var ids []string
	for _, v := range b.axeRun(axe) {
		ids = append(ids, v.ID)
	}
	if !slices.Contains(ids, "image-alt") {
		t.Errorf("axe-core did not find an image without alt: %v", ids)
	}
	b.waitFor("the CSP refusal reported", `window.__cspViolations.length > 0`, `window.__cspViolations`, browserStep)
	var ran bool
	b.eval("inline script", `window.__inlineRan === 1`, &ran)
	// the browser's own report (kept across pages) has it too
	deadline := time.Now().Add(browserStep)
	for !b.reported("Content Security Policy") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	for !b.reported("no-such-image.png answered 404") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if problems := b.takeProblems(); ran || len(problems) < 3 {
		t.Errorf("an inline script ran (%v), or its refusal was not reported by both the page and the browser, or the missing image not at all: %v", ran, problems)
	}
	// ... and the Tab walk sees a control whose focus is not drawn
	b.open("/login", http.StatusOK)
	b.eval("hide a focus", `(() => { const e = document.getElementById("login-name");
  e.style.setProperty("outline", "none", "important"); e.style.setProperty("box-shadow", "none", "important"); return true })()`, nil)
	if stops, unseen := b.tabWalk(150); len(unseen) != 1 || !strings.Contains(unseen[0], "#login-name") {
		t.Errorf("the Tab walk over %v found %v without a drawn focus, want the name field only", stops, unseen)
	}
	b.checkClean("login")

	// every page in English, then in each other language (German's
	// longer words, French and Spanish: the layout must hold them too)
	stops := checkBrowserPages(t, b, s, f, axe, "en")
	rules := b.axeRules
	b.close()
	others := []string{"de", "fr", "es"}
	for _, lang := range others {
		o := newBrowserIn(t, s.base, t.Name()+"-"+lang)
		o.open("/?lang="+lang, http.StatusOK)
		stops += checkBrowserPages(t, o, s, f, axe, lang)
		rules += o.axeRules
		o.close()
	}
	t.Logf("checked %d pages of %d templates in English and %s (axe-core: %d rule passes in all; %d Tab stops with their focus drawn); screenshots in %s",
		len(browserPages), len(checked), strings.Join(others, ", "), rules, stops, strings.Join(b.shots, ", "))
}

// checkBrowserPages shows browserPages in the browser, signed out first,
// then signed in, in the language lang the browser has chosen already,
// and checks each; it returns the Tab stops it walked.
func checkBrowserPages(t *testing.T, b *browser, s *browserServer, f *browserFixtures, axe, lang string) int {
	t.Helper()
	pages := slices.Clone(browserPages)
	// signed out first, then signed in
	slices.SortStableFunc(pages, func(a, c browserPage) int {
		switch {
		case a.signedIn == c.signedIn:
			return 0
		case a.signedIn:
			return 1
		}
		return -1
	})
	signedIn, tabStops := false, 0
	for _, p := range pages {
		if p.signedIn && !signedIn {
			b.signIn("admin", browserAdminPassword, "/login")
			signedIn = true
		}
		path := p.path(f)
		status := p.status
		if len(p.submit) > 0 {
			status = http.StatusOK
		}
		if err := b.load(status, chromedp.Navigate(s.base+path)); err != nil {
			t.Errorf("%s: open %s: %v", p.name, path, err)
			continue
		}
		if p.prepare != nil {
			p.prepare(b, s, f)
		}
		failed := false
		for i, sel := range p.submit {
			status := http.StatusOK
			if i == len(p.submit)-1 {
				status = p.status
			}
			if err := b.load(status, chromedp.Click(sel, chromedp.ByQuery)); err != nil {
				t.Errorf("%s: press %s on %s: %v", p.name, sel, b.location(), err)
				failed = true
				break
			}
			path = b.location()
		}
		if failed {
			continue
		}
		var htmlLang string
		b.eval("the page's language", `document.documentElement.lang`, &htmlLang)
		if htmlLang != lang {
			t.Errorf("%s (%s): the page is in %q, want %q", p.name, path, htmlLang, lang)
		}
		if lang == "en" {
			b.shot(p.name)
		} else {
			b.shot(p.name + "-" + lang)
		}
		b.axe(p.name+" ("+lang+", "+path+")", axe)
		// at 320 CSS pixels nothing but a data table is wider than the
		// window
		if sw, out := b.reflow(); len(out) > 0 {
			t.Errorf("%s (%s): at 320 px wide the page is %d px wide; sticking out: %v", p.name, path, sw, out)
		}
		// every control is reached by Tab, and shows it has the focus
		stops, unseen := b.tabWalk(150)
		tabStops += len(stops)
		if len(stops) == 0 {
			t.Errorf("%s (%s): Tab reaches no control", p.name, path)
		}
		for _, u := range unseen {
			t.Errorf("%s (%s): the keyboard focus on %s is not drawn (no outline or box shadow)", p.name, path, u)
		}
		b.checkClean(p.name + " (" + path + ")")
		var h1 int
		if h1 = b.nodeCount("h1"); h1 != 1 {
			t.Errorf("%s (%s): %d h1 elements, want 1", p.name, path, h1)
		}
	}
	return tabStops
}
