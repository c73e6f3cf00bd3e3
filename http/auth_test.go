package http

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/api"
	"github.com/shelfmark/shelfmark/http/kit"
)

// wantInvalidToken checks a 401 for a credential that was sent.
func wantInvalidToken(t *testing.T, r *response) {
	t.Helper()
	r.wantError(t, http.StatusUnauthorized, shelfmark.EUNAUTHORIZED)
	if got := r.Header.Get("WWW-Authenticate"); got != `Bearer realm="shelfmark", error="invalid_token"` {
		t.Errorf("%s %s: WWW-Authenticate %q", r.Method, r.Path, got)
	}
}

func TestBadCredentialsAre401NeverAnonymous(t *testing.T) {
	e := newEnv(t, Options{MaxAuthFailures: 1000}) // the brute-force limit is tested below
	ctx := context.Background()
	ann := e.addUser("ann", shelfmark.ScopeWrite)
	// A public read works anonymously...
	e.do("GET", "/api/v1/search?q=x", nil, as("")...).want(t, http.StatusOK)
	e.do("GET", "/api/v1/search?q=x", nil, as(ann)...).want(t, http.StatusOK)

	expiring, _, err := e.accounts.CreateToken(ctx, shelfmark.NewToken{User: "ann", Kind: shelfmark.TokenAPI, Scope: shelfmark.ScopeWrite,
		Expires: ptr(e.clock.now().Add(time.Hour))})
	if err != nil {
		t.Fatal(err)
	}
	e.do("GET", "/api/v1/me", nil, as(expiring)...).want(t, http.StatusOK)
	revoked := newToken(t, e.accounts, "ann", shelfmark.ScopeWrite)
	var mine struct {
		Tokens []api.TokenJSON `json:"tokens"`
	}
	e.do("GET", "/api/v1/tokens", nil, as(revoked)...).want(t, http.StatusOK).json(t, &mine)
	if len(mine.Tokens) != 3 {
		t.Fatalf("ann has %d tokens: %+v", len(mine.Tokens), mine.Tokens)
	}
	e.do("DELETE", "/api/v1/tokens/"+strconv.FormatInt(mine.Tokens[0].ID, 10), nil, as(revoked)...).want(t, http.StatusNoContent)
	bob := e.addUser("bob", shelfmark.ScopeWrite)
	if err := e.accounts.SetDisabled(ctx, "bob", true); err != nil {
		t.Fatal(err)
	}
	e.clock.advance(2 * time.Hour)

	_, rest, _ := strings.Cut(ann, "_")
	for name, hdrs := range map[string][]string{
		"unknown":        as(shelfmark.TokenPrefix + strings.Repeat("a", len(rest))),
		"wrong prefix":   as("abc_" + rest),
		"malformed":      as("smk_!!"),
		"empty":          {"Authorization", "Bearer "},
		"other scheme":   {"Authorization", "Basic YWRtaW46YWRtaW4="},
		"expired":        as(expiring),
		"revoked":        as(revoked),
		"disabled user":  as(bob),
		"unknown cookie": {"Cookie", SessionCookie + "=" + shelfmark.TokenPrefix + "nothing"},
	} {
		t.Run(name, func(t *testing.T) {
			// ...but never with a bad credential, not even a read of
			// something public or the health probe.
			wantInvalidToken(t, e.do("GET", "/api/v1/search?q=x", nil, hdrs...))
			wantInvalidToken(t, e.do("GET", "/healthz", nil, hdrs...))
			before := e.counts()
			wantInvalidToken(t, e.do("POST", "/api/v1/works", `{}`, append(hdrs, "Content-Type", "application/json")...))
			e.wantCounts(before)
		})
	}
	// the token ann still has works
	e.do("GET", "/api/v1/me", nil, as(ann)...).want(t, http.StatusOK)
}

func ptr[T any](v T) *T { return &v }

func TestAnonymousAndReadScopedWritesAreRefused(t *testing.T) {
	e := newEnv(t, Options{})
	reader := e.addUser("reader", shelfmark.ScopeRead)
	work := e.create("/api/v1/works", `{"visibility": "public"}`)
	before := e.counts()
	for _, rq := range []struct{ method, path, body string }{
		{"POST", "/api/v1/works", `{}`},
		{"POST", "/api/v1/collections", `{}`},
		{"PATCH", "/api/v1/resources/" + string(work.ID), `{"visibility": "private"}`},
		{"DELETE", "/api/v1/resources/" + string(work.ID), ``},
		{"POST", "/api/v1/blobs", `bytes`},
		{"POST", "/api/v1/jobs/ocr/pause", ``},
		{"POST", "/api/v1/tokens", `{}`},
	} {
		var body any
		if rq.body != "" {
			body = rq.body
		}
		r := e.do(rq.method, rq.path, body, as("", "Content-Type", "application/json")...)
		r.wantError(t, http.StatusUnauthorized, shelfmark.EUNAUTHORIZED)
		if got := r.Header.Get("WWW-Authenticate"); got != `Bearer realm="shelfmark"` {
			t.Errorf("%s %s: WWW-Authenticate %q", rq.method, rq.path, got)
		}
		r.wantNoWrites(t)
		r = e.do(rq.method, rq.path, body, as(reader, "Content-Type", "application/json")...)
		r.wantError(t, http.StatusForbidden, shelfmark.EFORBIDDEN)
		r.wantNoWrites(t)
	}
	e.wantCounts(before)
	if got := e.get(work.ID); got.Visibility != "public" {
		t.Errorf("visibility %q", got.Visibility)
	}
}

func TestCrossSiteWritesAreRefused(t *testing.T) {
	e := newEnv(t, Options{CORSOrigins: []string{"https://app.example"}})
	before := e.counts()
	for _, hdrs := range [][]string{
		{"Origin", "http://evil.example"},
		{"Origin", "null"},
		{"Sec-Fetch-Site", "cross-site"},
		{"Sec-Fetch-Site", "same-site"}, // a sibling host is another origin
		{"Origin", "https://app.example.evil", "Sec-Fetch-Site", "cross-site"}, // not the listed origin
	} {
		// with the admin's token, so only the origin is wrong
		for _, rq := range []struct{ method, path, ctype, body string }{
			{"POST", "/api/v1/works", "text/plain", `{}`},
			{"POST", "/api/v1/works", "application/json", `{}`},
			{"POST", "/api/v1/jobs/ocr/pause", "text/plain", ``},
			{"POST", "/api/v1/blobs", "text/plain", `some bytes`},
		} {
			var body any
			if rq.body != "" {
				body = rq.body
			}
			r := e.do(rq.method, rq.path, body, append([]string{"Content-Type", rq.ctype}, hdrs...)...)
			r.wantError(t, http.StatusForbidden, shelfmark.EFORBIDDEN)
			r.wantNoStatements(t)
		}
	}
	e.wantCounts(before)
	if blobs := e.blobFiles(); len(blobs) != 0 {
		t.Errorf("blobs stored: %v", blobs)
	}
	var jobs struct {
		Queues []api.QueueJSON `json:"queues"`
	}
	e.do("GET", "/api/v1/jobs", nil).want(t, http.StatusOK).json(t, &jobs)
	for _, q := range jobs.Queues {
		if q.Paused {
			t.Errorf("queue %s paused", q.Queue)
		}
	}
	// The server's own origin, a listed origin, and clients that are not
	// browsers (no Origin, no Sec-Fetch-Site) may write.
	e.do("POST", "/api/v1/works", `{}`, "Content-Type", "application/json", "Origin", e.ts.URL, "Sec-Fetch-Site", "same-origin").want(t, http.StatusCreated)
	r := e.do("POST", "/api/v1/works", `{}`, "Content-Type", "application/json", "Origin", "https://app.example", "Sec-Fetch-Site", "cross-site").want(t, http.StatusCreated)
	if got := r.Header.Get("Access-Control-Allow-Origin"); got != "https://app.example" {
		t.Errorf("Access-Control-Allow-Origin %q", got)
	}
	e.do("POST", "/api/v1/works", `{}`, "Content-Type", "application/json").want(t, http.StatusCreated)
	// Reads are not refused (what they show is what the caller may see).
	e.do("GET", "/api/v1/search?q=x", nil, "Origin", "http://evil.example", "Sec-Fetch-Site", "cross-site").want(t, http.StatusOK)
}

func TestCrossSiteWithBaseURL(t *testing.T) {
	// Behind a proxy the Host the server sees is not the public one: the
	// base URL's origin is the server's own.
	e := newEnv(t, Options{BaseURL: "https://repo.example.org/"})
	e.do("POST", "/api/v1/works", `{}`, "Content-Type", "application/json", "Origin", "https://repo.example.org").want(t, http.StatusCreated)
	e.do("POST", "/api/v1/works", `{}`, "Content-Type", "application/json", "Origin", "https://other.example.org").
		wantError(t, http.StatusForbidden, shelfmark.EFORBIDDEN)
}

func TestBodyWithoutContentType(t *testing.T) {
	e := newEnv(t, Options{})
	work := e.create("/api/v1/works", `{}`)
	fs := e.create("/api/v1/filesets", `{"parent": "`+string(work.ID)+`"}`)
	before := e.counts()
	for _, rq := range []struct{ method, path, body string }{
		{"POST", "/api/v1/works", `{}`},
		{"POST", "/api/v1/batch", `[]`},
		{"PUT", "/api/v1/resources/" + string(work.ID), `{}`},
		{"PATCH", "/api/v1/resources/" + string(work.ID), `{}`},
		{"POST", "/api/v1/groups", `{}`},
		{"POST", "/api/v1/jobs/ocr/retry", `{}`},
		{"PUT", "/api/v1/roles", `{"grants": []}`},
	} {
		r := e.do(rq.method, rq.path, rq.body)
		eb := r.wantError(t, http.StatusUnsupportedMediaType, shelfmark.EUNSUPPORTED)
		if !strings.Contains(eb.Message, "no Content-Type") {
			t.Errorf("%s %s: %s", rq.method, rq.path, eb.Message)
		}
		r.wantNoStatements(t)
	}
	e.wantCounts(before)
	// File bytes sent with a token may go without a media type...
	e.do("POST", "/api/v1/blobs", "some bytes").want(t, http.StatusCreated)
	e.do("POST", "/api/v1/resources/"+string(fs.ID)+"/files", "file bytes", "Content-Disposition", `attachment; filename="a.bin"`).want(t, http.StatusCreated)
	// ...but not with a session cookie (a browser's form could send it).
	cookie := e.login("admin", adminPassword)
	e.do("POST", "/api/v1/blobs", "other bytes", "Cookie", cookie).wantError(t, http.StatusUnsupportedMediaType, shelfmark.EUNSUPPORTED)
	// A request without a body needs no media type.
	e.do("POST", "/api/v1/jobs/ocr/pause", nil).want(t, http.StatusOK)
}

func TestSecurityHeaders(t *testing.T) {
	e := newEnv(t, Options{})
	work := e.create("/api/v1/works", `{}`)
	fs := e.create("/api/v1/filesets", `{"parent": "`+string(work.ID)+`"}`)
	var file resource
	e.do("POST", "/api/v1/resources/"+string(fs.ID)+"/files", "<html><script>alert(1)</script></html>",
		"Content-Type", "text/html", "Content-Disposition", `attachment; filename="x.html"`).want(t, http.StatusCreated).json(t, &file)
	check := func(r *response, csp string) {
		t.Helper()
		for name, want := range map[string]string{
			"X-Content-Type-Options":  "nosniff",
			"Referrer-Policy":         "no-referrer",
			"X-Frame-Options":         "DENY",
			"Content-Security-Policy": csp,
		} {
			if got := r.Header.Get(name); got != want {
				t.Errorf("%s %s -> %d: %s %q, want %q", r.Method, r.Path, r.Status, name, got, want)
			}
		}
		if r.Header.Get("X-Request-Id") == "" {
			t.Errorf("%s %s: no X-Request-Id", r.Method, r.Path)
		}
	}
	check(e.do("GET", "/api/v1/openapi.json", nil), apiCSP)
	check(e.do("GET", "/api/v1/resources/"+string(work.ID), nil), apiCSP)
	check(e.do("GET", "/nowhere", nil), apiCSP)
	check(e.do("GET", "/healthz", nil, as("smk_bad")...), apiCSP)
	check(e.do("POST", "/api/v1/works", `{}`, as("", "Content-Type", "application/json")...), apiCSP)
	content := e.do("GET", "/api/v1/resources/"+string(file.ID)+"/content", nil).want(t, http.StatusOK)
	check(content, contentCSP)
	if !strings.Contains(content.Header.Get("Content-Security-Policy"), "sandbox") {
		t.Error("file content is not sandboxed")
	}
	// The client's request id comes back when it is sane; another is
	// made when it is not.
	if got := e.do("GET", "/healthz", nil, "X-Request-Id", "trace-42.a_b:c").Header.Get("X-Request-Id"); got != "trace-42.a_b:c" {
		t.Errorf("X-Request-Id %q", got)
	}
	for _, bad := range []string{"has space", "<script>", strings.Repeat("x", 65)} {
		if got := e.do("GET", "/healthz", nil, "X-Request-Id", bad).Header.Get("X-Request-Id"); got == bad || got == "" || !kit.SaneID(got) {
			t.Errorf("X-Request-Id %q for %q", got, bad)
		}
	}
	a := e.do("GET", "/healthz", nil).Header.Get("X-Request-Id")
	if b := e.do("GET", "/healthz", nil).Header.Get("X-Request-Id"); a == b {
		t.Errorf("two requests have the id %q", a)
	}
}

func TestCORS(t *testing.T) {
	e := newEnv(t, Options{CORSOrigins: []string{"https://app.example"}})
	preflight := func(origin string) *response {
		return e.do("OPTIONS", "/api/v1/works", nil, as("", "Origin", origin, "Access-Control-Request-Method", "POST",
			"Access-Control-Request-Headers", "authorization, content-type")...)
	}
	r := preflight("https://app.example").want(t, http.StatusNoContent)
	for name, want := range map[string]string{
		"Access-Control-Allow-Origin": "https://app.example",
		"Vary":                        "Origin",
	} {
		if got := r.Header.Get(name); got != want {
			t.Errorf("%s %q, want %q", name, got, want)
		}
	}
	for _, h := range []string{"Authorization", "Content-Type", "If-Match", "Accept-Datetime"} {
		if !strings.Contains(r.Header.Get("Access-Control-Allow-Headers"), h) {
			t.Errorf("Access-Control-Allow-Headers %q lacks %s", r.Header.Get("Access-Control-Allow-Headers"), h)
		}
	}
	// a memento's time and links are for scripts of listed origins too
	for _, h := range []string{"Link", "Memento-Datetime"} {
		if !strings.Contains(r.Header.Get("Access-Control-Expose-Headers"), h) {
			t.Errorf("Access-Control-Expose-Headers %q lacks %s", r.Header.Get("Access-Control-Expose-Headers"), h)
		}
	}
	if !strings.Contains(r.Header.Get("Access-Control-Allow-Methods"), "PATCH") {
		t.Errorf("Access-Control-Allow-Methods %q", r.Header.Get("Access-Control-Allow-Methods"))
	}
	if r.Header.Get("Access-Control-Allow-Credentials") != "" {
		t.Error("credentials allowed across sites")
	}
	for _, origin := range []string{"http://evil.example", "https://app.example:8443", "http://app.example"} {
		r := preflight(origin)
		r.wantError(t, http.StatusForbidden, shelfmark.EFORBIDDEN)
		if got := r.Header.Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("%s: Access-Control-Allow-Origin %q", origin, got)
		}
		if got := e.do("GET", "/api/v1/search?q=x", nil, "Origin", origin).Header.Get("Access-Control-Allow-Origin"); got != "" {
			t.Errorf("%s: Access-Control-Allow-Origin %q on a GET", origin, got)
		}
	}
	if got := e.do("GET", "/api/v1/search?q=x", nil, "Origin", "https://app.example").Header.Get("Access-Control-Allow-Origin"); got != "https://app.example" {
		t.Errorf("listed origin: Access-Control-Allow-Origin %q on a GET", got)
	}

	// Without a list no origin is allowed.
	e2 := newEnv(t, Options{})
	r = e2.do("OPTIONS", "/api/v1/works", nil, "Origin", "https://app.example", "Access-Control-Request-Method", "POST")
	r.wantError(t, http.StatusForbidden, shelfmark.EFORBIDDEN)
	if CheckOrigins([]string{"https://ok.example", "http://ok.example:8080"}) != nil {
		t.Error("good origins refused")
	}
	for _, bad := range []string{"app.example", "https://app.example/path", "ftp://app.example", "https://user@app.example", "*"} {
		if CheckOrigins([]string{bad}) == nil {
			t.Errorf("CheckOrigins accepted %q", bad)
		}
	}
}

// login signs in through the API and returns the Cookie header value of
// the session.
func (e *testEnv) login(name, password string) string {
	e.t.Helper()
	r := e.do("POST", "/api/v1/login", `{"name": "`+name+`", "password": "`+password+`"}`, as("", "Content-Type", "application/json")...).want(e.t, http.StatusOK)
	res := http.Response{Header: r.Header}
	for _, c := range res.Cookies() {
		if c.Name == SessionCookie {
			return c.Name + "=" + c.Value
		}
	}
	e.t.Fatalf("login set no %s cookie: %q", SessionCookie, r.Header.Values("Set-Cookie"))
	return ""
}

func TestLoginSessionCookie(t *testing.T) {
	e := newEnv(t, Options{})
	r := e.do("POST", "/api/v1/login", `{"name": "admin", "password": "`+adminPassword+`"}`, as("", "Content-Type", "application/json")...).want(t, http.StatusOK)
	var who callerJSON
	r.json(t, &who)
	if who.User != "admin" || !who.Admin || who.Via != "session" {
		t.Errorf("login answered %+v", who)
	}
	set := r.Header.Get("Set-Cookie")
	for _, want := range []string{SessionCookie + "=", "Path=/", "HttpOnly", "SameSite=Lax"} {
		if !strings.Contains(set, want) {
			t.Errorf("Set-Cookie %q lacks %s", set, want)
		}
	}
	if strings.Contains(set, "Secure") {
		t.Errorf("Set-Cookie %q is Secure over plain HTTP", set)
	}
	cookie := e.login("admin", adminPassword)
	e.do("GET", "/api/v1/me", nil, "Cookie", cookie).want(t, http.StatusOK).json(t, &who)
	if who.User != "admin" || who.Via != "session" {
		t.Errorf("me %+v", who)
	}
	// The session writes from the server's own pages...
	e.do("POST", "/api/v1/works", `{}`, "Cookie", cookie, "Content-Type", "application/json", "Origin", e.ts.URL, "Sec-Fetch-Site", "same-origin").want(t, http.StatusCreated)
	// ...but not from another site's (cross-site request forgery).
	before := e.counts()
	for _, hdrs := range [][]string{
		{"Origin", "http://evil.example"},
		{"Sec-Fetch-Site", "cross-site"},
	} {
		for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json"} {
			r := e.do("POST", "/api/v1/works", `{}`, append([]string{"Cookie", cookie, "Content-Type", ct}, hdrs...)...)
			r.wantError(t, http.StatusForbidden, shelfmark.EFORBIDDEN)
			r.wantNoStatements(t)
		}
		e.do("POST", "/api/v1/jobs/ocr/pause", nil, append([]string{"Cookie", cookie}, hdrs...)...).wantError(t, http.StatusForbidden, shelfmark.EFORBIDDEN)
	}
	e.wantCounts(before)

	// Wrong passwords and unknown users get one answer.
	for _, body := range []string{`{"name": "admin", "password": "wrong"}`, `{"name": "nobody", "password": "wrong"}`} {
		e.do("POST", "/api/v1/login", body, as("", "Content-Type", "application/json")...).wantError(t, http.StatusUnauthorized, shelfmark.EUNAUTHORIZED)
	}
	e.do("POST", "/api/v1/login", `{"name": "", "password": "x"}`, as("", "Content-Type", "application/json")...).wantError(t, http.StatusBadRequest, shelfmark.EINVALID)

	// Logout revokes the session and clears the cookie.
	r = e.do("POST", "/api/v1/logout", nil, "Cookie", cookie).want(t, http.StatusNoContent)
	if set := r.Header.Get("Set-Cookie"); !strings.Contains(set, SessionCookie+"=;") || !strings.Contains(set, "Max-Age=0") {
		t.Errorf("logout Set-Cookie %q", set)
	}
	wantInvalidToken(t, e.do("GET", "/api/v1/me", nil, "Cookie", cookie))
	e.do("GET", "/api/v1/me", nil, as("")...).wantError(t, http.StatusUnauthorized, shelfmark.EUNAUTHORIZED)
	// Logging out without a session is harmless.
	e.do("POST", "/api/v1/logout", nil, as("")...).want(t, http.StatusNoContent)
}

func TestSecureCookieWithHTTPSBaseURL(t *testing.T) {
	e := newEnv(t, Options{BaseURL: "https://repo.example.org"})
	r := e.do("POST", "/api/v1/login", `{"name": "admin", "password": "`+adminPassword+`"}`, as("", "Content-Type", "application/json")...).want(t, http.StatusOK)
	if set := r.Header.Get("Set-Cookie"); !strings.Contains(set, "Secure") {
		t.Errorf("Set-Cookie %q is not Secure", set)
	}
}

// frozen stops the limiter's clock, so that a wait does not end while a
// slow machine runs the test; it returns the function that moves it on.
func frozen(e *testEnv) func(time.Duration) {
	var mu sync.Mutex
	at := time.Now()
	e.srv.limiter.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
	return func(d time.Duration) { mu.Lock(); at = at.Add(d); mu.Unlock() }
}

func TestBruteForceLogin(t *testing.T) {
	e := newEnv(t, Options{MaxAuthFailures: 3})
	advance := frozen(e)
	login := func(password string) *response {
		return e.do("POST", "/api/v1/login", `{"name": "admin", "password": "`+password+`"}`, as("", "Content-Type", "application/json")...)
	}
	for i := 0; i < 4; i++ {
		login("guess"+strconv.Itoa(i)).wantError(t, http.StatusUnauthorized, shelfmark.EUNAUTHORIZED)
	}
	// The 5th attempt waits, even with the right password.
	for _, pw := range []string{"guess", adminPassword} {
		r := login(pw)
		r.wantError(t, http.StatusTooManyRequests, shelfmark.ETOOMANY)
		if got := r.Header.Get("Retry-After"); got != "1" {
			t.Errorf("Retry-After %q, want 1", got)
		}
		r.wantNoWrites(t)
	}
	advance(time.Second)
	login("guess").wantError(t, http.StatusUnauthorized, shelfmark.EUNAUTHORIZED)
	// Each further failure doubles the wait.
	if got := login("guess").wantError(t, http.StatusTooManyRequests, shelfmark.ETOOMANY); got == nil {
		t.Fatal("no 429")
	}
	if got := login("guess").Header.Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After %q, want 2", got)
	}
	advance(2 * time.Second)
	login(adminPassword).want(t, http.StatusOK)
	// Success forgets the user name's failures, not the address's: the
	// next failure from it waits again, longer.
	login("guess").wantError(t, http.StatusUnauthorized, shelfmark.EUNAUTHORIZED)
	r := login(adminPassword)
	r.wantError(t, http.StatusTooManyRequests, shelfmark.ETOOMANY)
	if got := r.Header.Get("Retry-After"); got != "4" {
		t.Errorf("Retry-After %q after a sign-in and one more failure, want 4", got)
	}
}

func TestBruteForceTokens(t *testing.T) {
	e := newEnv(t, Options{MaxAuthFailures: 3})
	advance := frozen(e)
	for i := 0; i < 4; i++ {
		wantInvalidToken(t, e.do("GET", "/api/v1/search?q=x", nil, as(shelfmark.TokenPrefix+"guess"+strconv.Itoa(i))...))
	}
	r := e.do("GET", "/api/v1/search?q=x", nil, as(shelfmark.TokenPrefix+"guess")...)
	r.wantError(t, http.StatusTooManyRequests, shelfmark.ETOOMANY)
	r.wantNoStatements(t)
	if r.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	// While the address waits, a good token from it waits too (else the
	// answer would tell good guesses from bad); anonymous reads go on.
	e.do("GET", "/api/v1/search?q=x", nil).wantError(t, http.StatusTooManyRequests, shelfmark.ETOOMANY)
	e.do("GET", "/api/v1/search?q=x", nil, as("")...).want(t, http.StatusOK)
	advance(time.Second)
	e.do("GET", "/api/v1/search?q=x", nil).want(t, http.StatusOK)
}

func TestLimiter(t *testing.T) {
	l := newLimiter(2, nil)
	at := time.Unix(1e9, 0)
	l.now = func() time.Time { return at }
	// per user name, whatever the address
	for i := 0; i < 3; i++ {
		l.fail("ip:10.0.0."+strconv.Itoa(i), "user:ann")
	}
	if l.blocked("ip:10.0.0.9", "user:ann") != time.Second {
		t.Errorf("ann not blocked for 1 s: %v", l.blocked("ip:10.0.0.9", "user:ann"))
	}
	if l.blocked("ip:10.0.0.9", "user:bob") != 0 {
		t.Error("bob blocked")
	}
	// the wait doubles up to the maximum
	for i := 0; i < 40; i++ {
		l.fail("user:ann")
	}
	if got := l.blocked("user:ann"); got != authBackoffMax {
		t.Errorf("wait %v", got)
	}
	// failures are forgotten after a quiet while
	at = at.Add(authBackoffMax + authForget + time.Second)
	l.fail("user:ann")
	if got := l.blocked("user:ann"); got != 0 {
		t.Errorf("old failures remembered: %v", got)
	}
	// the map stays bounded, and keys that wait are kept longest
	l = newLimiter(2, nil)
	l.tracked = 100
	l.now = func() time.Time { return at }
	for i := 0; i < 3; i++ {
		l.fail("ip:attacker")
	}
	for i := 0; i < 10000; i++ {
		l.fail("ip:" + strconv.Itoa(i))
	}
	if len(l.m) > 100 {
		t.Errorf("%d keys tracked", len(l.m))
	}
	if l.blocked("ip:attacker") == 0 {
		t.Error("a waiting key was dropped")
	}
	if l.sweeps.Load() == 0 {
		t.Error("no sweep")
	}
	if clientKey(&http.Request{RemoteAddr: "[2001:db8::1]:5000"}) != clientKey(&http.Request{RemoteAddr: "[2001:db8::2]:6000"}) {
		t.Error("an IPv6 /64 is not one client")
	}
	if clientKey(&http.Request{RemoteAddr: "10.0.0.1:5000"}) == clientKey(&http.Request{RemoteAddr: "10.0.0.2:5000"}) {
		t.Error("two IPv4 clients are one")
	}
}

func TestMetricsAndJobsNeedAdmin(t *testing.T) {
	e := newEnv(t, Options{})
	ann := e.addUser("ann", shelfmark.ScopeWrite)
	// an administrator whose token has the write scope only
	if _, err := e.accounts.AddUser(context.Background(), "root", "", true, nil); err != nil {
		t.Fatal(err)
	}
	rootWrite := newToken(t, e.accounts, "root", shelfmark.ScopeWrite)
	for _, rq := range []struct{ method, path string }{
		{"GET", "/metrics"},
		{"GET", "/api/v1/jobs"},
		{"GET", "/api/v1/jobs/ocr"},
		{"POST", "/api/v1/jobs/ocr/pause"},
		{"POST", "/api/v1/jobs/ocr/retry"},
		{"GET", "/api/v1/audit"},
	} {
		r := e.do(rq.method, rq.path, nil, as("")...)
		r.wantError(t, http.StatusUnauthorized, shelfmark.EUNAUTHORIZED)
		r.wantNoWrites(t)
		for _, tok := range []string{ann, rootWrite} {
			r := e.do(rq.method, rq.path, nil, as(tok)...)
			r.wantError(t, http.StatusForbidden, shelfmark.EFORBIDDEN)
			r.wantNoWrites(t)
		}
	}
	var jobs struct {
		Queues []api.QueueJSON `json:"queues"`
	}
	e.do("GET", "/api/v1/jobs", nil).want(t, http.StatusOK).json(t, &jobs)
	for _, q := range jobs.Queues {
		if q.Paused {
			t.Errorf("queue %s paused", q.Queue)
		}
	}
	e.do("POST", "/api/v1/jobs/ocr/pause", nil).want(t, http.StatusOK)
	if r := e.do("GET", "/metrics", nil).want(t, http.StatusOK); !strings.Contains(string(r.Body), "shelfmark_http_requests_total") {
		t.Error("no metrics")
	}
	// The operators' listener serves metrics and profiles without a
	// credential.
	dbg := &http.Server{Handler: e.srv.DebugHandler()}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go dbg.Serve(ln)
	t.Cleanup(func() { dbg.Close() })
	for _, p := range []string{"/metrics", "/debug/pprof/"} {
		res, err := http.Get("http://" + ln.Addr().String() + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("debug listener %s: %d", p, res.StatusCode)
		}
	}
	// The API's own listener has no profiles.
	e.do("GET", "/debug/pprof/", nil).wantError(t, http.StatusNotFound, shelfmark.ENOTFOUND)
}

// serveReal runs the server behind Serve (its timeouts and limits) on a
// loopback port and returns its address.
func serveReal(t *testing.T, e *testEnv) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- e.srv.Serve(ln, e.srv) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		e.srv.Shutdown(ctx)
		<-done
	})
	return ln.Addr().String()
}

// readStatus reads the status code of the answer on conn, waiting at
// most a generous minute.
func readStatus(t *testing.T, conn net.Conn) int {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode >= 400 && res.Header.Get("Content-Type") == "application/json" {
		if why := checkErrorBody(res.Header.Get("Content-Type"), b); why != "" {
			t.Errorf("error body: %s: %q", why, b)
		}
	}
	return res.StatusCode
}

func TestSlowBodyIsCutOff(t *testing.T) {
	// A body must come at 1000 bytes a second once 200 ms have passed; the
	// client sends a byte every 20 ms (50 bytes a second).
	e := newEnv(t, Options{BodyTimeout: 200 * time.Millisecond, MinBodyRate: 1000})
	addr := serveReal(t, e)
	before := e.counts()
	for _, path := range []string{"/api/v1/works", "/api/v1/blobs"} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		const size = 100000
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{", path, addr, e.admin, size)
		sent := make(chan int, 1)
		go func() {
			n := 1
			for ; n < size; n++ {
				time.Sleep(20 * time.Millisecond)
				if _, err := conn.Write([]byte(" ")); err != nil {
					break
				}
			}
			sent <- n
		}()
		if got := readStatus(t, conn); got != http.StatusRequestTimeout {
			t.Errorf("%s: status %d, want 408", path, got)
		}
		conn.Close()
		if n := <-sent; n >= size {
			t.Errorf("%s: the whole body was read (%d bytes)", path, n)
		}
	}
	e.wantCounts(before)
	e.wantTmpEmpty()
	// A body at a good pace is read whole.
	e.create("/api/v1/works", `{}`)
}

func TestSlowAndHugeHeaders(t *testing.T) {
	e := newEnv(t, Options{ReadHeaderTimeout: 200 * time.Millisecond, MaxHeaderBytes: 4096})
	addr := serveReal(t, e)
	// headers that never end: the connection is closed
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	if _, err := io.ReadAll(conn); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the connection was not closed by the server: %v", err)
	}
	// headers beyond the limit: 431
	conn2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close()
	fmt.Fprintf(conn2, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: %s\r\n\r\n", strings.Repeat("b", 10000))
	if got := readStatus(t, conn2); got != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("status %d, want 431", got)
	}
}

func TestConcurrentUploadCap(t *testing.T) {
	e := newEnv(t, Options{MaxConcurrentUploads: 1})
	pr, pw := io.Pipe()
	first := make(chan int, 1)
	go func() {
		req := e.request("POST", "/api/v1/blobs", unknownLength{pr}, "Content-Type", "application/octet-stream")
		res, err := e.client.Do(req)
		if err != nil {
			first <- 0
			return
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		first <- res.StatusCode
	}()
	if _, err := pw.Write([]byte("first upload, ")); err != nil {
		t.Fatal(err)
	}
	// wait (generously) until the first upload holds the slot
	for deadline := time.Now().Add(time.Minute); len(e.srv.uploads) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first upload never reached its handler")
		}
	}
	r := e.do("POST", "/api/v1/blobs", "second upload", "Content-Type", "application/octet-stream")
	r.wantError(t, http.StatusServiceUnavailable, shelfmark.EUNAVAILABLE)
	if r.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	// metadata requests are not uploads
	e.create("/api/v1/works", `{}`)
	pw.Write([]byte("the end"))
	pw.Close()
	if got := <-first; got != http.StatusCreated {
		t.Fatalf("first upload: %d", got)
	}
	e.do("POST", "/api/v1/blobs", "third upload", "Content-Type", "application/octet-stream").want(t, http.StatusCreated)
}

// BenchmarkEnvelope measures what the envelope adds to a request that
// does nothing (GET /healthz): anonymous, and with a token (in the
// accounts' cache, as a busy client's is).
func BenchmarkEnvelope(b *testing.B) {
	e := newEnv(b, Options{})
	b.Run("routes only", func(b *testing.B) { // without the envelope, for comparison
		req := httptest.NewRequest("GET", "/healthz", nil)
		b.ReportAllocs()
		for b.Loop() {
			w := httptest.NewRecorder()
			e.srv.mux.ServeHTTP(w, req)
		}
	})
	for _, bc := range []struct{ name, auth string }{{"anonymous", ""}, {"token", "Bearer " + e.admin}} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest("GET", "/healthz", nil)
			if bc.auth != "" {
				req.Header.Set("Authorization", bc.auth)
			}
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				e.srv.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}

// TestEveryHandlerHasACaller: the OAI-PMH handler (mounted beside the
// routes) sees the request's caller, never the system a context without
// one stands for, and is not reached with a bad credential.
func TestEveryHandlerHasACaller(t *testing.T) {
	var mu sync.Mutex
	var seen []*shelfmark.Caller
	oai := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, shelfmark.CallerFrom(r.Context()))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/xml")
		io.WriteString(w, "<OAI-PMH/>")
	})
	e := newEnv(t, Options{OAI: oai})
	e.do("GET", "/oai?verb=Identify", nil, as("")...).want(t, http.StatusOK)
	e.do("GET", "/oai?verb=Identify", nil).want(t, http.StatusOK)
	e.do("POST", "/oai", "verb=Identify", as("", "Content-Type", "application/x-www-form-urlencoded")...).want(t, http.StatusOK)
	wantInvalidToken(t, e.do("GET", "/oai?verb=Identify", nil, as("smk_bad")...))
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 {
		t.Fatalf("the OAI handler ran %d times", len(seen))
	}
	if c := seen[0]; c.System || c.Authenticated() || c.Request == "" {
		t.Errorf("anonymous: the OAI handler saw %+v", c)
	}
	if c := seen[1]; c.System || c.Name != "admin" || !c.IsAdmin() {
		t.Errorf("admin: the OAI handler saw %+v", c)
	}
	if c := seen[2]; c.System || c.Authenticated() {
		t.Errorf("anonymous POST: the OAI handler saw %+v", c)
	}
}

// TestStaleSessionSignsInAgain: a browser whose session ended (logged out
// elsewhere, expired, revoked) still sends its cookie; signing in again
// with a password must work, and signing out must not fail.
func TestStaleSessionSignsInAgain(t *testing.T) {
	e := newEnv(t, Options{})
	cookie := e.login("admin", adminPassword)
	e.do("POST", "/api/v1/logout", "", as("", "Cookie", cookie)...).want(t, http.StatusNoContent)
	e.do("GET", "/api/v1/me", "", as("", "Cookie", cookie)...).want(t, http.StatusUnauthorized)
	e.do("POST", "/api/v1/logout", "", as("", "Cookie", cookie)...).want(t, http.StatusNoContent)
	e.do("POST", "/api/v1/login", `{"name": "admin", "password": "`+adminPassword+`"}`,
		as("", "Cookie", cookie, "Content-Type", "application/json")...).want(t, http.StatusOK)
}

// TestClientBehindTrustedProxy: behind a trusted proxy the limiter counts
// the address the proxy saw (the last X-Forwarded-For entry no trusted
// proxy added); a client's own X-Forwarded-For, sent directly or through
// the proxy, names nobody.
func TestClientBehindTrustedProxy(t *testing.T) {
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/24"), netip.MustParsePrefix("127.0.0.1/32")}
	req := func(remote string, xff ...string) *http.Request {
		r := &http.Request{RemoteAddr: remote, Header: http.Header{}}
		for _, v := range xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		return r
	}
	for _, c := range []struct {
		r    *http.Request
		want string
	}{
		{req("10.0.0.5:4000", "192.0.2.7"), "ip:192.0.2.7"},
		{req("10.0.0.5:4000", "198.51.100.1, 192.0.2.7"), "ip:192.0.2.7"},   // the first entry is the client's claim
		{req("10.0.0.5:4000", "192.0.2.7, 127.0.0.1"), "ip:192.0.2.7"},      // two trusted proxies
		{req("10.0.0.5:4000", "198.51.100.1", "192.0.2.7"), "ip:192.0.2.7"}, // several headers
		{req("10.0.0.5:4000"), "ip:10.0.0.5"},                               // no header: the proxy itself
		{req("10.0.0.5:4000", "not an address"), "ip:10.0.0.5"},             // garbage names nobody
		{req("203.0.113.9:4000", "192.0.2.7"), "ip:203.0.113.9"},            // not a trusted proxy: header ignored
		{req("10.0.0.5:4000", "2001:db8::1"), "ip:2001:db8::/64"},           // an IPv6 client by its /64
		{req("[::ffff:10.0.0.5]:4000", "192.0.2.7"), "ip:192.0.2.7"},        // a mapped proxy address
	} {
		if got := clientKeyVia(c.r, trusted); got != c.want {
			t.Errorf("%s with X-Forwarded-For %q: %s, want %s", c.r.RemoteAddr, c.r.Header.Values("X-Forwarded-For"), got, c.want)
		}
	}
	if got := clientKey(req("10.0.0.5:4000", "192.0.2.7")); got != "ip:10.0.0.5" {
		t.Errorf("without trusted proxies the header counted: %s", got)
	}
}
