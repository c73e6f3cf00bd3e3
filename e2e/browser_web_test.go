package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/shelfmark/shelfmark/warc"
)

// The web archive's pages in the page checks of TestBrowser (see
// browserPages): the lookup and domain pages signed out, a capture page
// and the lookup with the link index signed in, on a crawl that is
// ingested into a private collection on first use (so that it changes
// nothing the other checks see).
func init() {
	browserPages = append(browserPages,
		browserPage{template: "web", name: "web", path: fixed("/web?url=" + url.QueryEscape("http://example.org/")), status: http.StatusOK},
		browserPage{template: "web", name: "web-bad-url", path: fixed("/web?url=" + url.QueryEscape("ftp://example.org/")), status: http.StatusBadRequest},
		browserPage{template: "web_domain", name: "web-domain", path: fixed("/web/domains/example.org"), status: http.StatusOK},
		browserPage{template: "web_capture", name: "web-capture", path: fixed("/web"), signedIn: true, status: http.StatusOK,
			prepare: func(b *browser, s *browserServer, _ *browserFixtures) {
				c := webCrawlOf(b.t, s, false)
				if err := b.load(http.StatusOK, chromedp.Navigate(s.base+"/web/captures/"+c.capture)); err != nil {
					b.t.Fatalf("open the capture page: %v", err)
				}
			}},
		browserPage{template: "web", name: "web-signed-in", path: fixed("/web?match=domain&url=example.org"), signedIn: true, status: http.StatusOK},
		browserPage{template: "web_domain", name: "web-domain-signed-in", path: fixed("/web/domains/example.org"), signedIn: true, status: http.StatusOK},
		browserPage{template: "web_file", name: "web-file", path: fixed("/web"), signedIn: true, status: http.StatusOK,
			prepare: func(b *browser, s *browserServer, _ *browserFixtures) {
				c := webCrawlOf(b.t, s, false)
				if err := b.load(http.StatusOK, chromedp.Navigate(s.base+"/web/files/"+c.file)); err != nil {
					b.t.Fatalf("open the WARC file's page: %v", err)
				}
			}},
	)
}

// webBrowserCrawl is a crawl ingested into a server: its collection, its
// work and WARC file, and the id of the home page's first capture.
type webBrowserCrawl struct {
	collection, work, file, capture string
}

// webCrawls holds the crawl of each server (by its address), made once.
var webCrawls struct {
	sync.Mutex
	m map[string]*webBrowserCrawl
}

// webCrawlOf ingests (once per server) a crawl of example.org and
// example.net with `shelfmark ingest` into a collection of its own,
// public or private, and returns it.
func webCrawlOf(t *testing.T, s *browserServer, public bool) *webBrowserCrawl {
	t.Helper()
	webCrawls.Lock()
	defer webCrawls.Unlock()
	if c := webCrawls.m[s.base]; c != nil {
		return c
	}
	vis := "private"
	if public {
		vis = "public"
	}
	var res struct{ ID string }
	s.api(t, "POST", "/collections", map[string]any{"metadata": map[string]any{"dc:title": "Web crawl of example.org"}, "visibility": vis},
		http.StatusCreated, &res)
	c := &webBrowserCrawl{collection: res.ID}
	file := filepath.Join(t.TempDir(), "example-crawl.warc.gz")
	if err := os.WriteFile(file, webBrowserWARC(t), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(s.bin, "ingest", file, "--data", s.data, "--collection", c.collection)
	cmd.Env = cleanEnv(filepath.Dir(s.bin))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("shelfmark ingest %s: %v\n%s", file, err, out)
	}
	var members struct{ Items []struct{ ID string } }
	s.api(t, "GET", "/resources/"+c.collection+"/members", nil, http.StatusOK, &members)
	if len(members.Items) != 1 {
		t.Fatalf("the crawl collection holds %d works, want the WARC file's", len(members.Items))
	}
	c.work = members.Items[0].ID
	s.api(t, "PATCH", "/resources/"+c.work, map[string]any{"visibility": vis}, http.StatusOK, nil)
	var caps struct {
		Captures []struct {
			ID   int64  `json:"id"`
			File string `json:"file"`
		} `json:"captures"`
	}
	s.api(t, "GET", "/web/captures?url="+url.QueryEscape("http://example.org/"), nil, http.StatusOK, &caps)
	if len(caps.Captures) != 2 {
		t.Fatalf("the home page has %d captures, want 2", len(caps.Captures))
	}
	c.capture, c.file = fmt.Sprint(caps.Captures[0].ID), caps.Captures[0].File
	if webCrawls.m == nil {
		webCrawls.m = map[string]*webBrowserCrawl{}
	}
	webCrawls.m[s.base] = c
	return c
}

// webBrowserWARC is the crawl: example.org's home page linking to its
// pages and to example.net, its pages linking back, example.net linking
// to example.org's news, the home page captured again a day later, and
// http://portelwyn-museum.example/visit redirecting (301) to
// https://www.portelwyn-museum.example/visit/, captured just before it
// (two URLs of one index key).
func webBrowserWARC(t *testing.T) []byte {
	t.Helper()
	t0 := time.Date(2024, 3, 15, 9, 30, 0, 0, time.UTC)
	page := func(title string, links ...string) []byte {
		var b strings.Builder
		b.WriteString("<!DOCTYPE html><html><head><title>" + title + "</title></head><body><h1>" + title + "</h1><ul>")
		for _, l := range links {
			b.WriteString(`<li><a href="` + l + `">` + l + `</a></li>`)
		}
		b.WriteString("</ul></body></html>")
		return []byte(b.String())
	}
	var buf bytes.Buffer
	w := warc.NewWriter(&buf, true, "1.1")
	for i, p := range []struct {
		url  string
		at   time.Duration
		body []byte
	}{
		{"http://example.org/", 0, page("Example", "/about", "/news", "/news/2024/elections", "http://example.net/")},
		{"http://example.org/about", time.Minute, page("About", "/", "/news")},
		{"http://example.org/news", 2 * time.Minute, page("News", "/", "/about", "/news/2024/elections")},
		{"http://example.org/news/2024/elections", 3 * time.Minute, page("Elections 2024", "/news", "http://example.net/results")},
		{"http://example.net/", 4 * time.Minute, page("Example network", "http://example.org/news", "/results")},
		{"http://example.net/results", 5 * time.Minute, page("Results", "/", "http://example.org/news/2024/elections")},
		{"http://example.org/", 24 * time.Hour, page("Example", "/about", "/news")},
	} {
		if _, _, err := w.WriteResponse(p.url, t0.Add(p.at), 200, "text/html; charset=utf-8", p.body); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
	}
	// plain text, so that the link index holds none of their links
	if _, _, err := w.WriteResponseHeader(webRedirect, t0.Add(6*time.Minute), 301,
		[][2]string{{"Location", webRedirectTarget}, {"Content-Type", "text/plain"}}, []byte("Moved to "+webRedirectTarget)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := w.WriteResponse(webRedirectTarget, t0.Add(6*time.Minute+time.Second), 200, "text/plain", []byte("Opening hours")); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The redirect of the crawl and where it leads.
const (
	webRedirect       = "http://portelwyn-museum.example/visit"
	webRedirectTarget = "https://www.portelwyn-museum.example/visit/"
)

// TestBrowserWeb drives the web archive pages of a real `shelfmark
// serve`, after `shelfmark ingest` of a generated crawl, by keyboard
// alone: the lookup form is filled and sent, a capture opened from the
// list, its domain's page reached from it; signed in, the top domains
// lead to a domain's top pages and a capture's links in and out. Every
// page passes axe-core's WCAG 2.1 A/AA rules, shows no CSP violation or
// script error, and is photographed (in .build/screenshots/TestBrowserWeb).
func TestBrowserWeb(t *testing.T) {
	chromiumPath(t)
	axe := axeSource(t)
	s := startBrowserServer(t)
	crawl := webCrawlOf(t, s, true)
	b := newBrowser(t, s.base)
	check := func(name string) {
		t.Helper()
		b.shot(name)
		b.axe(name+" ("+b.location()+")", axe)
		b.checkClean(name)
		if n := b.nodeCount("h1"); n != 1 {
			t.Errorf("%s: %d h1 elements", name, n)
		}
	}

	// the navigation leads to the lookup
	b.open("/", http.StatusOK)
	b.tabTo("reach Web archive in the navigation", `header nav a[href="/web"]`, false, 20)
	b.expect("open the web archive with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	check("web-empty")

	// the form, by keyboard: the URL, the match (arrow keys), Enter
	b.tabTo("reach the URL field", "#web-url", false, 30)
	b.typeText("type the URL", "example.org")
	b.press("to the match", []string{"Tab"})
	if f := b.focused(); !strings.HasPrefix(f, "select#web-match") {
		t.Fatalf("Tab from the URL field went to %s, want the match", f)
	}
	b.press("choose domain", []string{"ArrowDown", "ArrowDown", "ArrowDown"})
	var match string
	b.eval("the match chosen", `document.getElementById("web-match").value`, &match)
	if match != "domain" {
		t.Fatalf("the arrow keys chose %q, want domain", match)
	}
	b.press("to the button", []string{"Tab"})
	b.expect("look up with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	if loc := b.location(); !strings.Contains(loc, "match=domain") || !strings.Contains(loc, "url=example.org") {
		t.Errorf("the lookup went to %s", loc)
	}
	if n := b.nodeCount(`table.web-captures a[href^="/web/captures/"]`); n != 5 {
		t.Errorf("the domain lookup lists %d captures, want the 5 of example.org: %s", n, b.text())
	}
	if b.nodeCount("#web-top-h") != 0 {
		t.Error("a signed-out visitor sees the link index's top domains")
	}
	check("web-lookup")

	// a capture from the list, by keyboard
	b.tabTo("reach the first capture", `table.web-captures a[href="/web/captures/`+crawl.capture+`"]`, false, 40)
	b.expect("open the capture with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	txt := b.text()
	for _, want := range []string{"Capture of http://example.org/", "WARC-Target-URI", "WARC-Payload-Digest", "HTTP response (200)", "text/html; charset=utf-8"} {
		if !strings.Contains(txt, want) {
			t.Errorf("the capture page lacks %q: %s", want, txt)
		}
	}
	check("web-capture")
	// its raw record
	var raw string
	b.eval("the raw record's link", `document.querySelector('a[href^="/api/v1/web/record?"]').getAttribute("href")`, &raw)
	status, body, err := do(s.hc, "GET", s.base+raw, "", nil, nil)
	if err != nil || status != http.StatusOK || !strings.Contains(string(body), "<h1>Example</h1>") || !strings.Contains(string(body), "/news/2024/elections") {
		t.Errorf("the raw record %s: %d %v %.200s", raw, status, err, body)
	}
	// its domain, by keyboard
	b.tabTo("reach the domain", `main a[href="/web/domains/example.org"]`, false, 20)
	b.expect("open the domain with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	if n := b.nodeCount(`table.web-captures a[href^="/web/captures/"]`); n != 5 {
		t.Errorf("the domain page lists %d captures, want 5", n)
	}
	check("web-domain")

	// signed in: the link index
	b.signIn("admin", browserAdminPassword, "/web")
	if n := b.nodeCount(`table.web-top a[href^="/web/domains/"]`); n != 2 {
		t.Errorf("the administrator sees %d top domains, want example.org and example.net: %s", n, b.text())
	}
	check("web-top-domains")
	b.tabTo("reach example.org in the top domains", `table.web-top a[href="/web/domains/example.org"]`, false, 40)
	b.expect("open the domain with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	var first string
	b.eval("the page most linked to", `document.querySelector("table.web-top tbody tr td").innerText`, &first)
	if first != "http://example.org/news" {
		// linked from the home page, about, elections and example.net
		t.Errorf("the page of example.org most linked to: %q", first)
	}
	check("web-top-pages")
	// the page most linked to: its captures and its links
	b.tabTo("reach the page most linked to", `table.web-top a[href^="/web?"]`, false, 40)
	b.expect("open its lookup with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	if txt := b.text(); !strings.Contains(txt, "Pages linking here: 4") || b.nodeCount(`table.web-captures a[href^="/web/captures/"]`) != 1 {
		t.Errorf("the lookup of the page most linked to: %s", txt)
	}
	check("web-page-links")
	b.open("/web/captures/"+crawl.capture, http.StatusOK)
	if b.nodeCount("#links-in-h") != 1 || b.nodeCount("#links-out-h") != 1 {
		t.Errorf("the administrator's capture page has no links in and out: %s", b.text())
	}
	check("web-capture-links")

	// a redirect and the page it leads to share a key, and each capture
	// is listed at the URL it was recorded at
	b.open("/web?url="+url.QueryEscape(webRedirect), http.StatusOK)
	var rows []string
	b.eval("the captures listed", `[...document.querySelectorAll("table.web-captures tbody tr")].map(r => r.cells[1].innerText + " " + r.cells[2].innerText)`, &rows)
	if want := []string{webRedirect + " 301", webRedirectTarget + " 200"}; !slices.Equal(rows, want) {
		t.Errorf("the lookup of %s lists %q, want %q", webRedirect, rows, want)
	}
	b.tabTo("reach the redirect's capture", `table.web-captures a[href^="/web/captures/"]`, false, 40)
	b.expect("open it with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	if txt := b.text(); !strings.Contains(txt, "Capture of "+webRedirect) || !strings.Contains(txt, "HTTP response (301)") {
		t.Errorf("the redirect's capture page: %s", txt)
	}
	check("web-capture-redirect")
	// every capture of its URL, by keyboard
	b.tabTo("reach Every capture of this URL", `main a[href^="/web?url="]`, false, 40)
	b.expect("follow it with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	if loc := b.location(); loc != "/web?url="+url.QueryEscape(webRedirect) || b.nodeCount(`table.web-captures a[href^="/web/captures/"]`) != 2 {
		t.Errorf("Every capture of this URL went to %s: %s", loc, b.text())
	}

	// the work the crawl's ingest made: no book, its captures a link away
	b.open("/web/captures/"+crawl.capture, http.StatusOK)
	b.tabTo("reach the work that holds it", `main a[href="/works/`+crawl.work+`"]`, false, 40)
	b.expect("open the work with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	if b.nodeCount(`a[href$="/pages"]`) != 0 || b.nodeCount("#viewer") != 0 || b.nodeCount("#pages-h") != 0 || strings.Contains(b.text(), "Arrange pages") {
		t.Errorf("the page of the crawl's work shows a book's controls: %s", b.text())
	}
	check("web-work")
	b.tabTo("reach the captures of its WARC file", `main a[href="/web/files/`+crawl.file+`"]`, false, 40)
	b.expect("open them with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	if n := b.nodeCount(`table.web-captures a[href^="/web/captures/"]`); n != 9 || !strings.Contains(b.text(), "Captures in example-crawl.warc.gz") {
		t.Errorf("the WARC file's page lists %d captures, want 9: %s", n, b.text())
	}
	check("web-file")
	b.close()

	// signing in from the header comes back to the page, query and all
	from := "/web?match=domain&url=example.org"
	in := newBrowserIn(t, s.base, t.Name()+"-signin")
	in.open(from, http.StatusOK)
	in.tabTo("reach Sign in in the header", `header .account a[href^="/login?"]`, false, 30)
	in.expect("open the sign-in page with Enter", http.StatusOK, chromedp.KeyEvent(kb.Enter))
	in.run("fill the sign-in form",
		chromedp.SendKeys("#login-name", "admin", chromedp.ByQuery),
		chromedp.SendKeys("#login-password", browserAdminPassword+kb.Enter, chromedp.ByQuery))
	in.waitFor("back at the page", `location.pathname === "/web" && document.querySelector('form[action="/logout"]') !== null`, `location.href`, browserStep)
	if loc := in.location(); loc != from {
		t.Errorf("signing in from %s came back to %s", from, loc)
	}
	if n := in.nodeCount(`table.web-captures a[href^="/web/captures/"]`); n != 5 {
		t.Errorf("back at %s after signing in: %d captures, want 5", from, n)
	}
	in.close()

	// in German
	de := newBrowserIn(t, s.base, t.Name()+"-de")
	de.open("/web?lang=de&match=domain&url=example.org", http.StatusOK)
	if !strings.Contains(de.text(), "Aufnahmen") {
		t.Errorf("the German lookup: %s", de.text())
	}
	de.shot("web-lookup-de")
	de.axe("web-lookup-de", axe)
	de.checkClean("web-lookup-de")
}
