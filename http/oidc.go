package http

// This file signs people in through an OpenID Connect provider
// (institutional single sign-on): GET /auth/oidc/login sends the browser
// to the provider with a state, a nonce and a PKCE challenge, kept in a
// short-lived encrypted cookie; GET /auth/oidc/callback checks the state,
// exchanges the code (with the PKCE verifier), verifies the ID token
// (signature, issuer, audience, expiry, nonce), reads the user name and
// groups from its claims, opens a session through
// AccountService.LoginExternal and sets the same session cookie as the
// password login.

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// OIDCOptions configure sign-in through an OpenID Connect provider. With
// no Issuer, single sign-on is off and its routes answer 404.
type OIDCOptions struct {
	// Issuer is the provider's issuer URL (its discovery document is at
	// Issuer + "/.well-known/openid-configuration"). It is read at the
	// first sign-in, not at start, so the server starts while the
	// provider is down.
	Issuer string
	// ClientID and ClientSecret identify this server to the provider
	// (ClientSecret may be empty for a public client; PKCE is always
	// used).
	ClientID     string
	ClientSecret string
	// RedirectURL is the callback registered with the provider (default
	// BaseURL + "/auth/oidc/callback", or, without a BaseURL, the URL of
	// each request's Host).
	RedirectURL string
	// UsernameClaim names the ID token claim that gives the user name
	// (default "preferred_username", and "sub" when a token lacks it).
	UsernameClaim string
	// GroupsClaim names the claim that lists the user's groups (a list of
	// strings, or one string); default "groups", "-" for none. The
	// groups replace the user's at every sign-in.
	GroupsClaim string
	// Scopes are asked for (default openid, profile, email, and the
	// groups claim's name when the provider lists it among its
	// scopes_supported).
	Scopes []string
	// HTTPClient talks to the provider (default: a client with a 30 s
	// timeout).
	HTTPClient *http.Client
}

// The defaults of OIDCOptions and the limits of the flow.
const (
	defaultUsernameClaim = "preferred_username"
	defaultGroupsClaim   = "groups"
	// oidcCookie carries the state of one sign-in between the two routes.
	oidcCookie     = "shelfmark_oidc"
	oidcCookiePath = "/auth/oidc/"
	// oidcFlowTTL is how long a person may take at the provider.
	oidcFlowTTL = 10 * time.Minute
	// oidcRetry is how long a failed discovery is remembered before the
	// provider is asked again.
	oidcRetry   = 5 * time.Second
	oidcTimeout = 30 * time.Second
	// maxOIDCGroups bounds the groups a provider may give (the accounts'
	// own limit).
	maxOIDCGroups = 100
	maxClaimName  = 64
)

// oidcFlow is the state of one sign-in, kept encrypted in oidcCookie.
type oidcFlow struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Next     string `json:"next"`
	Redirect string `json:"r"`
	Expires  int64  `json:"e"` // Unix seconds
}

// oidcClient is the server's side of the provider.
type oidcClient struct {
	now  func() time.Time // the server's clock
	opts OIDCOptions
	aead cipher.AEAD

	mu       sync.Mutex
	provider *oidc.Provider
	verifier *oidc.IDTokenVerifier
	scopes   []string
	failed   time.Time // when discovery last failed
	lastErr  error
}

// newOIDCClient returns the client of opts, or nil when single sign-on is
// off. The state cookie's key comes from the client secret, so that every
// server sharing it can finish a sign-in another began; a public client
// (no secret) gets a key of this process.
func newOIDCClient(opts OIDCOptions) (*oidcClient, error) {
	if opts.Issuer == "" {
		return nil, nil
	}
	if opts.ClientID == "" {
		return nil, errors.New("OpenID Connect: a client id is needed with an issuer")
	}
	if u, err := url.Parse(opts.Issuer); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("OpenID Connect: the issuer %q is not an http(s) URL", opts.Issuer)
	}
	if opts.RedirectURL != "" {
		if u, err := url.Parse(opts.RedirectURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("OpenID Connect: the redirect URL %q is not an absolute http(s) URL", opts.RedirectURL)
		}
	}
	if opts.UsernameClaim == "" {
		opts.UsernameClaim = defaultUsernameClaim
	}
	if opts.GroupsClaim == "" {
		opts.GroupsClaim = defaultGroupsClaim
	}
	if len(opts.UsernameClaim) > maxClaimName || len(opts.GroupsClaim) > maxClaimName {
		return nil, errors.New("OpenID Connect: claim names take at most 64 bytes")
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: oidcTimeout}
	}
	key := make([]byte, 32)
	if opts.ClientSecret != "" {
		m := hmac.New(sha256.New, []byte(opts.ClientSecret))
		m.Write([]byte("shelfmark oidc state cookie v1"))
		key = m.Sum(nil)
	} else if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("OpenID Connect: state key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("OpenID Connect: state key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("OpenID Connect: state key: %w", err)
	}
	return &oidcClient{opts: opts, aead: aead}, nil
}

// setupOIDC prepares single sign-on from s.opts.OIDC. Settings that are
// not valid (CheckOIDC tells them first) leave its routes answering 503.
func (s *Server) setupOIDC() {
	o, err := newOIDCClient(s.opts.OIDC)
	if err != nil {
		s.log.Error("single sign-on is off", "err", err)
		s.oidc = &oidcClient{now: s.opts.Now}
		s.oidcErr = shelfmark.Errorf(shelfmark.EUNAVAILABLE, "Single sign-on is not available: this server's OpenID Connect settings are not valid.")
		return
	}
	if o != nil { // nil: single sign-on is off
		o.now = s.opts.Now
	}
	s.oidc = o
}

// CheckOIDC reports what is wrong with opts (for a command line to refuse
// before it starts a server).
func CheckOIDC(opts OIDCOptions) error {
	_, err := newOIDCClient(opts)
	return err
}

// discover reads the provider's discovery document, once; a failure is
// an EUNAVAILABLE error, remembered for oidcRetry so that a provider that
// is down is not asked at every request.
func (o *oidcClient) discover(ctx context.Context) (*oidc.Provider, *oidc.IDTokenVerifier, []string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.provider != nil {
		return o.provider, o.verifier, o.scopes, nil
	}
	if o.now().Sub(o.failed) < oidcRetry {
		return nil, nil, nil, o.lastErr
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), oidcTimeout)
	defer cancel()
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, o.opts.HTTPClient), o.opts.Issuer)
	if err != nil {
		o.failed = o.now()
		o.lastErr = &shelfmark.Error{Code: shelfmark.EUNAVAILABLE, Message: fmt.Sprintf("The identity provider %s cannot be reached or its discovery document is not valid; try again later.", o.opts.Issuer),
			Details: map[string]any{"retry_after": int(oidcRetry.Seconds())}}
		return nil, nil, nil, fmt.Errorf("OpenID Connect discovery at %s: %v: %w", o.opts.Issuer, err, o.lastErr)
	}
	scopes := o.opts.Scopes
	if len(scopes) == 0 {
		scopes = []string{oidc.ScopeOpenID, "profile", "email"}
		var meta struct {
			ScopesSupported []string `json:"scopes_supported"`
		}
		if o.opts.GroupsClaim != "-" && p.Claims(&meta) == nil && slices.Contains(meta.ScopesSupported, o.opts.GroupsClaim) {
			scopes = append(scopes, o.opts.GroupsClaim)
		}
	} else if !slices.Contains(scopes, oidc.ScopeOpenID) {
		scopes = append([]string{oidc.ScopeOpenID}, scopes...)
	}
	o.provider, o.scopes = p, scopes
	o.verifier = p.Verifier(&oidc.Config{ClientID: o.opts.ClientID})
	return o.provider, o.verifier, o.scopes, nil
}

// config is the OAuth 2.0 configuration of a sign-in.
func (o *oidcClient) config(p *oidc.Provider, scopes []string, redirect string) *oauth2.Config {
	return &oauth2.Config{ClientID: o.opts.ClientID, ClientSecret: o.opts.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: redirect, Scopes: scopes}
}

// seal encrypts a flow into a cookie value.
func (o *oidcClient) seal(f *oidcFlow) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // so next takes at most 4 bytes a character
	if err := enc.Encode(f); err != nil {
		return "", err
	}
	plain := buf.Bytes()
	nonce := make([]byte, o.aead.NonceSize(), o.aead.NonceSize()+len(plain)+o.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(o.aead.Seal(nonce, nonce, plain, []byte(oidcCookie))), nil
}

// open decrypts a cookie value; nil when it is not one this server made
// or it has expired.
func (o *oidcClient) open(v string, now time.Time) *oidcFlow {
	if len(v) > 8192 {
		return nil
	}
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(b) < o.aead.NonceSize() {
		return nil
	}
	n := o.aead.NonceSize()
	plain, err := o.aead.Open(nil, b[:n], b[n:], []byte(oidcCookie))
	if err != nil {
		return nil
	}
	var f oidcFlow
	if json.Unmarshal(plain, &f) != nil || now.Unix() > f.Expires || f.State == "" {
		return nil
	}
	return &f
}

// randomString returns n random bytes, base64url-encoded.
func randomString(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// ssoRoute reports whether r goes to a single sign-on route, where a
// session cookie that is no longer valid counts as none (the person is
// signing in again).
func ssoRoute(r *http.Request) bool {
	return r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, oidcCookiePath)
}

// oidcOff is the answer of the single sign-on routes when it is not set
// up.
func oidcOff() error {
	return shelfmark.Errorf(shelfmark.ENOTFOUND, "Single sign-on (OpenID Connect) is not set up on this server; sign in with POST /api/v1/login or send an API token.")
}

// flowCookie is the cookie of a sign-in's state ("" and maxAge -1 clear
// it): only for the single sign-on routes, never readable by script, and
// sent along with the provider's top-level redirect back (SameSite=Lax).
func (s *Server) flowCookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: oidcCookie, Value: value, Path: oidcCookiePath, MaxAge: maxAge, HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: r.TLS != nil || strings.HasPrefix(s.opts.BaseURL, "https://")}
}

// redirectURL is the callback the provider sends the browser back to.
func (s *Server) redirectURL(r *http.Request) string {
	if s.oidc.opts.RedirectURL != "" {
		return s.oidc.opts.RedirectURL
	}
	return s.deps.Base(r) + "/auth/oidc/callback"
}

// oidcLogin handles GET /auth/oidc/login[?next=/path]: it sends the
// browser to the provider.
func (s *Server) oidcLogin(w http.ResponseWriter, r *http.Request) error {
	if s.oidc == nil {
		return oidcOff()
	}
	if s.oidcErr != nil {
		return s.oidcErr
	}
	if _, err := s.deps.AccountService(); err != nil {
		return err
	}
	next := "/"
	if v, ok := r.URL.Query()["next"]; ok {
		p, local := "", len(v) == 1
		if local {
			p, local = kit.ReturnPath(v[0])
		}
		if !local {
			return shelfmark.Errorf(shelfmark.EINVALID, "next must be a path on this server: one \"/\" and the path (not \"//\" nor \"/\\\", even percent-encoded), without control characters, at most %d characters.", kit.MaxNextLen)
		}
		next = p
	}
	p, _, scopes, err := s.oidc.discover(r.Context())
	if err != nil {
		return err
	}
	f := &oidcFlow{Next: next, Redirect: s.redirectURL(r), Verifier: oauth2.GenerateVerifier(), Expires: s.now().Add(oidcFlowTTL).Unix()}
	if f.State, err = randomString(32); err != nil {
		return err
	}
	if f.Nonce, err = randomString(32); err != nil {
		return err
	}
	sealed, err := s.oidc.seal(f)
	if err != nil {
		return fmt.Errorf("single sign-on state: %w", err)
	}
	to := s.oidc.config(p, scopes, f.Redirect).AuthCodeURL(f.State, oauth2.S256ChallengeOption(f.Verifier), oidc.Nonce(f.Nonce))
	http.SetCookie(w, s.flowCookie(r, sealed, int(oidcFlowTTL.Seconds())))
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, to, http.StatusFound)
	return nil
}

// ssoFailure is why a single sign-on is refused, as the client is told.
type ssoFailure struct{ msg string }

func (f *ssoFailure) Error() string { return f.msg }

// failSSO records a refused single sign-on in the audit trail, counts it
// against the client's address, and returns the 401 that answers it.
func (s *Server) failSSO(r *http.Request, user, why string) error {
	s.limiter.fail(s.client(r))
	c := shelfmark.CallerFrom(r.Context())
	e := &shelfmark.AuditEntry{At: s.now(), Actor: c.Actor(), User: c.User, Token: c.Token, Action: "login",
		Outcome: shelfmark.AuditFailed, Detail: clipString("single sign-on: "+why, 500), Request: c.Request}
	if user != "" {
		e.Actor = user
	}
	if s.opts.Storage != nil {
		ctx := context.WithoutCancel(r.Context())
		err := s.opts.Storage.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.InsertAudit(ctx, []*shelfmark.AuditEntry{e}) })
		if err != nil {
			s.log.Warn("audit: could not record a failed single sign-on", "err", err)
		}
	}
	return shelfmark.Errorf(shelfmark.EUNAUTHORIZED, "Single sign-on failed: %s", why)
}

// clipString shortens s to at most n bytes, on a rune boundary.
func clipString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// printable keeps what a provider sends (an error code or description)
// short and free of control characters before it is shown or recorded.
func printable(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
	return clipString(s, n)
}

// oidcCallback handles GET /auth/oidc/callback: the provider sends the
// browser back here with a code (or an error). Every refusal is a 401,
// recorded in the audit trail as a failed login and counted against the
// client's address by the brute-force limiter.
func (s *Server) oidcCallback(w http.ResponseWriter, r *http.Request) error {
	if s.oidc == nil {
		return oidcOff()
	}
	if s.oidcErr != nil {
		return s.oidcErr
	}
	if wait := s.limiter.blocked(s.client(r)); wait > 0 {
		return tooMany(wait)
	}
	acc, err := s.deps.AccountService()
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	// The state is for one use: the cookie goes whatever happens.
	http.SetCookie(w, s.flowCookie(r, "", -1))
	q := r.URL.Query()
	var f *oidcFlow
	if ck, err := r.Cookie(oidcCookie); err == nil {
		f = s.oidc.open(ck.Value, s.now())
	}
	if e := q.Get("error"); e != "" {
		why := "the identity provider refused: " + printable(e, 100)
		if d := q.Get("error_description"); d != "" {
			why += " (" + printable(d, 300) + ")"
		}
		return s.failSSO(r, "", why+".")
	}
	if f == nil {
		return s.failSSO(r, "", "the sign-in's state cookie is missing, expired or not this server's; start again at /auth/oidc/login.")
	}
	if st := q.Get("state"); st == "" || subtle.ConstantTimeCompare([]byte(st), []byte(f.State)) != 1 {
		return s.failSSO(r, "", "the state does not match this browser's sign-in; start again at /auth/oidc/login.")
	}
	code := q.Get("code")
	if code == "" {
		return s.failSSO(r, "", "the identity provider sent no code.")
	}
	p, verifier, scopes, err := s.oidc.discover(r.Context())
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(r.Context(), oidcTimeout)
	defer cancel()
	ctx = oidc.ClientContext(ctx, s.oidc.opts.HTTPClient) // the same key as oauth2.HTTPClient
	tok, err := s.oidc.config(p, scopes, f.Redirect).Exchange(ctx, code, oauth2.VerifierOption(f.Verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if !errors.As(err, &re) {
			s.log.Warn("single sign-on: the token endpoint cannot be reached", "err", err)
			return shelfmark.Errorf(shelfmark.EUNAVAILABLE, "The identity provider's token endpoint cannot be reached; try again later.")
		}
		why := "the identity provider did not accept the code"
		if re.ErrorCode != "" {
			why += ": " + printable(re.ErrorCode, 100)
		}
		return s.failSSO(r, "", why+".")
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return s.failSSO(r, "", "the identity provider sent no ID token.")
	}
	idt, err := verifier.Verify(ctx, raw)
	if err != nil {
		var exp *oidc.TokenExpiredError
		if errors.As(err, &exp) {
			return s.failSSO(r, "", "the ID token has expired.")
		}
		s.log.Info("single sign-on: ID token refused", "err", err)
		return s.failSSO(r, "", "the ID token is not valid for this server (signature, issuer or audience).")
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(f.Nonce)) != 1 {
		return s.failSSO(r, "", "the ID token's nonce does not match this sign-in.")
	}
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return s.failSSO(r, "", "the ID token's claims cannot be read.")
	}
	if len(idt.Audience) > 1 {
		// OpenID Connect Core 3.1.3.7: with several audiences, azp must
		// name this client.
		if azp, _ := claims["azp"].(string); azp != s.oidc.opts.ClientID {
			return s.failSSO(r, "", "the ID token has several audiences and was not issued to this client (azp).")
		}
	}
	name, err := s.oidc.username(claims)
	if err != nil {
		return s.failSSO(r, "", err.Error())
	}
	groups, err := s.oidc.groups(claims, s.log.Warn)
	if err != nil {
		return s.failSSO(r, name, err.Error())
	}
	if err := s.mayClaim(r.Context(), name); err != nil {
		var sf *ssoFailure
		if errors.As(err, &sf) {
			return s.failSSO(r, name, sf.msg)
		}
		return err
	}
	secret, _, err := acc.LoginExternal(r.Context(), name, groups)
	if err != nil {
		switch shelfmark.ErrorCode(err) {
		case shelfmark.EUNAUTHORIZED:
			// the accounts recorded it (a disabled user)
			s.limiter.fail(s.client(r))
			return shelfmark.Errorf(shelfmark.EUNAUTHORIZED, "Single sign-on failed: the account %q cannot sign in (it is disabled).", name)
		case shelfmark.EINVALID:
			return s.failSSO(r, name, shelfmark.ErrorMessage(err))
		}
		return err
	}
	s.limiter.succeed(userKey(name)) // not the address's
	http.SetCookie(w, s.deps.SessionCookie(r, secret, 0))
	http.Redirect(w, r, kit.ReturnPathOr(f.Next, "/"), http.StatusSeeOther)
	return nil
}

// username reads the user name from the claims and checks it: 1 to 64
// letters, digits and . _ @ -, beginning with a letter or digit (the
// accounts' rule for names).
func (o *oidcClient) username(claims map[string]any) (string, error) {
	claim := o.opts.UsernameClaim
	v, ok := claims[claim]
	if !ok && claim == defaultUsernameClaim {
		claim = "sub"
		v, ok = claims[claim]
	}
	if !ok {
		return "", &ssoFailure{msg: fmt.Sprintf("the ID token has no %q claim to name the user.", claim)}
	}
	name, ok := v.(string)
	if !ok {
		return "", &ssoFailure{msg: fmt.Sprintf("the ID token's %q claim is not a string.", claim)}
	}
	if !validUserName(name) {
		return "", &ssoFailure{msg: fmt.Sprintf("the user name %q (claim %q) is not valid here: it takes 1 to 64 letters, digits and . _ @ - (beginning with a letter or digit).", printable(name, 80), claim)}
	}
	return name, nil
}

// groups reads the groups claim: a list of strings or one string.
// Group names this server cannot hold (see validUserName) are left out,
// and logged; more than 100 groups are refused.
func (o *oidcClient) groups(claims map[string]any, warn func(string, ...any)) ([]string, error) {
	if o.opts.GroupsClaim == "-" {
		return nil, nil
	}
	var raw []string
	switch v := claims[o.opts.GroupsClaim].(type) {
	case nil:
	case string:
		raw = []string{v}
	case []any:
		for _, g := range v {
			s, ok := g.(string)
			if !ok {
				return nil, &ssoFailure{msg: fmt.Sprintf("the ID token's %q claim is not a list of strings.", o.opts.GroupsClaim)}
			}
			raw = append(raw, s)
		}
	default:
		return nil, &ssoFailure{msg: fmt.Sprintf("the ID token's %q claim is neither a string nor a list of strings.", o.opts.GroupsClaim)}
	}
	out := make([]string, 0, len(raw))
	for _, g := range raw {
		if !validUserName(g) {
			warn("single sign-on: a group name is left out (1 to 64 letters, digits and . _ @ -)", "group", printable(g, 80))
			continue
		}
		out = append(out, g)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > maxOIDCGroups {
		return nil, &ssoFailure{msg: fmt.Sprintf("the ID token names %d groups; at most %d are kept.", len(out), maxOIDCGroups)}
	}
	return out, nil
}

// validUserName is the accounts' rule for user and group names.
func validUserName(name string) bool {
	if name == "" || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '@' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// mayClaim refuses a name the provider may not sign in as: an account
// that signs in by password, or an administrator. Users the provider
// created, and users an administrator made without a password (to grant
// them roles before their first sign-in), may sign in by single sign-on.
func (s *Server) mayClaim(ctx context.Context, name string) error {
	if s.opts.Storage == nil {
		return errors.New("single sign-on needs the storage to check names")
	}
	var u *shelfmark.User
	err := s.opts.Storage.View(ctx, func(tx shelfmark.ReadTx) error {
		var err error
		u, err = tx.UserByName(ctx, name)
		return err
	})
	if err != nil {
		return fmt.Errorf("single sign-on: user %q: %w", name, err)
	}
	switch {
	case u == nil:
		return nil
	case u.PasswordHash != "":
		return &ssoFailure{msg: fmt.Sprintf("the name %q belongs to an account that signs in with a password here, not through the identity provider.", name)}
	case u.Admin:
		return &ssoFailure{msg: fmt.Sprintf("the name %q belongs to an administrator, who cannot sign in through the identity provider.", name)}
	}
	return nil
}
