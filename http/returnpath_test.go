package http

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// postRaw sends a form as post does, but through the visitor's transport
// alone, so that a Location a client could not parse (one with control
// characters) is returned rather than failing the request; a response
// that cannot be read at all has status -1 and the error as its body.
func (b *visitor) postRaw(path string, form url.Values) *htmlPage {
	b.t.Helper()
	form.Set(csrfField, b.csrf)
	req, err := http.NewRequest(http.MethodPost, b.e.ts.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	req.Header.Set("Origin", b.e.ts.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for _, c := range b.c.Jar.Cookies(req.URL) {
		req.AddCookie(c)
	}
	res, err := b.c.Transport.RoundTrip(req)
	if err != nil { // a response no client can read
		return &htmlPage{Status: -1, Header: http.Header{}, Body: err.Error()}
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return &htmlPage{Status: res.StatusCode, Header: res.Header, Body: string(body)}
}

// hostileReturns are return-to addresses that a browser would take, or
// could after one more decoding, to another site or to a script: with
// control characters it strips, backslashes it reads as slashes,
// percent-encoded slashes, schemes and hosts.
var hostileReturns = []string{
	"/\t/evil.example", "/\n/evil.example", "/\r/evil.example", "/\r\n/evil.example", "\t//evil.example",
	"/\t\\evil.example", " //evil.example", "\x01//evil.example", "/\x00/evil.example", "/\x7f/evil.example",
	"//evil.example", "//evil.example/x", "///evil.example", "////evil.example",
	"/\\evil.example", "\\/evil.example", "\\\\evil.example", "\\evil.example",
	"/%2F/evil.example", "/%2f%2fevil.example", "/%2F%2Fevil.example", "/%5Cevil.example", "/%5cevil.example",
	"/%09/evil.example", "/%0A/evil.example", "/%0d%0a/evil.example", "/%252F/evil.example", "/%25252F%25252Fevil.example",
	"/%5C%5Cevil.example", "/%2F%5Cevil.example",
	"https://evil.example/", "http://evil.example", "HTTPS://evil.example", "https:/evil.example", "https:evil.example",
	"//user@evil.example", "//evil.example%2F@shelfmark", "javascript:alert(1)", "JavaScript:alert(1)",
	" javascript:alert(1)", "java\tscript:alert(1)", "data:text/html,<script>alert(1)</script>", "vbscript:x",
	"evil.example", "evil.example/x", "./x", "../x", "?next=//evil.example", "#x", "",
	"/ok\r\nSet-Cookie: x=y", "/a%zz", "/" + strings.Repeat("a", maxNextLen), "\xff/x", "/\xff",
}

// TestReturnPathHostile: no form or route that sends the browser back
// somewhere afterwards (the sign-in form and page, single sign-on, the
// administration forms' back) follows a hostile address: each falls back
// to its own page, or refuses it (single sign-on, 400).
func TestReturnPathHostile(t *testing.T) {
	e := newEnv(t, Options{})
	for _, next := range hostileReturns {
		b := newVisitor(t, e)
		if p := b.get("/login?next=" + url.QueryEscape(next)); p.Status != 200 || !strings.Contains(p.Body, `name="next" value="/"`) {
			t.Errorf("GET /login?next=%q: %d, the form's next is not \"/\"", next, p.Status)
		}
		p := b.postRaw("/login", url.Values{"name": {"admin"}, "password": {adminPassword}, "next": {next}})
		if p.Status != 303 || p.Header.Get("Location") != "/" {
			t.Errorf("POST /login next=%q: %d Location %q %.200s, want 303 to /", next, p.Status, p.Header.Get("Location"), p.Body)
		}
	}

	je, _ := adminJobsEnv(t)
	b := adminVisitor(t, je)
	b.get("/admin")
	for _, back := range hostileReturns {
		if p := b.postRaw("/admin/queues/ocr/pause", url.Values{"back": {back}}); p.Status != 303 || p.Header.Get("Location") != "/admin?notice=paused&queue=ocr" {
			t.Errorf("pause with back=%q: %d Location %q", back, p.Status, p.Header.Get("Location"))
		}
	}

	oe, _ := newOIDCEnv(t)
	for _, next := range hostileReturns {
		if next == "" {
			continue // no next: home
		}
		st, loc, body := visit(t, browser(t), oe.ts.URL+"/auth/oidc/login?next="+url.QueryEscape(next))
		if st != 400 || loc != "" {
			t.Errorf("/auth/oidc/login?next=%q: %d %q %.200s; want 400 and no redirect", next, st, loc, body)
		}
	}
}

// TestReturnPathLocal: a path of this site is followed, with its query
// and fragment, after the sign-in and by the administration forms.
func TestReturnPathLocal(t *testing.T) {
	e := newEnv(t, Options{})
	for _, next := range []string{"/", "/search?q=x", "/works/abc?x=1&y=%2F%2F#frag", "/search?q=//evil.example", "/a/b/", "/search?q=a%2Fb", "/works/a%2Fb"} {
		b := newVisitor(t, e)
		if p := b.get("/login?next=" + url.QueryEscape(next)); p.Status != 200 || !strings.Contains(p.Body, `name="next" value="`+strings.ReplaceAll(next, "&", "&amp;")+`"`) {
			t.Errorf("GET /login?next=%q: %d, the form does not keep it", next, p.Status)
		}
		if p := b.post("/login", url.Values{"name": {"admin"}, "password": {adminPassword}, "next": {next}}); p.Status != 303 || p.Header.Get("Location") != next {
			t.Errorf("POST /login next=%q: %d Location %q", next, p.Status, p.Header.Get("Location"))
		}
	}
}

// TestReturnPath: the one rule refuses every hostile address, keeps a
// path of this site as it is, and turns a backslash into what a browser
// reads (a slash in the path, an escaped backslash after it).
func TestReturnPath(t *testing.T) {
	for _, next := range hostileReturns {
		if p, ok := returnPath(next); ok {
			t.Errorf("returnPath(%q) = %q, accepted", next, p)
		}
		if p := returnPathOr(next, "/home"); p != "/home" {
			t.Errorf("returnPathOr(%q) = %q, want the default", next, p)
		}
	}
	for next, want := range map[string]string{
		"/":                            "/",
		"/search?q=x":                  "/search?q=x",
		"/works/a%2Fb?x=%2F%2F#f":      "/works/a%2Fb?x=%2F%2F#f",
		"/search?q=//evil.example":     "/search?q=//evil.example",
		"/100%25":                      "/100%25",
		"/a\\b":                        "/a/b",
		"/search?q=a\\b#c\\d":          "/search?q=a%5Cb#c%5Cd",
		"/" + strings.Repeat("é", 511): "/" + strings.Repeat("é", 511),
	} {
		if p, ok := returnPath(next); !ok || p != want {
			t.Errorf("returnPath(%q) = %q, %v; want %q", next, p, ok, want)
		}
	}
}
