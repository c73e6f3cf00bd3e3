package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
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
	)
}

// webBrowserCrawl is a crawl ingested into a server: its collection and
// the id of the home page's first capture.
type webBrowserCrawl struct {
	collection, work, capture string
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
			ID int64 `json:"id"`
		} `json:"captures"`
	}
	s.api(t, "GET", "/web/captures?url="+url.QueryEscape("http://example.org/"), nil, http.StatusOK, &caps)
	if len(caps.Captures) != 2 {
		t.Fatalf("the home page has %d captures, want 2", len(caps.Captures))
	}
	c.capture = fmt.Sprint(caps.Captures[0].ID)
	if webCrawls.m == nil {
		webCrawls.m = map[string]*webBrowserCrawl{}
	}
	webCrawls.m[s.base] = c
	return c
}

// webBrowserWARC is the crawl: example.org's home page linking to its
// pages and to example.net, its pages linking back, example.net linking
// to example.org's news, and the home page captured again a day later.
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
	return buf.Bytes()
}

// TestBrowserWeb drives the web archive pages of a real `shelfmark
// serve`, after `shelfmark ingest` of a generated crawl, by keyboard
// alone: the lookup form is filled and sent, a capture opened from the
// list, its domain's page reached from it; signed in, the top domains
// lead to a domain's top pages and a capture's links in and out. Every
// page passes axe-core's WCAG 2.1 A/AA rules, shows no CSP violation or
// script error, and is photographed (in .build/screenshots/TestBrowserWeb).
func TestBrowserWeb(t *testing.T) {
	if os.Getenv(crashChildEnv) == "1" || os.Getenv(ingestChildEnv) != "" || os.Getenv(cliChildEnv) == "1" {
		t.Skip("running as a child process")
	}
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
	b.close()

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
