package http

// The single sign-on tests run a real OpenID Connect provider on loopback
// (discovery, JWKS with an RSA key made here, an authorization endpoint
// that sends the browser back with a code, a token endpoint that checks
// the PKCE verifier and signs an ID token with go-jose) and drive the
// whole flow with a cookie-jar client, as a browser would.

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/shelfmark/shelfmark"
)

const (
	idpClientID     = "shelfmark-test"
	idpClientSecret = "test-client-secret"
)

// testIdP is an OpenID Connect provider served by the test.
type testIdP struct {
	t      *testing.T
	srv    *httptest.Server
	key    *rsa.PrivateKey
	signer jose.Signer

	mu    sync.Mutex
	codes map[string]idpGrant
	// what the next ID tokens say
	user     string         // preferred_username ("" leaves it out)
	sub      string         // subject
	groups   any            // the groups claim (nil leaves it out)
	audience []string       // default the client id
	lifetime time.Duration  // default 1 h; negative: already expired
	nonce    *string        // default the one asked for
	extra    map[string]any // more claims
	// authError, when set, is the error the authorization endpoint
	// sends back instead of a code.
	authError string
	// scopes asked for at the last authorization
	lastScope string
}

// idpGrant is an authorization code and what it was given for.
type idpGrant struct {
	nonce, challenge, redirect string
}

func newTestIdP(t *testing.T) *testIdP {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.RS256, Key: key},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", "k1"))
	if err != nil {
		t.Fatal(err)
	}
	p := &testIdP{t: t, key: key, signer: signer, codes: map[string]idpGrant{}, user: "ann", sub: "subject-ann"}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", p.discovery)
	mux.HandleFunc("GET /jwks", p.jwks)
	mux.HandleFunc("GET /authorize", p.authorize)
	mux.HandleFunc("POST /token", p.token)
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *testIdP) discovery(w http.ResponseWriter, r *http.Request) {
	u := p.srv.URL
	writeTestJSON(w, http.StatusOK, map[string]any{
		"issuer": u, "authorization_endpoint": u + "/authorize", "token_endpoint": u + "/token", "jwks_uri": u + "/jwks",
		"response_types_supported": []string{"code"}, "subject_types_supported": []string{"public"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"scopes_supported":                      []string{"openid", "profile", "email", "groups"},
		"code_challenge_methods_supported":      []string{"S256"},
	})
}

func (p *testIdP) jwks(w http.ResponseWriter, r *http.Request) {
	writeTestJSON(w, http.StatusOK, jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &p.key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
}

// authorize checks the request as a provider would and sends the browser
// back with a code (at once: the person is signed in at the provider).
func (p *testIdP) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	for name, want := range map[string]string{"response_type": "code", "client_id": idpClientID, "code_challenge_method": "S256"} {
		if q.Get(name) != want {
			http.Error(w, fmt.Sprintf("%s = %q, want %q", name, q.Get(name), want), http.StatusBadRequest)
			return
		}
	}
	for _, name := range []string{"redirect_uri", "state", "nonce", "code_challenge", "scope"} {
		if q.Get(name) == "" {
			http.Error(w, "no "+name, http.StatusBadRequest)
			return
		}
	}
	back, err := url.Parse(q.Get("redirect_uri"))
	if err != nil {
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.lastScope = q.Get("scope")
	out := url.Values{"state": {q.Get("state")}}
	if p.authError != "" {
		out.Set("error", p.authError)
		out.Set("error_description", "The person said no.")
	} else {
		code := rand.Text()
		p.codes[code] = idpGrant{nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
		out.Set("code", code)
	}
	p.mu.Unlock()
	back.RawQuery = out.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// token exchanges a code for an ID token: it checks the client's secret,
// the redirect URI and the PKCE verifier.
func (p *testIdP) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != idpClientID || secret != idpClientSecret {
		writeTestJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	p.mu.Lock()
	g, ok := p.codes[r.PostForm.Get("code")]
	delete(p.codes, r.PostForm.Get("code"))
	p.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	switch {
	case r.PostForm.Get("grant_type") != "authorization_code", !ok:
		writeTestJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	case r.PostForm.Get("redirect_uri") != g.redirect, base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
		writeTestJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "PKCE or redirect_uri"})
		return
	}
	writeTestJSON(w, http.StatusOK, map[string]any{"access_token": rand.Text(), "token_type": "Bearer", "expires_in": 3600,
		"id_token": p.idToken(g.nonce)})
}

// idToken signs the ID token the provider's settings describe.
func (p *testIdP) idToken(nonce string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	life := p.lifetime
	if life == 0 {
		life = time.Hour
	}
	aud := p.audience
	if aud == nil {
		aud = []string{idpClientID}
	}
	if p.nonce != nil {
		nonce = *p.nonce
	}
	claims := map[string]any{"iss": p.srv.URL, "sub": p.sub, "aud": aud, "iat": now.Add(-time.Minute).Unix(),
		"exp": now.Add(life).Unix(), "nonce": nonce}
	if p.user != "" {
		claims["preferred_username"] = p.user
	}
	if p.groups != nil {
		claims["groups"] = p.groups
	}
	for k, v := range p.extra {
		claims[k] = v
	}
	raw, err := jwt.Signed(p.signer).Claims(claims).Serialize()
	if err != nil {
		p.t.Error(err)
	}
	return raw
}

func (p *testIdP) set(f func(p *testIdP)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	f(p)
}

func writeTestJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// newOIDCEnv is a server whose single sign-on goes to a test provider.
func newOIDCEnv(t *testing.T) (*testEnv, *testIdP) {
	t.Helper()
	idp := newTestIdP(t)
	e := newEnv(t, Options{OIDC: OIDCOptions{Issuer: idp.srv.URL, ClientID: idpClientID, ClientSecret: idpClientSecret}})
	return e, idp
}

// browser is a client with a cookie jar that follows no redirect itself.
func browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// visit GETs a URL with the browser and returns the status, the Location
// and the body.
func visit(t *testing.T, b *http.Client, u string) (int, string, []byte) {
	t.Helper()
	res, err := b.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := res.Header.Get("Content-Type"); res.StatusCode >= 400 && !strings.HasPrefix(ct, "text/plain") { // the provider's are text
		if why := checkErrorBody(ct, body); why != "" {
			t.Errorf("GET %s -> %d: error body: %s: %q", u, res.StatusCode, why, body)
		}
	}
	loc := res.Header.Get("Location")
	if loc != "" {
		lu, err := res.Request.URL.Parse(loc)
		if err != nil {
			t.Fatal(err)
		}
		loc = lu.String()
	}
	return res.StatusCode, loc, body
}

// toCallback signs in at the provider: login, then authorize; it returns
// the callback URL the provider sends the browser to.
func toCallback(t *testing.T, e *testEnv, b *http.Client, next string) string {
	t.Helper()
	path := "/auth/oidc/login"
	if next != "" {
		path += "?next=" + url.QueryEscape(next)
	}
	st, loc, body := visit(t, b, e.ts.URL+path)
	if st != http.StatusFound {
		t.Fatalf("login: %d %s", st, body)
	}
	st, loc, body = visit(t, b, loc)
	if st != http.StatusFound || !strings.HasPrefix(loc, e.ts.URL+"/auth/oidc/callback?") {
		t.Fatalf("provider: %d %q %s", st, loc, body)
	}
	return loc
}

// signIn runs the whole flow and returns the callback's status, Location
// and body.
func signIn(t *testing.T, e *testEnv, b *http.Client, next string) (int, string, []byte) {
	t.Helper()
	return visit(t, b, toCallback(t, e, b, next))
}

// wantSSOFailure checks a 401 from the callback and its message.
func wantSSOFailure(t *testing.T, st int, body []byte, says string) {
	t.Helper()
	var eb apiError
	if st != http.StatusUnauthorized || json.Unmarshal(body, &eb) != nil || eb.Code != string(shelfmark.EUNAUTHORIZED) || !strings.Contains(eb.Message, says) {
		t.Fatalf("callback: %d %s; want 401 unauthorized saying %q", st, body, says)
	}
}

// failedLogins returns the details of the failed logins in the audit
// trail.
func failedLogins(t *testing.T, e *testEnv) []string {
	t.Helper()
	entries, err := e.accounts.Audit(context.Background(), shelfmark.AuditQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, a := range entries {
		if a.Action == "login" && a.Outcome == shelfmark.AuditFailed {
			out = append(out, a.Actor+": "+a.Detail)
		}
	}
	return out
}

func TestOIDCSignIn(t *testing.T) {
	e, idp := newOIDCEnv(t)
	idp.set(func(p *testIdP) { p.groups = []any{"staff", "cataloguers", "/not a group"} })
	b := browser(t)

	// login: a redirect to the provider with state, nonce and PKCE, and a
	// state cookie only the single sign-on routes see
	st, loc, body := visit(t, b, e.ts.URL+"/auth/oidc/login?next="+url.QueryEscape("/api/v1/me?x=1"))
	if st != http.StatusFound || !strings.HasPrefix(loc, idp.srv.URL+"/authorize?") {
		t.Fatalf("login: %d %q %s", st, loc, body)
	}
	au, _ := url.Parse(loc)
	q := au.Query()
	if q.Get("code_challenge_method") != "S256" || q.Get("state") == "" || q.Get("nonce") == "" || q.Get("redirect_uri") != e.ts.URL+"/auth/oidc/callback" {
		t.Errorf("authorization request %s", loc)
	}
	if got := q.Get("scope"); got != "openid profile email groups" {
		t.Errorf("scope %q: the provider lists groups among its scopes", got)
	}
	su, _ := url.Parse(e.ts.URL + "/auth/oidc/callback")
	var flow *http.Cookie
	for _, c := range b.Jar.Cookies(su) {
		if c.Name == oidcCookie {
			flow = c
		}
	}
	if flow == nil || strings.Contains(flow.Value, q.Get("state")) {
		t.Fatalf("state cookie %v: missing, or the state is readable in it", flow)
	}
	mu, _ := url.Parse(e.ts.URL + "/api/v1/me")
	for _, c := range b.Jar.Cookies(mu) {
		if c.Name == oidcCookie {
			t.Errorf("the state cookie goes to %s", mu)
		}
	}

	// the provider sends the browser back; the callback opens a session
	// and goes on to next
	st, loc, body = visit(t, b, loc)
	if st != http.StatusFound {
		t.Fatalf("provider: %d %s", st, body)
	}
	st, loc, body = visit(t, b, loc)
	if st != http.StatusSeeOther || loc != e.ts.URL+"/api/v1/me?x=1" {
		t.Fatalf("callback: %d %q %s", st, loc, body)
	}
	st, _, body = visit(t, b, loc)
	var me callerJSON
	if st != http.StatusOK || json.Unmarshal(body, &me) != nil {
		t.Fatalf("me: %d %s", st, body)
	}
	if me.User != "ann" || me.Admin || strings.Join(me.Groups, ",") != "cataloguers,staff" || me.Via != "session" || me.Scope != "write" {
		t.Errorf("me: %+v", me)
	}

	// the state is for one use
	for _, c := range b.Jar.Cookies(su) {
		if c.Name == oidcCookie {
			t.Errorf("the state cookie outlived its sign-in")
		}
	}

	// the next sign-in replaces the groups with the provider's
	idp.set(func(p *testIdP) { p.groups = "readers" })
	b2 := browser(t)
	if st, loc, body := signIn(t, e, b2, ""); st != http.StatusSeeOther || loc != e.ts.URL+"/" {
		t.Fatalf("second sign-in: %d %q %s", st, loc, body)
	}
	_, _, body = visit(t, b2, e.ts.URL+"/api/v1/me")
	if err := json.Unmarshal(body, &me); err != nil || me.User != "ann" || strings.Join(me.Groups, ",") != "readers" {
		t.Errorf("me after the second sign-in: %s", body)
	}
	if bad := failedLogins(t, e); len(bad) != 0 {
		t.Errorf("failed logins recorded: %q", bad)
	}
}

func TestOIDCRefusals(t *testing.T) {
	e, idp := newOIDCEnv(t)
	// the refusals below all come from one address, more of them than
	// the limiter's default allows (a sign-in between forgives the
	// address nothing)
	e.srv.limiter.max = 100

	t.Run("wrong state", func(t *testing.T) {
		b := browser(t)
		cb := toCallback(t, e, b, "")
		u, _ := url.Parse(cb)
		q := u.Query()
		q.Set("state", "not-the-state")
		u.RawQuery = q.Encode()
		st, _, body := visit(t, b, u.String())
		wantSSOFailure(t, st, body, "state does not match")
		// and the real state no longer works either: the cookie is gone
		st, _, body = visit(t, b, cb)
		wantSSOFailure(t, st, body, "state cookie is missing")
	})
	t.Run("no state cookie", func(t *testing.T) {
		b := browser(t)
		cb := toCallback(t, e, b, "")
		st, _, body := visit(t, browser(t), cb) // another browser
		wantSSOFailure(t, st, body, "state cookie is missing")
	})
	t.Run("wrong audience", func(t *testing.T) {
		idp.set(func(p *testIdP) { p.audience = []string{"another-client"} })
		defer idp.set(func(p *testIdP) { p.audience = nil })
		st, _, body := signIn(t, e, browser(t), "")
		wantSSOFailure(t, st, body, "not valid for this server")
	})
	t.Run("several audiences, azp another client", func(t *testing.T) {
		idp.set(func(p *testIdP) {
			p.audience = []string{idpClientID, "another-client"}
			p.extra = map[string]any{"azp": "another-client"}
		})
		defer idp.set(func(p *testIdP) { p.audience, p.extra = nil, nil })
		st, _, body := signIn(t, e, browser(t), "")
		wantSSOFailure(t, st, body, "azp")
	})
	t.Run("expired token", func(t *testing.T) {
		idp.set(func(p *testIdP) { p.lifetime = -time.Hour })
		defer idp.set(func(p *testIdP) { p.lifetime = 0 })
		st, _, body := signIn(t, e, browser(t), "")
		wantSSOFailure(t, st, body, "expired")
	})
	t.Run("wrong nonce", func(t *testing.T) {
		other := "another-nonce"
		idp.set(func(p *testIdP) { p.nonce = &other })
		defer idp.set(func(p *testIdP) { p.nonce = nil })
		st, _, body := signIn(t, e, browser(t), "")
		wantSSOFailure(t, st, body, "nonce")
	})
	t.Run("provider error", func(t *testing.T) {
		idp.set(func(p *testIdP) { p.authError = "access_denied" })
		defer idp.set(func(p *testIdP) { p.authError = "" })
		st, _, body := signIn(t, e, browser(t), "")
		wantSSOFailure(t, st, body, "access_denied")
	})
	t.Run("an old callback", func(t *testing.T) {
		b := browser(t)
		cb := toCallback(t, e, b, "")
		if st, _, body := visit(t, b, cb); st != http.StatusSeeOther {
			t.Fatalf("first use: %d %s", st, body)
		}
		// a new sign-in's cookie with the old code and state
		toCallback(t, e, b, "")
		st, _, body := visit(t, b, cb)
		wantSSOFailure(t, st, body, "state does not match")
	})
	t.Run("a password account's name", func(t *testing.T) {
		idp.set(func(p *testIdP) { p.user = "admin" })
		defer idp.set(func(p *testIdP) { p.user = "ann" })
		st, _, body := signIn(t, e, browser(t), "")
		wantSSOFailure(t, st, body, "signs in with a password")
	})
	t.Run("an administrator without a password", func(t *testing.T) {
		if _, err := e.accounts.AddUser(context.Background(), "root2", "", true, nil); err != nil {
			t.Fatal(err)
		}
		idp.set(func(p *testIdP) { p.user = "root2" })
		defer idp.set(func(p *testIdP) { p.user = "ann" })
		st, _, body := signIn(t, e, browser(t), "")
		wantSSOFailure(t, st, body, "administrator")
	})
	t.Run("a name this server cannot hold", func(t *testing.T) {
		idp.set(func(p *testIdP) { p.user = "-rm -rf" })
		defer idp.set(func(p *testIdP) { p.user = "ann" })
		st, _, body := signIn(t, e, browser(t), "")
		wantSSOFailure(t, st, body, "is not valid here")
	})
	t.Run("disabled user", func(t *testing.T) {
		idp.set(func(p *testIdP) { p.user = "bob" })
		defer idp.set(func(p *testIdP) { p.user = "ann" })
		if st, _, body := signIn(t, e, browser(t), ""); st != http.StatusSeeOther {
			t.Fatalf("first sign-in: %d %s", st, body)
		}
		if err := e.accounts.SetDisabled(context.Background(), "bob", true); err != nil {
			t.Fatal(err)
		}
		st, _, body := signIn(t, e, browser(t), "")
		wantSSOFailure(t, st, body, "disabled")
	})

	// every refusal is a failed login in the audit trail
	bad := failedLogins(t, e)
	for _, want := range []string{"state does not match", "state cookie is missing", "not valid for this server", "azp", "expired", "nonce",
		"access_denied", "admin: single sign-on: the name", "root2: single sign-on", "is not valid here", "bob: disabled user"} {
		found := false
		for _, b := range bad {
			found = found || strings.Contains(b, want)
		}
		if !found {
			t.Errorf("no failed login saying %q in the audit trail: %q", want, bad)
		}
	}
}

func TestOIDCPreProvisionedUser(t *testing.T) {
	// An administrator may make a user without a password, grant it roles,
	// and let it sign in through the provider later; the subject claim
	// names users when the provider gives no preferred_username.
	e, idp := newOIDCEnv(t)
	if _, err := e.accounts.AddUser(context.Background(), "carol", "", false, []string{"old"}); err != nil {
		t.Fatal(err)
	}
	idp.set(func(p *testIdP) { p.user, p.sub = "", "carol" })
	b := browser(t)
	if st, _, body := signIn(t, e, b, ""); st != http.StatusSeeOther {
		t.Fatalf("sign-in: %d %s", st, body)
	}
	_, _, body := visit(t, b, e.ts.URL+"/api/v1/me")
	var me callerJSON
	if err := json.Unmarshal(body, &me); err != nil || me.User != "carol" || len(me.Groups) != 0 {
		t.Errorf("me: %s", body)
	}
}

func TestOIDCNext(t *testing.T) {
	e, _ := newOIDCEnv(t)
	for _, next := range []string{"//evil.example", "//evil.example/x", "https://evil.example/", "/\\evil.example", "\\\\evil.example",
		"evil.example", "/ok\r\nSet-Cookie: x=y", "/" + strings.Repeat("a", maxNextLen), "/a%zz", "/%2F%2Fevil.example", "/\t/evil.example"} {
		st, loc, body := visit(t, browser(t), e.ts.URL+"/auth/oidc/login?next="+url.QueryEscape(next))
		if st != http.StatusBadRequest || loc != "" {
			t.Errorf("next=%q: %d %q %s; want 400 and no redirect", next, st, loc, body)
		}
	}
	for _, next := range []string{"/", "/api/v1/me", "/a/b?c=d#e", "/a%2Fb", "/" + strings.Repeat("é", maxNextLen-1)} {
		if p, ok := returnPath(next); !ok || p != next {
			t.Errorf("returnPath(%q) = %q, %v", next, p, ok)
		}
	}
	// a local next is followed after the sign-in
	b := browser(t)
	st, loc, body := signIn(t, e, b, "/api/v1/search?q=x")
	if st != http.StatusSeeOther || loc != e.ts.URL+"/api/v1/search?q=x" {
		t.Errorf("callback: %d %q %s", st, loc, body)
	}
	// the longest next, in characters of 4 bytes, still fits the state
	// cookie in the 4096 bytes a browser keeps
	longest := "/" + strings.Repeat("😀", maxNextLen-1)
	res, err := browser(t).Get(e.ts.URL + "/auth/oidc/login?next=" + url.QueryEscape(longest))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if sc := res.Header.Get("Set-Cookie"); res.StatusCode != http.StatusFound || len(sc) > 4000 {
		t.Errorf("login with the longest next: %d, a cookie of %d bytes", res.StatusCode, len(sc))
	}
	b = browser(t)
	st, loc, body = signIn(t, e, b, longest)
	if lu, _ := url.Parse(loc); st != http.StatusSeeOther || lu == nil || lu.Path != longest {
		t.Errorf("callback with the longest next: %d %q %s", st, loc, body)
	}
}

func TestOIDCOff(t *testing.T) {
	e := newEnv(t, Options{})
	for _, p := range []string{"/auth/oidc/login", "/auth/oidc/callback?code=x&state=y"} {
		e.do("GET", p, nil, as("")...).wantError(t, http.StatusNotFound, string(shelfmark.ENOTFOUND))
	}
	// a provider that is down: 503 at sign-in, and the server works
	e = newEnv(t, Options{OIDC: OIDCOptions{Issuer: "http://127.0.0.1:1", ClientID: "x"}})
	e.do("GET", "/auth/oidc/login", nil, as("")...).wantError(t, http.StatusServiceUnavailable, string(shelfmark.EUNAVAILABLE))
	e.do("GET", "/healthz", nil, as("")...).want(t, http.StatusOK)
	if err := CheckOIDC(OIDCOptions{Issuer: "ftp://x", ClientID: "x"}); err == nil {
		t.Error("CheckOIDC accepts an ftp issuer")
	}
	if err := CheckOIDC(OIDCOptions{Issuer: "https://idp.example"}); err == nil {
		t.Error("CheckOIDC accepts an issuer without a client id")
	}
}

func TestOIDCStaleSession(t *testing.T) {
	// A browser whose session expired or was revoked still carries its
	// cookie; it must be able to sign in again through the provider
	// rather than be refused for the stale cookie.
	e, _ := newOIDCEnv(t)
	b := browser(t)
	if st, _, body := signIn(t, e, b, ""); st != http.StatusSeeOther {
		t.Fatalf("sign-in: %d %s", st, body)
	}
	u, _ := url.Parse(e.ts.URL + "/")
	b.Jar.SetCookies(u, []*http.Cookie{{Name: SessionCookie, Value: "smk_stale", Path: "/"}})
	if st, _, body := visit(t, b, e.ts.URL+"/api/v1/me"); st != http.StatusUnauthorized {
		t.Fatalf("me with a stale session: %d %s", st, body)
	}
	st, loc, body := signIn(t, e, b, "/api/v1/me")
	if st != http.StatusSeeOther || loc != e.ts.URL+"/api/v1/me" {
		t.Fatalf("sign-in with a stale session: %d %q %s", st, loc, body)
	}
	if st, _, body := visit(t, b, loc); st != http.StatusOK || !strings.Contains(string(body), `"user":"ann"`) {
		t.Errorf("me after signing in again: %d %s", st, body)
	}
}

func TestOIDCBruteForce(t *testing.T) {
	// Refused callbacks count against the client's address like failed
	// password logins: beyond MaxAuthFailures the next waits (429), and
	// the audit trail stops growing.
	idp := newTestIdP(t)
	e := newEnv(t, Options{MaxAuthFailures: 3, OIDC: OIDCOptions{Issuer: idp.srv.URL, ClientID: idpClientID, ClientSecret: idpClientSecret}})
	for i := 0; i < 4; i++ {
		e.do("GET", "/auth/oidc/callback?code=x&state=guess", nil, as("")...).wantError(t, http.StatusUnauthorized, string(shelfmark.EUNAUTHORIZED))
	}
	before := len(failedLogins(t, e))
	r := e.do("GET", "/auth/oidc/callback?code=x&state=guess", nil, as("")...)
	r.wantError(t, http.StatusTooManyRequests, string(shelfmark.ETOOMANY))
	r.wantNoWrites(t)
	if after := len(failedLogins(t, e)); after != before || before != 4 {
		t.Errorf("failed logins recorded: %d, then %d; want 4 and no more", before, after)
	}
}
