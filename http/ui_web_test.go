package http

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/warc"
)

// webWideCrawl writes a WARC of n pages of host, each linking to the
// home page and to the next page.
func webWideCrawl(t testing.TB, host string, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := warc.NewWriter(&buf, true, "1.1")
	for i := range n {
		body := fmt.Sprintf(`<html><body><a href="/">home</a> <a href="/p%d">next</a></body></html>`, i+1)
		if _, _, err := w.WriteResponse(fmt.Sprintf("http://%s/p%d", host, i), webT0.Add(time.Duration(i)*time.Second), 200, "text/html", []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

var webCaptureLink = regexp.MustCompile(`href="/web/captures/([0-9]+)"`)

// TestUIWebPages: the lookup page lists the captures a URL matches a page
// at a time and, to readers of the link index, the domains most linked
// to; the domain page its captures and top pages; the capture page its
// fields, headers and links; a private crawl's captures are hidden from
// signed-out visitors; a bad URL is a 400 page saying why.
func TestUIWebPages(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		e.webIngest("example.org", shelfmark.Public, "")
		e.webIngest("example.com", shelfmark.Private, "")
		e.webIndexWARC(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Public}, nil, "wide.warc.gz", webWideCrawl(t, "wide.example.net", 60))
		anon := newVisitor(t, e.testEnv)
		admin := newVisitor(t, e.testEnv)
		admin.signIn("admin", adminPassword)

		// the form alone, in the navigation
		p := anon.get("/web")
		if p.Status != http.StatusOK || !strings.Contains(p.Body, `<form class="web-lookup stack" method="get" action="/web"`) ||
			!strings.Contains(p.Body, `<a href="/web" aria-current="page">Web archive</a>`) {
			t.Fatalf("/web: %d %s", p.Status, p.Body)
		}
		if strings.Contains(p.Body, "web-top-h") {
			t.Error("a signed-out visitor sees the top domains of the link index")
		}
		// a lookup
		p = anon.get("/web?url=" + url.QueryEscape("http://example.org/a"))
		if ids := webCaptureLink.FindAllStringSubmatch(p.Body, -1); p.Status != http.StatusOK || len(ids) != 2 {
			t.Fatalf("lookup of /a: %d, %d capture links: %s", p.Status, len(ids), p.Body)
		}
		if !strings.Contains(p.Body, `<option value="exact">This URL only</option>`) {
			t.Error("the match select")
		}
		// the private crawl: nothing for a signed-out visitor, all for the admin
		q := "/web?match=domain&url=" + url.QueryEscape("http://example.com/")
		if p = anon.get(q); len(webCaptureLink.FindAllString(p.Body, -1)) != 0 || !strings.Contains(p.Body, "No capture you can see matches.") {
			t.Errorf("a signed-out visitor's lookup of the private crawl: %s", p.Body)
		}
		p = admin.get(q)
		privIDs := webCaptureLink.FindAllStringSubmatch(p.Body, -1)
		if len(privIDs) != 5 {
			t.Fatalf("the admin's lookup of the private crawl lists %d captures, want 5", len(privIDs))
		}
		if p = anon.get("/web/captures/" + privIDs[0][1]); p.Status != http.StatusNotFound {
			t.Errorf("a signed-out visitor's page of a private capture: %d", p.Status)
		}

		// pages of 50, keyset: the next page lists the other 10
		q = "/web?match=domain&url=" + url.QueryEscape("http://wide.example.net/")
		p = anon.get(q)
		first := webCaptureLink.FindAllStringSubmatch(p.Body, -1)
		next := regexp.MustCompile(`<a href="([^"]*)" rel="next">`).FindStringSubmatch(p.Body)
		if len(first) != webUIPage || next == nil {
			t.Fatalf("first page: %d captures, next %v", len(first), next)
		}
		p2 := anon.get(html.UnescapeString(next[1]))
		second := webCaptureLink.FindAllStringSubmatch(p2.Body, -1)
		if len(second) != 10 || strings.Contains(p2.Body, `rel="next"`) || !strings.Contains(p2.Body, ">First page</a>") {
			t.Errorf("second page: %d captures: %s", len(second), p2.Body)
		}
		// the cost of a page: the same statements for 5 captures as for 60
		small := e.do("GET", "/web?match=domain&url="+url.QueryEscape("http://example.org/"), nil, as("", "Accept", "text/html")...).want(t, http.StatusOK)
		wide := e.do("GET", q, nil, as("", "Accept", "text/html")...).want(t, http.StatusOK)
		if len(small.Stmts) != len(wide.Stmts) {
			t.Errorf("a lookup page of 5 captures ran %d statements, one of 50 (of 60) %d:\n%q\n%q", len(small.Stmts), len(wide.Stmts), small.Stmts, wide.Stmts)
		}

		// a bad URL: the form again, with what is wrong, 400
		p = anon.get("/web?url=" + url.QueryEscape("ftp://example.org/"))
		if p.Status != http.StatusBadRequest || !strings.Contains(p.Body, `aria-invalid="true"`) || !strings.Contains(p.Body, "not an http or https URL") {
			t.Errorf("bad URL: %d %s", p.Status, p.Body)
		}

		// the link index: the admin sees the top domains, linking to their pages
		p = admin.get("/web")
		if !strings.Contains(p.Body, `<a href="/web/domains/example.org">example.org</a>`) || !strings.Contains(p.Body, `<a href="/web/domains/example.net">example.net</a>`) {
			t.Errorf("the admin's top domains: %s", p.Body)
		}
		// a domain's page
		p = admin.get("/web/domains/example.org")
		if p.Status != http.StatusOK || len(webCaptureLink.FindAllString(p.Body, -1)) != 5 || !strings.Contains(p.Body, "Pages most linked to") ||
			!strings.Contains(p.Body, `<a href="/web?url=http%3A%2F%2Fexample.org%2Fa">http://example.org/a</a>`) {
			t.Errorf("the admin's page of example.org: %d %s", p.Status, p.Body)
		}
		if p = anon.get("/web/domains/example.org"); strings.Contains(p.Body, "Pages most linked to") || len(webCaptureLink.FindAllString(p.Body, -1)) != 5 {
			t.Errorf("a signed-out visitor's page of example.org: %s", p.Body)
		}
		if p = anon.get("/web/domains/WWW.Example.ORG"); p.Status != http.StatusSeeOther || p.Header.Get("Location") != "/web/domains/example.org" {
			t.Errorf("a host's domain page: %d %q", p.Status, p.Header.Get("Location"))
		}
		if p = anon.get("/web/domains/" + url.PathEscape("not a domain")); p.Status != http.StatusBadRequest {
			t.Errorf("a bad domain: %d", p.Status)
		}

		// a capture's page
		p = anon.get("/web?url=" + url.QueryEscape("http://example.org/a"))
		id := webCaptureLink.FindStringSubmatch(p.Body)[1]
		p = anon.get("/web/captures/" + id)
		for _, want := range []string{"<h1 class=\"web-url\">Capture of http://example.org/a</h1>", "<th scope=\"row\">WARC-Type</th><td class=\"web-url\">response</td>",
			"<th scope=\"row\">Content-Type</th><td class=\"web-url\">text/html</td>", "HTTP response (200)",
			`href="/api/v1/web/record?at=20240315120100&amp;url=http%3A%2F%2Fexample.org%2Fa"`, `<a href="/web/domains/example.org">example.org</a>`} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("the capture page lacks %s: %s", want, p.Body)
			}
		}
		if strings.Contains(p.Body, `id="links-h"`) {
			t.Error("a signed-out visitor sees the capture's links")
		}
		p = admin.get("/web/captures/" + id)
		for _, want := range []string{"Pages linking here: 1", `<a href="/web?url=http%3A%2F%2Fexample.org%2F">http://example.org/</a>`} {
			if !strings.Contains(p.Body, want) {
				t.Errorf("the admin's capture page lacks %s: %s", want, p.Body)
			}
		}
		for _, bad := range []string{"/web/captures/0", "/web/captures/x", "/web/captures/999999"} {
			if p = anon.get(bad); p.Status != http.StatusNotFound {
				t.Errorf("%s: %d", bad, p.Status)
			}
		}
		if p = admin.get("/web/captures/" + id + "?in=x"); p.Status != http.StatusBadRequest {
			t.Errorf("a bad link position: %d", p.Status)
		}

		// in German
		anon.lang = "de"
		if p = anon.get("/web/captures/" + id); !strings.Contains(p.Body, "Aufnahme von http://example.org/a") || !strings.Contains(p.Body, ">Webarchiv</a>") {
			t.Errorf("German capture page: %s", p.Body)
		}
	})
}

// TestUIWebLinksPaged: a capture page pages its links in, keyset.
func TestUIWebLinksPaged(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	n := webUILinks + 5
	b := webWideCrawl(t, "wide.example.net", n)
	var buf bytes.Buffer
	w := warc.NewWriter(&buf, true, "1.1")
	if _, _, err := w.WriteResponse("http://wide.example.net/", webT0.Add(time.Hour), 200, "text/plain", []byte("home")); err != nil {
		t.Fatal(err)
	}
	e.webIndexWARC(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Public}, nil, "wide.warc.gz", append(b, buf.Bytes()...))
	admin := newVisitor(t, e.testEnv)
	admin.signIn("admin", adminPassword)
	p := admin.get("/web?url=" + url.QueryEscape("http://wide.example.net/"))
	id := webCaptureLink.FindStringSubmatch(p.Body)[1]
	p = admin.get("/web/captures/" + id)
	inLink := regexp.MustCompile(`<li><a href="/web\?url=http%3A%2F%2Fwide.example.net%2Fp[0-9]+">`)
	more := regexp.MustCompile(`<a href="([^"]*)" rel="next">More links in</a>`).FindStringSubmatch(p.Body)
	if !strings.Contains(p.Body, fmt.Sprintf("Pages linking here: %d", n)) || len(inLink.FindAllString(p.Body, -1)) != webUILinks || more == nil ||
		!strings.Contains(p.Body, "No capture of this URL has told its links.") {
		t.Fatalf("the home page's links: %s", p.Body)
	}
	p = admin.get(html.UnescapeString(more[1]))
	if got := len(inLink.FindAllString(p.Body, -1)); got != 5 || strings.Contains(p.Body, "More links in") || !strings.Contains(p.Body, "Back to the first links") {
		t.Errorf("the second page of links in: %d links: %s", got, p.Body)
	}

	// the lookup of a URL is a view of its links too, paged the same way
	p = admin.get("/web?url=" + url.QueryEscape("http://wide.example.net/"))
	more = regexp.MustCompile(`<a href="([^"]*)" rel="next">More links in</a>`).FindStringSubmatch(p.Body)
	if len(inLink.FindAllString(p.Body, -1)) != webUILinks || more == nil || len(webCaptureLink.FindAllString(p.Body, -1)) != 1 {
		t.Fatalf("the lookup's links: %s", p.Body)
	}
	next := html.UnescapeString(more[1])
	if !strings.HasPrefix(next, "/web?") || !strings.Contains(next, "url=http%3A%2F%2Fwide.example.net%2F") {
		t.Errorf("the lookup's next links lose the lookup: %s", next)
	}
	p = admin.get(next)
	if got := len(inLink.FindAllString(p.Body, -1)); got != 5 || len(webCaptureLink.FindAllString(p.Body, -1)) != 1 {
		t.Errorf("the lookup's second page of links in: %d links: %s", got, p.Body)
	}
	// not for a wider match, nor for a signed-out visitor
	if p = admin.get("/web?match=host&url=" + url.QueryEscape("http://wide.example.net/")); strings.Contains(p.Body, `id="links-h"`) {
		t.Error("a host lookup shows links")
	}
	if p = newVisitor(t, e.testEnv).get("/web?url=" + url.QueryEscape("http://wide.example.net/")); strings.Contains(p.Body, `id="links-h"`) {
		t.Error("a signed-out visitor sees the lookup's links")
	}
}

// TestUIWebFilePage: the page of a WARC file's captures lists them 50 at a
// time in the order of the file, with the work that holds it; a file the
// web index does not hold, a private one for a signed-out visitor and a
// cursor it never gave are answered as such. The page of a work holding
// WARC files links to each file's captures; a work of page images with a
// WARC file among them keeps its book controls.
func TestUIWebFilePage(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	wide := e.webIndexWARC(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Public, Metadata: titled("Wide crawl")}, nil,
		"wide.warc.gz", webWideCrawl(t, "wide.example.net", webUIPage+10))
	private := e.webIngest("example.com", shelfmark.Private, "")
	anon := newVisitor(t, e.testEnv)
	admin := newVisitor(t, e.testEnv)
	admin.signIn("admin", adminPassword)

	p := anon.get("/web/files/" + string(wide.file))
	ids := webCaptureLink.FindAllStringSubmatch(p.Body, -1)
	next := regexp.MustCompile(`<a href="([^"]*)" rel="next">`).FindStringSubmatch(p.Body)
	if p.Status != http.StatusOK || len(ids) != webUIPage || next == nil || !strings.Contains(p.Body, "<h1 class=\"web-url\">Captures in wide.warc.gz</h1>") ||
		!strings.Contains(p.Body, "Records indexed: 60.") || !strings.Contains(p.Body, `<a href="/works/`+string(wide.work)+`">the work that holds it</a>`) ||
		!strings.Contains(p.Body, captureRow("http://wide.example.net/p0", 200)) {
		t.Fatalf("the file's first page: %d, %d captures, next %v: %s", p.Status, len(ids), next, p.Body)
	}
	p = anon.get(html.UnescapeString(next[1]))
	if more := webCaptureLink.FindAllStringSubmatch(p.Body, -1); len(more) != 10 || strings.Contains(p.Body, `rel="next"`) || !strings.Contains(p.Body, captureRow(fmt.Sprintf("http://wide.example.net/p%d", webUIPage+9), 200)) {
		t.Errorf("the file's second page: %d captures: %s", len(more), p.Body)
	}
	if p = anon.get("/web/files/" + string(private.file)); p.Status != http.StatusNotFound {
		t.Errorf("a private WARC file for a signed-out visitor: %d", p.Status)
	}
	if p = admin.get("/web/files/" + string(private.file)); p.Status != http.StatusOK || len(webCaptureLink.FindAllString(p.Body, -1)) != 5 {
		t.Errorf("a private WARC file for the admin: %d %s", p.Status, p.Body)
	}
	if p = anon.get("/web/files/" + string(wide.file) + "?cursor=nonsense"); p.Status != http.StatusBadRequest {
		t.Errorf("a bad cursor: %d", p.Status)
	}
	for _, notWARC := range []shelfmark.ID{wide.work, "zzzzzzzzz"} {
		if p = anon.get("/web/files/" + string(notWARC)); p.Status != http.StatusNotFound {
			t.Errorf("/web/files/%s: %d", notWARC, p.Status)
		}
	}

	// the work page links the captures and shows no book
	p = admin.get("/works/" + string(wide.work))
	if !strings.Contains(p.Body, `<a href="/web/files/`+string(wide.file)+`">Captures in wide.warc.gz</a> <span class="meta">records indexed: 60</span>`) ||
		strings.Contains(p.Body, "Arrange pages") || strings.Contains(p.Body, `id="viewer"`) || strings.Contains(p.Body, `id="pages-h"`) {
		t.Errorf("the page of a WARC work: %s", p.Body)
	}
	anon.lang = "de"
	if p = anon.get("/works/" + string(wide.work)); !strings.Contains(p.Body, ">Aufnahmen in wide.warc.gz</a>") || !strings.Contains(p.Body, "<h2 id=\"web-h\">Webarchiv</h2>") {
		t.Errorf("the page of a WARC work in German: %s", p.Body)
	}
	// a book with a WARC file among its pages stays a book
	ctx := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
	book := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Visibility: shelfmark.Public, Metadata: titled("A book")}})[0]
	img := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: book.ID}})[0]
	e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFile, Parent: img.ID, File: e.putBytes("p1.txt", "text/plain", []byte("a page"))}})
	fs, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: book.ID})
	if err != nil {
		t.Fatal(err)
	}
	mixed := e.webIndexWARC(nil, fs, "site.warc", webWideCrawl(t, "site.example.net", 2))
	p = admin.get("/works/" + string(book.ID))
	if !strings.Contains(p.Body, `<a href="/web/files/`+string(mixed.file)+`">Captures in site.warc</a>`) || !strings.Contains(p.Body, "Arrange pages") || !strings.Contains(p.Body, `id="pages-h"`) {
		t.Errorf("the page of a book with a WARC file: %s", p.Body)
	}
}
