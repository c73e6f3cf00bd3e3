package http

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// TestUISignIn: the sign-in form opens a session as the API's login does,
// refuses a form without its token, and sign-out ends the session.
func TestUISignIn(t *testing.T) {
	e := newEnv(t, Options{})
	b := newVisitor(t, e)
	p := b.get("/login?next=/search%3Fq%3Dx")
	if p.Status != 200 || !strings.Contains(p.Body, `name="password"`) || !strings.Contains(p.Body, `value="/search?q=x"`) {
		t.Fatalf("GET /login: %d %.500s", p.Status, p.Body)
	}
	if csp := p.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP of a page: %q", csp)
	}
	// a forged form: no token, or another browser's token
	if p := b.post("/login", url.Values{"csrf": {""}, "name": {"admin"}, "password": {adminPassword}}); p.Status != 403 || !strings.Contains(p.Body, "reload the page") {
		t.Errorf("sign-in without a form token: %d %.300s", p.Status, p.Body)
	}
	other := newVisitor(t, e)
	other.get("/login")
	if p := b.post("/login", url.Values{"csrf": {other.csrf}, "name": {"admin"}, "password": {adminPassword}}); p.Status != 403 {
		t.Errorf("sign-in with another browser's token: %d", p.Status)
	}
	if b.cookie(SessionCookie) != "" {
		t.Fatal("a refused form opened a session")
	}
	// a wrong password: the form again, 401, the name kept
	p = b.post("/login", url.Values{"name": {"admin"}, "password": {"wrong"}, "next": {"/search?q=x"}})
	if p.Status != 401 || !strings.Contains(p.Body, "Wrong user name or password.") || !strings.Contains(p.Body, `value="admin"`) {
		t.Errorf("wrong password: %d %.500s", p.Status, p.Body)
	}
	// next may only be a path of this site
	p = b.post("/login", url.Values{"name": {"admin"}, "password": {adminPassword}, "next": {"//evil.example/x"}})
	if p.Status != 303 || p.Header.Get("Location") != "/" {
		t.Fatalf("sign-in: %d Location %q", p.Status, p.Header.Get("Location"))
	}
	session := b.cookie(SessionCookie)
	if session == "" {
		t.Fatal("no session cookie after signing in")
	}
	p = b.get("/login")
	if !strings.Contains(p.Body, "Signed in as admin") {
		t.Errorf("signed-in page does not say so: %.500s", p.Body)
	}
	// the token of a signed-out page does not serve once signed in
	if p := b.post("/logout", url.Values{"csrf": {other.csrf}}); p.Status != 403 {
		t.Errorf("sign-out with a stale token: %d", p.Status)
	}
	if p := b.post("/logout", nil); p.Status != 303 {
		t.Fatalf("sign-out: %d %.300s", p.Status, p.Body)
	}
	if b.cookie(SessionCookie) != "" {
		t.Error("the session cookie is still set after signing out")
	}
	// the ended session: pages show as signed out, the cookie is cleared,
	// and the API still refuses it
	stale := newVisitor(t, e)
	u, _ := url.Parse(e.ts.URL)
	stale.c.Jar.SetCookies(u, []*http.Cookie{{Name: SessionCookie, Value: session, Path: "/"}})
	p = stale.get("/login")
	if p.Status != 200 || strings.Contains(p.Body, "Signed in as") {
		t.Errorf("page with an ended session: %d", p.Status)
	}
	if stale.cookie(SessionCookie) != "" {
		t.Error("the ended session's cookie was not cleared")
	}
	r := e.do("GET", "/api/v1/me", nil, "Cookie", SessionCookie+"="+session)
	if r.Status != 401 {
		t.Errorf("API with an ended session: %d", r.Status)
	}
}

// TestUILanguage: Accept-Language picks German, ?lang= switches and is
// remembered.
func TestUILanguage(t *testing.T) {
	e := newEnv(t, Options{})
	b := newVisitor(t, e)
	b.lang = "de-DE,de;q=0.9,en;q=0.5"
	p := b.get("/login")
	if !strings.Contains(p.Body, `<html lang="de">`) || !strings.Contains(p.Body, "Anmelden") {
		t.Errorf("German page: %.400s", p.Body)
	}
	p = b.get("/login?lang=en")
	if !strings.Contains(p.Body, `<html lang="en">`) {
		t.Errorf("?lang=en: %.300s", p.Body)
	}
	p = b.get("/login")
	if !strings.Contains(p.Body, `<html lang="en">`) {
		t.Errorf("the choice of English is not remembered over Accept-Language")
	}
	b.lang = ""
	if p := b.get("/login?lang=xx"); !strings.Contains(p.Body, `<html lang="en">`) {
		t.Errorf("unknown language: %.200s", p.Body)
	}
}

// TestUIStaticAndNotFound: static files carry their hash and are kept a
// year; an unknown page is an HTML 404 for a browser and JSON for the API.
func TestUIStaticAndNotFound(t *testing.T) {
	e := newEnv(t, Options{})
	b := newVisitor(t, e)
	p := b.get("/login")
	m := regexp.MustCompile(`href="(/static/app\.css\?v=[0-9a-f]+)"`).FindStringSubmatch(p.Body)
	if m == nil {
		t.Fatalf("no versioned style sheet in %.400s", p.Body)
	}
	css := b.get(m[1])
	if css.Status != 200 || !strings.HasPrefix(css.Header.Get("Content-Type"), "text/css") || !strings.Contains(css.Header.Get("Cache-Control"), "immutable") {
		t.Errorf("style sheet: %d %v", css.Status, css.Header)
	}
	if p := b.get("/static/..%2fui.go"); p.Status != 404 || strings.Contains(p.Body, "package http") {
		t.Errorf("static path escape: %d", p.Status)
	}
	if p := b.get("/static/nope.js"); p.Status != 404 {
		t.Errorf("missing static file: %d", p.Status)
	}
	p = b.get("/no/such/page")
	if p.Status != 404 || !strings.Contains(p.Body, "Not found") {
		t.Errorf("unknown page: %d %.300s", p.Status, p.Body)
	}
	if r := e.do("GET", "/no/such/page", nil); r.Status != 404 || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		t.Errorf("unknown path for an API client: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
}
