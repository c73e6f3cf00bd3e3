package http

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// wantVaryNames checks that a response's Vary names each of names.
func wantVaryNames(t *testing.T, what string, h http.Header, names ...string) {
	t.Helper()
	vary := strings.ToLower(strings.Join(h.Values("Vary"), ","))
	for _, n := range names {
		if !strings.Contains(vary, strings.ToLower(n)) {
			t.Errorf("%s: Vary %q lacks %s", what, h.Values("Vary"), n)
		}
	}
}

// TestUIPagesConditional: the work, collection and home pages carry a
// weak entity tag and, for an anonymous reader of public pages, a public
// Cache-Control with a short max-age and no cookie; If-None-Match with
// that tag is 304 (GET and HEAD) with the caching headers and none of the
// page's; these pages send no Last-Modified, so If-Modified-Since alone
// is always answered in full, and If-None-Match decides when both come.
// Any change the page shows (the work's title, a collection's title, a
// page added, a member made private) gives it a new tag, so a stale copy
// is never answered 304. A signed-in caller's page has a tag of its own
// and is no-store; a page that sets a cookie (?lang=) is never public.
func TestUIPagesConditional(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	ctx := context.Background()
	coll := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled("Herbals")}})[0]
	work, _ := scannedBook(t, e, 2, shelfmark.Public, titled("A herbal"), coll.ID)
	other := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}, Metadata: titled("A second herbal")}})[0]
	workPage, collPage := "/works/"+string(work.ID), "/collections/"+string(coll.ID)
	anon := func(method, path string, hdrs ...string) *response {
		return e.do(method, path, nil, append([]string{"Authorization", "", "Accept", "text/html"}, hdrs...)...)
	}
	tags := map[string]string{}
	for _, p := range []string{workPage, collPage, "/"} {
		r := anon("GET", p)
		tag := r.Header.Get("ETag")
		if r.Status != http.StatusOK || !strings.HasPrefix(tag, `W/"`) {
			t.Fatalf("%s: %d, ETag %q", p, r.Status, tag)
		}
		tags[p] = tag
		if cc := r.Header.Get("Cache-Control"); cc != "public, max-age=120" {
			t.Errorf("%s: Cache-Control %q for an anonymous reader", p, cc)
		}
		wantVaryNames(t, p, r.Header, "Cookie", "Authorization", "Accept-Language")
		if r.Header.Get("Set-Cookie") != "" || r.Header.Get("Last-Modified") != "" {
			t.Errorf("%s: Set-Cookie %q, Last-Modified %q", p, r.Header.Get("Set-Cookie"), r.Header.Get("Last-Modified"))
		}
		if !strings.Contains(string(r.Body), `<meta name="csrf-token" content="">`) {
			t.Errorf("%s: an anonymous reader's page carries a form token", p)
		}
		for _, method := range []string{"GET", "HEAD"} {
			nm := anon(method, p, "If-None-Match", tag)
			if nm.Status != http.StatusNotModified || len(nm.Body) != 0 || nm.Header.Get("ETag") != tag {
				t.Errorf("%s %s If-None-Match: %d, ETag %q, %d bytes", method, p, nm.Status, nm.Header.Get("ETag"), len(nm.Body))
			}
			if nm.Header.Get("Cache-Control") != "public, max-age=120" || nm.Header.Get("Content-Type") != "" || nm.Header.Get("Content-Security-Policy") != "" {
				t.Errorf("%s %s 304: %v", method, p, nm.Header)
			}
		}
		// compressed, the page keeps its tag (weak: the same content)
		gz := anon("GET", p, "Accept-Encoding", "gzip")
		if gz.Header.Get("Content-Encoding") != "gzip" || gz.Header.Get("ETag") != tag {
			t.Errorf("%s gzipped: Content-Encoding %q, ETag %q", p, gz.Header.Get("Content-Encoding"), gz.Header.Get("ETag"))
		}
		if nm := anon("GET", p, "Accept-Encoding", "gzip", "If-None-Match", tag); nm.Status != http.StatusNotModified || len(nm.Body) != 0 || nm.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s gzip If-None-Match: %d, %d bytes, Content-Encoding %q", p, nm.Status, len(nm.Body), nm.Header.Get("Content-Encoding"))
		}
		// a list of tags, the strong form of the weak one
		if nm := anon("GET", p, "If-None-Match", `"x", `+strings.TrimPrefix(tag, "W/")); nm.Status != http.StatusNotModified {
			t.Errorf("%s: a list naming the tag: %d", p, nm.Status)
		}
		future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
		if r := anon("GET", p, "If-Modified-Since", future); r.Status != http.StatusOK {
			t.Errorf("%s If-Modified-Since alone: %d, want 200 (these pages send no date)", p, r.Status)
		}
		if r := anon("GET", p, "If-None-Match", `W/"other"`, "If-Modified-Since", future); r.Status != http.StatusOK {
			t.Errorf("%s: If-None-Match of another tag with a later If-Modified-Since: %d, want 200", p, r.Status)
		}
	}

	// the viewer's style nonce is fresh in every answer and no part of
	// the tag
	r1, r2 := anon("GET", workPage), anon("GET", workPage)
	nonce := regexp.MustCompile(`'nonce-([^']+)'`)
	n1, n2 := nonce.FindStringSubmatch(r1.Header.Get("Content-Security-Policy")), nonce.FindStringSubmatch(r2.Header.Get("Content-Security-Policy"))
	if n1 == nil || n2 == nil || n1[1] == n2[1] || r1.Header.Get("ETag") != r2.Header.Get("ETag") || r1.Header.Get("ETag") != tags[workPage] {
		t.Errorf("the viewer's nonces %v %v, tags %q %q %q", n1, n2, r1.Header.Get("ETag"), r2.Header.Get("ETag"), tags[workPage])
	}

	// a signed-in caller's page: a tag of its own, and no-store
	reader := e.addUser("reader", shelfmark.ScopeRead)
	for _, p := range []string{workPage, collPage, "/"} {
		for _, tok := range []string{reader, e.admin} {
			r := e.do("GET", p, nil, "Authorization", "Bearer "+tok, "Accept", "text/html")
			if r.Status != http.StatusOK || r.Header.Get("ETag") == "" || r.Header.Get("ETag") == tags[p] {
				t.Errorf("%s signed in: %d, ETag %q, the anonymous page's %q", p, r.Status, r.Header.Get("ETag"), tags[p])
			}
			if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
				t.Errorf("%s signed in: Cache-Control %q", p, cc)
			}
			wantVaryNames(t, p+" signed in", r.Header, "Cookie", "Authorization")
			if nm := e.do("GET", p, nil, "Authorization", "Bearer "+tok, "If-None-Match", tags[p]); nm.Status != http.StatusOK {
				t.Errorf("%s signed in, with the anonymous page's tag: %d", p, nm.Status)
			}
		}
	}
	// signed in with the sign-in form: the session's pages, once the
	// browser holds its form key (no cookie set), are still no-store
	if _, err := e.accounts.AddUser(ctx, "browser", "browser-password", false, nil); err != nil {
		t.Fatal(err)
	}
	b := newVisitor(t, e.testEnv)
	b.signIn("browser", "browser-password")
	for _, p := range []string{workPage, collPage, "/"} {
		b.get(p)
		r := b.get(p)
		if r.Status != http.StatusOK || r.Header.Get("Set-Cookie") != "" || r.Header.Get("Cache-Control") != "no-store" || r.Header.Get("ETag") == tags[p] {
			t.Errorf("%s in a session: %d, Set-Cookie %q, Cache-Control %q, ETag %q", p, r.Status, r.Header.Get("Set-Cookie"), r.Header.Get("Cache-Control"), r.Header.Get("ETag"))
		}
	}
	// a work's citations: a tag, public to anonymous readers
	for _, f := range []string{"/cite.bib", "/cite.ris"} {
		r := anon("GET", workPage+f)
		if r.Status != http.StatusOK || r.Header.Get("ETag") == "" || r.Header.Get("Cache-Control") != "public, max-age=120" {
			t.Errorf("%s: %d, ETag %q, Cache-Control %q", f, r.Status, r.Header.Get("ETag"), r.Header.Get("Cache-Control"))
		}
		if nm := anon("GET", workPage+f, "If-None-Match", r.Header.Get("ETag")); nm.Status != http.StatusNotModified {
			t.Errorf("%s If-None-Match: %d", f, nm.Status)
		}
		if a := e.do("GET", workPage+f, nil); a.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s signed in: Cache-Control %q", f, a.Header.Get("Cache-Control"))
		}
	}
	// a page that sets a cookie is not public
	if r := anon("GET", workPage+"?lang=de"); r.Status != http.StatusOK || r.Header.Get("Set-Cookie") == "" || strings.Contains(r.Header.Get("Cache-Control"), "public") {
		t.Errorf("?lang=de: %d, Set-Cookie %q, Cache-Control %q", r.Status, r.Header.Get("Set-Cookie"), r.Header.Get("Cache-Control"))
	}

	// changes: each page showing what changed gets a new tag
	changed := func(what string, pages ...string) {
		t.Helper()
		for _, p := range pages {
			r := anon("GET", p, "If-None-Match", tags[p])
			if r.Status != http.StatusOK || r.Header.Get("ETag") == tags[p] || r.Header.Get("ETag") == "" {
				t.Errorf("%s: %s with the old tag: %d, ETag %q", what, p, r.Status, r.Header.Get("ETag"))
			}
			tags[p] = r.Header.Get("ETag")
			if nm := anon("GET", p, "If-None-Match", tags[p]); nm.Status != http.StatusNotModified {
				t.Errorf("%s: %s with the new tag: %d", what, p, nm.Status)
			}
		}
	}
	title := func(id shelfmark.ID, s string) {
		t.Helper()
		meta := titled(s)
		if _, err := e.repo.UpdateResource(ctx, id, shelfmark.ResourceUpdate{Replace: &meta}); err != nil {
			t.Fatal(err)
		}
	}
	title(work.ID, "A herbal, revised")
	changed("the work's title", workPage, collPage, "/")
	title(coll.ID, "Herbals and bestiaries")
	changed("the collection's title", workPage, collPage, "/")
	e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: work.ID, Metadata: titled("An inserted leaf")}})
	changed("a page added", workPage)
	private := shelfmark.Private
	if _, err := e.repo.UpdateResource(ctx, other.ID, shelfmark.ResourceUpdate{Visibility: &private}); err != nil {
		t.Fatal(err)
	}
	changed("a member made private", collPage, "/")
	if r := anon("GET", collPage); strings.Contains(string(r.Body), "A second herbal") {
		t.Error("the collection page still lists the private member")
	}

	// the private member's page: 404 to anonymous, never public to
	// whoever may read it
	for _, tok := range []string{"", e.admin} {
		r := e.do("GET", "/works/"+string(other.ID), nil, "Authorization", map[bool]string{true: "", false: "Bearer " + tok}[tok == ""], "Accept", "text/html")
		if strings.Contains(r.Header.Get("Cache-Control"), "public") {
			t.Errorf("the private work's page (%d) is public: %q", r.Status, r.Header.Get("Cache-Control"))
		}
		if (tok == "") != (r.Status == http.StatusNotFound) {
			t.Errorf("the private work's page: %d", r.Status)
		}
	}
}

// TestUISitemapConditional: the sitemap index and a sitemap carry a tag
// and are answered 304 for it; a new public work changes the sitemap's.
func TestUISitemapConditional(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	ctx := context.Background()
	e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Metadata: titled("A map")}})
	if _, err := e.proj.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/sitemap.xml", "/sitemaps/1.xml"} {
		r := e.do("GET", p, nil, anonymously...)
		tag := r.Header.Get("ETag")
		if r.Status != http.StatusOK || tag == "" || r.Header.Get("Cache-Control") != "public, max-age=600" {
			t.Fatalf("%s: %d, ETag %q, Cache-Control %q", p, r.Status, tag, r.Header.Get("Cache-Control"))
		}
		if nm := e.do("GET", p, nil, "Authorization", "", "If-None-Match", tag); nm.Status != http.StatusNotModified || len(nm.Body) != 0 {
			t.Errorf("%s If-None-Match: %d", p, nm.Status)
		}
	}
	old := e.do("GET", "/sitemaps/1.xml", nil, anonymously...).Header.Get("ETag")
	e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Metadata: titled("Another map")}})
	if _, err := e.proj.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if r := e.do("GET", "/sitemaps/1.xml", nil, "Authorization", "", "If-None-Match", old); r.Status != http.StatusOK || r.Header.Get("ETag") == old {
		t.Errorf("a new public work: %d, ETag %q (was %q)", r.Status, r.Header.Get("ETag"), old)
	}
}

// TestUIWebFileConditional: a WARC file's page of captures carries a tag
// and is public to anonymous readers of a public file; a private file's,
// read by the administrator, is not.
func TestUIWebFileConditional(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	wide := e.webIndexWARC(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Public, Metadata: titled("Wide crawl")}, nil,
		"wide.warc.gz", webWideCrawl(t, "wide.example.net", 3))
	private := e.webIngest("example.com", shelfmark.Private, "")
	page := "/web/files/" + string(wide.file)
	r := e.do("GET", page, nil, "Authorization", "")
	tag := r.Header.Get("ETag")
	if r.Status != http.StatusOK || tag == "" || r.Header.Get("Cache-Control") != "public, max-age=120" {
		t.Fatalf("%s: %d, ETag %q, Cache-Control %q", page, r.Status, tag, r.Header.Get("Cache-Control"))
	}
	if nm := e.do("GET", page, nil, "Authorization", "", "If-None-Match", tag); nm.Status != http.StatusNotModified {
		t.Errorf("%s If-None-Match: %d", page, nm.Status)
	}
	a := e.do("GET", "/web/files/"+string(private.file), nil)
	if a.Status != http.StatusOK || strings.Contains(a.Header.Get("Cache-Control"), "public") {
		t.Errorf("the private file's page for the administrator: %d, Cache-Control %q", a.Status, a.Header.Get("Cache-Control"))
	}
}

// BenchmarkUIWorkPageConditional measures an anonymous reader's work page
// (a 60-page book) answered in full and answered 304 for its tag, with
// the bytes each sends.
func BenchmarkUIWorkPageConditional(b *testing.B) {
	e := newPolicyEnv(b, "sqlite", Options{})
	work, _ := scannedBook(b, e, 60, shelfmark.Public, titled("A herbal"))
	page := "/works/" + string(work.ID)
	tag := e.do("GET", page, nil, "Authorization", "").Header.Get("ETag")
	for _, c := range []struct {
		name string
		hdrs []string
	}{{"full", nil}, {"not-modified", []string{"If-None-Match", tag}}} {
		b.Run(c.name, func(b *testing.B) {
			bytes := 0
			for b.Loop() {
				r := e.do("GET", page, nil, append([]string{"Authorization", ""}, c.hdrs...)...)
				bytes += len(r.Body)
			}
			b.ReportMetric(float64(bytes)/float64(b.N), "body-bytes/op")
		})
	}
}
