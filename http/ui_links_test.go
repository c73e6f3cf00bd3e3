package http

// Links followed as a browser follows them: each page that builds an
// address with a query is read, every link on it to this site is
// followed with a real client against the test server (through its
// redirects), and the links that carry a value in their query are checked
// to land where they say, with that value intact.

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ingest"
	"github.com/shelfmark/shelfmark/warc"
)

// linkTag finds the links of a page: their attributes and their text.
var (
	linkTag  = regexp.MustCompile(`(?s)<a\b([^>]*)>(.*?)</a>`)
	hrefAttr = regexp.MustCompile(`\bhref="([^"]*)"`)
	anyTag   = regexp.MustCompile(`<[^>]*>`)
)

// followedLink is a link of a page and where following it led.
type followedLink struct {
	// Href is the link's address as the page gives it (unescaped from
	// HTML); Text its text, without tags.
	Href, Text string
	// URL is where it led, after its redirects; Page what was read there.
	URL  *url.URL
	Page *htmlPage
}

// followLinks reads the page at path and follows every link on it to this
// site (relative ones resolved against the page), through at most 5
// redirects each. A link that ends in an error, leaves the site or
// redirects in a loop fails the test. Links to the page in another
// language (whose choice would stick to the visitor), and those whose
// address starts with a prefix of skip, are not followed.
func (b *visitor) followLinks(path string, skip ...string) (*htmlPage, []*followedLink) {
	b.t.Helper()
	base, err := url.Parse(b.e.ts.URL + path)
	if err != nil {
		b.t.Fatal(err)
	}
	p := b.get(path)
	if p.Status != http.StatusOK {
		b.t.Fatalf("%s: %d %.500s", path, p.Status, p.Body)
	}
	var out []*followedLink
links:
	for _, m := range linkTag.FindAllStringSubmatch(p.Body, -1) {
		h := hrefAttr.FindStringSubmatch(m[1])
		if h == nil {
			continue
		}
		l := &followedLink{Href: html.UnescapeString(h[1]), Text: strings.TrimSpace(html.UnescapeString(anyTag.ReplaceAllString(m[2], "")))}
		if strings.HasPrefix(l.Href, "#") {
			continue // this page
		}
		u, err := base.Parse(l.Href)
		if err != nil {
			b.t.Errorf("%s: the link %q (%s) is no URL: %v", path, l.Href, l.Text, err)
			continue
		}
		if u.Host != base.Host || u.Query().Has("lang") {
			continue // another site; the page in another language (the choice sticks)
		}
		for _, s := range skip {
			if strings.HasPrefix(u.RequestURI(), s) {
				continue links
			}
		}
		l.URL, l.Page = b.follow(u)
		if l.Page.Status != http.StatusOK {
			b.t.Errorf("%s: the link %q (%s) led to %s: %d %.300s", path, l.Href, l.Text, l.URL.RequestURI(), l.Page.Status, l.Page.Body)
		}
		out = append(out, l)
	}
	return p, out
}

// follow reads u and the redirects that follow it, and returns where it
// ended and what was read there.
func (b *visitor) follow(u *url.URL) (*url.URL, *htmlPage) {
	b.t.Helper()
	for range 6 {
		req, err := http.NewRequest(http.MethodGet, u.String(), nil)
		if err != nil {
			b.t.Fatal(err)
		}
		p := b.send(req)
		if p.Status < 300 || p.Status >= 400 {
			return u, p
		}
		next, err := u.Parse(p.Header.Get("Location"))
		if err != nil || next.Host != u.Host {
			b.t.Fatalf("%s redirects to %q, off this site", u.RequestURI(), p.Header.Get("Location"))
		}
		u = next
	}
	b.t.Fatalf("%s: more than 5 redirects", u.RequestURI())
	return nil, nil
}

// in returns the visitor for the (sub)test t: the same browser, whose
// failures are t's.
func (b *visitor) in(t testing.TB) *visitor {
	c := *b
	c.t = t
	return &c
}

// linkNamed returns the followed link whose text is text, failing the
// test when there is none.
func linkNamed(t *testing.T, from string, ls []*followedLink, text string) *followedLink {
	t.Helper()
	for _, l := range ls {
		if l.Text == text {
			return l
		}
	}
	var texts []string
	for _, l := range ls {
		texts = append(texts, l.Text)
	}
	t.Fatalf("%s has no link %q among %q", from, text, texts)
	return nil
}

// The crawl of portelwyn-museum.example: its home page links to
// https://www.portelwyn-museum.example/visit/; http://…/visit redirects
// there (301), captured twice, as the page it leads to.
const (
	portelwynHome   = "http://portelwyn-museum.example/"
	portelwynVisit  = "http://portelwyn-museum.example/visit"
	portelwynTarget = "https://www.portelwyn-museum.example/visit/"
)

// portelwynCrawl writes the crawl (five records) to a file of dir and
// returns its path.
func portelwynCrawl(t testing.TB, dir string) string {
	t.Helper()
	var buf bytes.Buffer
	w := warc.NewWriter(&buf, true, "1.1")
	if _, _, err := w.WriteResponse(portelwynHome, webT0, 200, "text/html", []byte(`<html><body><a href="`+portelwynTarget+`">Visit</a></body></html>`)); err != nil {
		t.Fatal(err)
	}
	for day := range 2 {
		at := webT0.Add(time.Duration(day) * 24 * time.Hour)
		if _, _, err := w.WriteRedirect(portelwynVisit, at.Add(time.Second), 301, portelwynTarget); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.WriteResponse(portelwynTarget, at.Add(2*time.Second), 200, "text/html", []byte(`<html><body><a href="/">Home</a></body></html>`)); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "portelwyn.warc.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// captureRow is a row of a capture list: its URL and status.
func captureRow(url string, status int) string {
	return fmt.Sprintf(`<td class="web-url">%s</td><td>%d</td>`, html.EscapeString(url), status)
}

// TestUILinksFollowed: the links that carry a value in their query lead
// where they say when a browser follows them. Signing in from the header
// comes back to the page, with its query; "Every capture of this URL"
// lists the URL's captures (a redirect's under its own URL); the audit
// filters of a system actor and of a resource, a user's tokens (a name
// with "@"), the pagers of a work's pages and of their arrangement, and
// the deposit and new-collection links of a collection find what they
// name. A work made by WARC ingest shows no book controls but a link to
// its captures, which lists them. Every other link of these pages leads
// to a page too.
func TestUILinksFollowed(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		worker := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("worker"))
		coll := e.createAll(worker, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Visibility: shelfmark.Public, Metadata: titled("Letters")}})[0]
		book := e.createAll(worker, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Visibility: shelfmark.Public, MemberOf: []shelfmark.ID{coll.ID}, Metadata: titled("A long book")}})[0]
		var pages []*shelfmark.NewResource
		for range pagesChunk + 1 {
			pages = append(pages, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: book.ID})
		}
		e.createAll(worker, pages)
		if _, err := e.accounts.AddUser(worker, "ann@example.org", "", false, nil); err != nil {
			t.Fatal(err)
		}
		st, err := ingest.IngestWARC(worker, e.repo, e.blobs, []string{portelwynCrawl(t, t.TempDir())}, ingest.WARCOptions{Crawl: "portelwyn"})
		if err != nil || st.Files != 1 || st.Errors != 0 {
			t.Fatalf("ingest the crawl: %+v, %v", st, err)
		}
		anon := newVisitor(t, e.testEnv)
		admin := newVisitor(t, e.testEnv)
		admin.signIn("admin", adminPassword)

		// the lookup of the redirect's URL: its captures under their own URLs
		lookup := "/web?match=exact&url=" + url.QueryEscape(portelwynVisit)
		lp, lls := anon.followLinks(lookup)
		if strings.Count(lp.Body, captureRow(portelwynVisit, 301)) != 2 || strings.Count(lp.Body, captureRow(portelwynTarget, 200)) != 2 {
			t.Errorf("the lookup of %s lists its captures under other URLs: %s", portelwynVisit, lp.Body)
		}

		t.Run("sign in", func(t *testing.T) {
			// signing in from the header comes back here, query and all
			signin := linkNamed(t, lookup, lls, "Sign in")
			next := regexp.MustCompile(`<input type="hidden" name="next" value="([^"]*)">`).FindStringSubmatch(signin.Page.Body)
			if signin.URL.Path != "/login" || next == nil || html.UnescapeString(next[1]) != lookup {
				t.Fatalf("Sign in (%s) leads to %s, whose form goes on to %q, want %q", signin.Href, signin.URL.RequestURI(), next, lookup)
			}
			v := newVisitor(t, e.testEnv)
			v.get(signin.URL.RequestURI())
			p := v.post("/login", url.Values{"name": {"admin"}, "password": {adminPassword}, "next": {html.UnescapeString(next[1])}})
			if p.Status != http.StatusSeeOther || p.Header.Get("Location") != lookup {
				t.Fatalf("signing in from %s goes on to %d %q", lookup, p.Status, p.Header.Get("Location"))
			}
			if p = v.get(p.Header.Get("Location")); !strings.Contains(p.Body, "Signed in as admin") || strings.Count(p.Body, captureRow(portelwynVisit, 301)) != 2 {
				t.Errorf("back at %s after signing in: %.2000s", lookup, p.Body)
			}
		})

		// a capture of the redirect
		var capture *followedLink
		for _, l := range lls {
			if strings.HasPrefix(l.URL.Path, "/web/captures/") && strings.Contains(l.Page.Body, ">301</dd>") {
				capture = l
				break
			}
		}
		if capture == nil {
			t.Fatalf("no capture of the redirect is linked from %s", lookup)
		}
		if !strings.Contains(capture.Page.Body, "<h1 class=\"web-url\">Capture of "+portelwynVisit+"</h1>") {
			t.Errorf("the redirect's capture page: %s", capture.Page.Body)
		}
		_, cls := anon.followLinks(capture.URL.RequestURI())

		t.Run("every capture", func(t *testing.T) {
			others := linkNamed(t, capture.URL.RequestURI(), cls, "Every capture of this URL")
			if others.URL.Path != "/web" || others.URL.Query().Get("url") != portelwynVisit ||
				strings.Count(others.Page.Body, captureRow(portelwynVisit, 301)) != 2 || strings.Count(others.Page.Body, captureRow(portelwynTarget, 200)) != 2 {
				t.Errorf("Every capture of this URL (%s) leads to %s: %s", others.Href, others.URL.RequestURI(), others.Page.Body)
			}
		})

		t.Run("warc work", func(t *testing.T) {
			anon, admin := anon.in(t), admin.in(t)
			// the work made by the WARC ingest: no book, a link to its captures
			work := linkNamed(t, capture.URL.RequestURI(), cls, "the work that holds it")
			wp, wls := admin.followLinks(work.URL.RequestURI())
			for _, book := range []string{"Arrange pages", "The page viewer is not available", `id="viewer"`, `id="pages-h"`} {
				if strings.Contains(wp.Body, book) {
					t.Errorf("the page of a WARC work shows %q: %s", book, wp.Body)
				}
			}
			caps := linkNamed(t, work.URL.RequestURI(), wls, "Captures in portelwyn.warc.gz")
			if !strings.HasPrefix(caps.URL.Path, "/web/files/") || strings.Count(caps.Page.Body, `href="/web/captures/`) != 5 ||
				strings.Count(caps.Page.Body, captureRow(portelwynVisit, 301)) != 2 || !strings.Contains(caps.Page.Body, captureRow(portelwynHome, 200)) {
				t.Errorf("the captures of the WARC work (%s): %s", caps.URL.RequestURI(), caps.Page.Body)
			}
			anon.followLinks(caps.URL.RequestURI())
		})

		t.Run("audit", func(t *testing.T) {
			admin := admin.in(t)
			// the audit trail: filters by a system actor and by a resource
			_, ls := admin.followLinks("/admin/audit")
			actor := linkNamed(t, "/admin/audit", ls, "system:worker")
			if actor.URL.Query().Get("actor") != "system:worker" || strings.Contains(actor.Page.Body, "No entries.") || !strings.Contains(actor.Page.Body, "user ann@example.org") ||
				strings.Count(actor.Page.Body, ">system:worker</a></td>") != strings.Count(actor.Page.Body, "<td><a href=\"/admin/audit?actor=") {
				t.Errorf("the audit entries of system:worker (%s): %s", actor.Href, actor.Page.Body)
			}
			var res *followedLink
			for _, l := range ls {
				if strings.Contains(l.Href, "resource=") {
					res = l
					break
				}
			}
			if res == nil {
				t.Fatal("no audit entry links its resource")
			}
			if id := res.URL.Query().Get("resource"); id != res.Text || !strings.Contains(res.Page.Body, "<code>create</code>") ||
				strings.Count(res.Page.Body, "<code>"+id+"</code>") != strings.Count(res.Page.Body, "<code>create</code>") {
				t.Errorf("the audit entries of %s (%s): %s", res.Text, res.Href, res.Page.Body)
			}
		})

		t.Run("tokens", func(t *testing.T) {
			admin := admin.in(t)
			// a user's tokens, and back to them after making one
			_, ls := admin.followLinks("/admin/users")
			tokens := linkNamed(t, "/admin/users", ls, "Tokens ann@example.org")
			if tokens.URL.Query().Get("user") != "ann@example.org" || !strings.Contains(tokens.Page.Body, "API tokens of ann@example.org") {
				t.Errorf("the tokens of ann@example.org (%s): %s", tokens.Href, tokens.Page.Body)
			}
			admin.get("/admin/tokens?user=ann%40example.org")
			p := admin.post("/admin/tokens", url.Values{"user": {"ann@example.org"}, "scope": {"read"}, "note": {"links"}})
			if p.Status != http.StatusCreated {
				t.Fatalf("make a token of ann@example.org: %d %.2000s", p.Status, p.Body)
			}
			done := regexp.MustCompile(`<a href="([^"]*)">I have copied it`).FindStringSubmatch(p.Body)
			if done == nil {
				t.Fatalf("the new token's page has no way back: %s", p.Body)
			}
			if u, back := admin.follow(mustParse(t, e.ts.URL+html.UnescapeString(done[1]))); u.Query().Get("user") != "ann@example.org" || !strings.Contains(back.Body, "<td>links</td>") {
				t.Errorf("back to the tokens (%s): %s %.2000s", done[1], u, back.Body)
			}
		})

		t.Run("pagers", func(t *testing.T) {
			anon, admin := anon.in(t), admin.in(t)
			// the pagers of a work's pages and of their arrangement
			_, ls := anon.followLinks("/works/" + string(book.ID))
			more := linkNamed(t, "the work", ls, "More pages")
			if more.URL.Query().Get("after") == "" || !strings.Contains(more.Page.Body, "First pages") || strings.Count(more.Page.Body, `<li id="page-`) != pagesChunk+1-uiWorkPageSize {
				t.Errorf("More pages (%s): %s", more.Href, more.Page.Body)
			}
			_, ls = admin.followLinks("/works/" + string(book.ID) + "/pages")
			var next *followedLink
			for _, l := range ls {
				if strings.Contains(l.Href, "/pages?after=") {
					next = l
				}
			}
			if next == nil {
				t.Fatal("the arrangement of 101 pages has no next part")
			}
			if n := strings.Count(next.Page.Body, `data-id="`); next.URL.Query().Get("offset") != fmt.Sprint(pagesChunk+1) || n != 1 {
				t.Errorf("the next part of the arrangement (%s): %d pages: %s", next.Href, n, next.Page.Body)
			}
		})

		t.Run("collection", func(t *testing.T) {
			admin := admin.in(t)
			// a collection's deposit and new-collection links, from its
			// page and its roles page
			for _, from := range []string{"/collections/" + string(coll.ID), "/collections/" + string(coll.ID) + "/roles"} {
				_, ls := admin.followLinks(from)
				n := 0
				for _, l := range ls {
					switch {
					case l.URL.Path == "/deposit" && l.URL.RawQuery != "":
						n++
						if !strings.Contains(l.Page.Body, `name="collection" type="text" value="`+string(coll.ID)+`"`) || !strings.Contains(l.Page.Body, "Letters") {
							t.Errorf("%s: the deposit link %s: %s", from, l.Href, l.Page.Body)
						}
					case l.URL.Path == "/collections/new":
						n++
						if !strings.Contains(l.Page.Body, `name="parent" type="text" value="`+string(coll.ID)+`"`) {
							t.Errorf("%s: the new collection link %s: %s", from, l.Href, l.Page.Body)
						}
					}
				}
				if n != 2 {
					t.Errorf("%s: %d deposit and new collection links, want 2", from, n)
				}
			}
		})

		t.Run("admin", func(t *testing.T) {
			admin := admin.in(t)
			// the administration's other pages with addresses in their links
			admin.followLinks("/admin", "/admin/events")
			admin.followLinks("/admin/jobs/"+shelfmark.QueueOCR+"?state=failed", "/admin/events")
		})
	})
}

// TestUILinksSignInSSO: the single sign-on link of the sign-in page
// reached from a page's header takes the browser through the provider and
// back to that page, with its query.
func TestUILinksSignInSSO(t *testing.T) {
	e, _ := newOIDCEnv(t)
	b := newVisitor(t, e)
	from := "/search?q=" + url.QueryEscape("café & tea") + "&kind=work"
	_, ls := b.followLinks(from, "/auth/", "/oai") // this server has no OAI-PMH provider
	signin := linkNamed(t, from, ls, "Sign in")
	b.followLinks(signin.URL.RequestURI(), "/auth/", "/oai")
	for _, m := range linkTag.FindAllStringSubmatch(signin.Page.Body, -1) {
		if !strings.Contains(m[2], "institution") {
			continue
		}
		href := html.UnescapeString(hrefAttr.FindStringSubmatch(m[1])[1])
		u := mustParse(t, e.ts.URL+href)
		if u.Query().Get("next") != from {
			t.Fatalf("the single sign-on link %q goes on to %q, want %q", href, u.Query().Get("next"), from)
		}
		st, loc, body := visit(t, b.c, u.String())
		if st != http.StatusFound {
			t.Fatalf("the single sign-on link %q: %d %s", href, st, body)
		}
		st, loc, body = visit(t, b.c, loc) // the provider
		if st != http.StatusFound {
			t.Fatalf("the provider: %d %s", st, body)
		}
		st, loc, body = visit(t, b.c, loc) // the callback
		if st != http.StatusSeeOther || loc != e.ts.URL+from {
			t.Fatalf("the callback goes on to %d %q, want %q: %s", st, loc, e.ts.URL+from, body)
		}
		return
	}
	t.Fatalf("the sign-in page has no single sign-on link: %s", signin.Page.Body)
}

func mustParse(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
