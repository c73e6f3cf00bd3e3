package http

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// sprayServers returns two servers on the policy environment's database
// that share their limiter's failures through it, behind a trusted proxy
// on 127.0.0.0/8 (so that X-Forwarded-For names the client), with one
// frozen clock.
func sprayServers(t *testing.T, e *policyEnv) (a, b *httptest.Server) {
	t.Helper()
	af, ok := e.store.(shelfmark.AuthFailures)
	if !ok {
		t.Fatalf("the %s backend does not share failures", e.backend)
	}
	at := time.Now()
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return at }
	var tss [2]*httptest.Server
	for i := range tss {
		opts := e.srv.opts
		opts.AuthFailures = af
		opts.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
		s := NewServer(opts)
		s.limiter.now = now
		tss[i] = httptest.NewServer(s)
		t.Cleanup(tss[i].Close)
	}
	return tss[0], tss[1]
}

// sprayRequest sends a request from the client address from (through
// the trusted proxy) and returns the status.
func sprayRequest(t *testing.T, ts *httptest.Server, from, method, path, token, body string) int {
	t.Helper()
	req, err := http.NewRequest(method, ts.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Forwarded-For", from)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestSprayingIsBlockedPerAddress: a success clears only the failures of
// the principal that authenticated, never the client address's, so an
// attacker who slips a good credential of their own (a token, a
// password) between guesses is still blocked per address once it has
// failed more than the limit, on every server sharing the database; and
// a user who mistyped a password is forgiven those failures when it
// signs in.
func TestSprayingIsBlockedPerAddress(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{MaxAuthFailures: 3})
		a, b := sprayServers(t, e)
		search := func(ts *httptest.Server, from, token string) int {
			return sprayRequest(t, ts, from, "GET", "/api/v1/search?q=x", token, "")
		}
		login := func(ts *httptest.Server, from, name, password string) int {
			return sprayRequest(t, ts, from, "POST", "/api/v1/login", "", `{"name": "`+name+`", "password": "`+password+`"}`)
		}
		bad := shelfmark.TokenPrefix + "guess"

		// guessing tokens, with a good one of the attacker's after each
		// three guesses, on either server
		const tokens = "203.0.113.5"
		for i, ts := range []*httptest.Server{a, b, a} {
			if got := search(ts, tokens, bad); got != http.StatusUnauthorized {
				t.Fatalf("token guess %d: %d", i+1, got)
			}
		}
		if got := search(a, tokens, e.admin); got != http.StatusOK {
			t.Fatalf("the good token after 3 guesses: %d", got)
		}
		if got := search(b, tokens, bad); got != http.StatusUnauthorized {
			t.Fatalf("token guess 4: %d", got)
		}
		if got := search(b, tokens, e.admin); got != http.StatusTooManyRequests {
			t.Errorf("the good token after 4 guesses from one address, one good token between: %d, want 429", got)
		}

		// spraying passwords over many user names, with a good sign-in
		// of the attacker's own account between
		const spray = "203.0.113.6"
		for i, name := range []string{"ann", "bob", "cyd"} {
			if got := login([]*httptest.Server{a, b}[i%2], spray, name, "Winter2026!"); got != http.StatusUnauthorized {
				t.Fatalf("spraying %s: %d", name, got)
			}
		}
		if got := login(a, spray, "admin", adminPassword); got != http.StatusOK {
			t.Fatalf("the attacker's own sign-in after 3 guesses: %d", got)
		}
		if got := login(a, spray, "dan", "Winter2026!"); got != http.StatusUnauthorized {
			t.Fatalf("spraying dan: %d", got)
		}
		if got := login(a, spray, "eve", "Winter2026!"); got != http.StatusTooManyRequests {
			t.Errorf("spraying a fifth name after 4 failures from one address, one good sign-in between: %d, want 429", got)
		}
		if got := search(a, spray, e.admin); got != http.StatusTooManyRequests {
			t.Errorf("a good token from the spraying address: %d, want 429", got)
		}

		// a user's own sign-in forgives its name's failures: two typos
		// from one address, a good sign-in, two typos from another, and
		// the name is not blocked (4 failures in all, 2 since)
		for _, from := range []string{"198.51.100.1", "198.51.100.2"} {
			for i := range 2 {
				if got := login(b, from, "admin", "typo"); got != http.StatusUnauthorized {
					t.Fatalf("typo %d from %s: %d", i+1, from, got)
				}
			}
			if got := login(b, from, "admin", adminPassword); got != http.StatusOK {
				t.Errorf("the user's sign-in from %s after 2 typos: %d, want 200", from, got)
			}
		}
	})
}

// TestOIDCSignInForgivesNoAddress: a sign-in through the identity
// provider does not clear the failures of the address it comes from.
func TestOIDCSignInForgivesNoAddress(t *testing.T) {
	e, _ := newOIDCEnv(t)
	e.srv.limiter.max = 3
	bad := shelfmark.TokenPrefix + "guess"
	for range 3 {
		wantInvalidToken(t, e.do("GET", "/api/v1/search?q=x", nil, as(bad)...))
	}
	if st, _, body := signIn(t, e, browser(t), ""); st != http.StatusSeeOther {
		t.Fatalf("sign-in: %d %s", st, body)
	}
	wantInvalidToken(t, e.do("GET", "/api/v1/search?q=x", nil, as(bad)...))
	e.do("GET", "/api/v1/search?q=x", nil).wantError(t, http.StatusTooManyRequests, shelfmark.ETOOMANY)
}
