package http

import (
	"net/http"
	"strings"
	"testing"
)

// TestRobotsDefault: /robots.txt keeps crawlers out of the endless and
// expensive spaces and names the sitemap by absolute URL (the base URL,
// else the request's host), which is served; it is public, cached for an
// hour and revalidated by its tag.
func TestRobotsDefault(t *testing.T) {
	for _, base := range []string{"https://repo.example.org", ""} {
		e := newEnv(t, Options{BaseURL: base})
		r := e.do("GET", "/robots.txt", nil, "Authorization", "")
		body := string(r.Body)
		if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
			t.Fatalf("robots.txt: %d %q", r.Status, r.Header.Get("Content-Type"))
		}
		if !strings.HasPrefix(body, "User-agent: *\n") {
			t.Errorf("robots.txt does not start with a group for every crawler: %s", body)
		}
		for _, path := range []string{"/search", "/iiif/*/search/", "/iiif/*/pdf", "/web/captures/", "/web?", "/api/", "/oai", "/admin", "/login", "/deposit", "/bulk", "/works/*/history"} {
			if !strings.Contains(body, "\nDisallow: "+path+"\n") {
				t.Errorf("robots.txt lets crawlers into %s:\n%s", path, body)
			}
		}
		for _, open := range []string{"Disallow: /\n", "Disallow: /works/\n", "Disallow: /collections", "Disallow: /iiif/\n", "Disallow: /static"} {
			if strings.Contains(body, open) {
				t.Errorf("robots.txt keeps crawlers from what they should read (%q)", open)
			}
		}
		want := base
		if want == "" {
			want = e.ts.URL
		}
		sitemap := want + "/sitemap.xml"
		if !strings.HasSuffix(body, "\nSitemap: "+sitemap+"\n") {
			t.Errorf("robots.txt names no sitemap %s:\n%s", sitemap, body)
		}
		if sm := e.do("GET", strings.TrimPrefix(sitemap, want), nil, "Authorization", ""); sm.Status != http.StatusOK || !strings.HasPrefix(sm.Header.Get("Content-Type"), "application/xml") {
			t.Errorf("the sitemap robots.txt names: %d %q", sm.Status, sm.Header.Get("Content-Type"))
		}
		if cc := r.Header.Get("Cache-Control"); cc != "public, max-age=3600" {
			t.Errorf("robots.txt: Cache-Control %q", cc)
		}
		tag := r.Header.Get("ETag")
		if nm := e.do("GET", "/robots.txt", nil, "Authorization", "", "If-None-Match", tag); tag == "" || nm.Status != http.StatusNotModified || len(nm.Body) != 0 {
			t.Errorf("robots.txt with its tag %q: %d", tag, nm.Status)
		}
		if head := e.do("HEAD", "/robots.txt", nil, "Authorization", ""); head.Status != http.StatusOK || len(head.Body) != 0 || head.Header.Get("Content-Length") != r.Header.Get("Content-Length") {
			t.Errorf("HEAD robots.txt: %d, %d bytes, Content-Length %q", head.Status, len(head.Body), head.Header.Get("Content-Length"))
		}
		// the same file for a signed-in caller: nothing of the caller in it
		if admin := e.do("GET", "/robots.txt", nil); admin.Status != http.StatusOK || string(admin.Body) != body {
			t.Errorf("robots.txt differs for the administrator: %d %s", admin.Status, admin.Body)
		}
	}
}

// TestRobotsConfigured: an operator's robots.txt (serve --robots-file)
// is served as it is, in place of the default.
func TestRobotsConfigured(t *testing.T) {
	own := "# our crawl policy\nUser-agent: *\nDisallow: /\n\nUser-agent: Archivebot\nAllow: /\n\nSitemap: https://example.org/sitemap.xml\n"
	e := newEnv(t, Options{BaseURL: "https://repo.example.org", Robots: []byte(own)})
	r := e.do("GET", "/robots.txt", nil, "Authorization", "")
	if r.Status != http.StatusOK || string(r.Body) != own {
		t.Fatalf("robots.txt: %d %q, want the operator's %q", r.Status, r.Body, own)
	}
	if tag := r.Header.Get("ETag"); tag == "" || e.do("GET", "/robots.txt", nil, "Authorization", "", "If-None-Match", tag).Status != http.StatusNotModified {
		t.Errorf("the operator's robots.txt is not revalidated by its tag %q", tag)
	}
}

// TestUISiteName: the repository's name (serve --site-name) heads every
// page and ends its title, and is the home page's heading; the
// institution (serve --institution) is in every page's footer, escaped;
// without them the product's name shows and no institution.
func TestUISiteName(t *testing.T) {
	e := newEnv(t, Options{SiteName: "Rhine Atlases <Online>", Institution: "Landesbibliothek & Archiv"})
	v := newVisitor(t, e)
	home := v.get("/")
	wantPage(t, home, 200, []string{"<title>Rhine Atlases &lt;Online&gt;</title>", "<h1>Rhine Atlases &lt;Online&gt;</h1>",
		`<a class="brand" href="/">Rhine Atlases &lt;Online&gt;</a>`, `<p class="institution">Landesbibliothek &amp; Archiv</p>`},
		[]string{"<title>Shelfmark", ">Shelfmark</a>", "Rhine Atlases <Online>"})
	login := v.get("/login")
	wantPage(t, login, 200, []string{" · Rhine Atlases &lt;Online&gt;</title>", `<p class="institution">Landesbibliothek &amp; Archiv</p>`}, nil)

	plain := newVisitor(t, newEnv(t, Options{}))
	wantPage(t, plain.get("/"), 200, []string{"<title>Shelfmark</title>", "<h1>Shelfmark</h1>", `<a class="brand" href="/">Shelfmark</a>`},
		[]string{`class="institution"`})
}
