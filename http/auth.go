package http

// This file gives every request its caller: the credential it carries (an
// API token in Authorization: Bearer, or the session cookie a login set)
// resolved through the AccountService, or the anonymous caller. It also
// holds the request id, the brute-force limiter of login and token checks,
// and the checks the routes share (signed in, admin).

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// SessionCookie is the name of the cookie that carries a browser session
// (set by POST /api/v1/login; kit.SessionCookie).
const SessionCookie = kit.SessionCookie

// The brute-force limiter's defaults (see Options.MaxAuthFailures): after
// that many failed logins or token checks from one client address (or
// for one user name), each further attempt waits authBackoffBase, doubled
// at every failure up to authBackoffMax; failures are forgotten
// authForget after the last one. A sign-in forgets the failures of its
// user name, never those of its address (see limiter.succeed). The
// limiter remembers at most authTrackedMax addresses and names.
const (
	defaultMaxAuthFailures = 10
	authBackoffBase        = time.Second
	authBackoffMax         = 15 * time.Minute
	authForget             = 15 * time.Minute
	authTrackedMax         = 100_000
)

// credential returns the secret the request carries and how ("token" or
// "session"); "" when it carries none.
func credential(r *http.Request) (secret, via string) {
	if tok, ok := kit.Bearer(r); ok {
		return tok, "token"
	}
	if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
		return c.Value, "session"
	}
	return "", ""
}

// authenticate resolves the request's credential into its caller. A
// request without one is anonymous; a bad one is an EUNAUTHORIZED error
// (never anonymity), and too many bad ones from the client's address an
// ETOOMANY error.
func (s *Server) authenticate(r *http.Request, requestID string) (*shelfmark.Caller, error) {
	if a := s.opts.Authenticator; a != nil { // an embedder's own (see Options)
		f, err := a.Authenticate(r)
		if err != nil {
			return nil, err
		}
		c := *f
		c.Request = requestID
		return &c, nil
	}
	secret, via := credential(r)
	if via == "" {
		c := shelfmark.Anonymous()
		c.Request = requestID
		return c, nil
	}
	ip := s.client(r)
	if wait := s.limiter.blocked(ip); wait > 0 {
		return nil, tooMany(wait)
	}
	if secret == "" || s.opts.Accounts == nil {
		s.limiter.fail(ip)
		return nil, badCredential(via)
	}
	c, err := s.opts.Accounts.Authenticate(r.Context(), secret)
	if err != nil {
		if shelfmark.ErrorCode(err) != shelfmark.EUNAUTHORIZED {
			return nil, err // the database, not the credential
		}
		if via == "session" && (ssoRoute(r) || signInRoute(r) || uiPath(r)) {
			// a stale session does not stand in the way of signing in
			// again, nor of reading the interface's pages as anyone may
			anon := shelfmark.Anonymous()
			anon.Request = requestID
			return anon, nil
		}
		s.limiter.fail(ip)
		return nil, badCredential(via)
	}
	// A good token or session forgives nothing: the address's failures
	// stay (see limiter.succeed), and a token is no password, whose
	// guesses the user name's failures count.
	cc := *c // the service may share its callers between requests
	cc.Request = requestID
	return &cc, nil
}

// badCredential is the error of an unknown, malformed, expired or revoked
// credential.
func badCredential(via string) error {
	what := "The token in Authorization: Bearer"
	if via == "session" {
		what = "The session"
	}
	return &shelfmark.Error{Code: shelfmark.EUNAUTHORIZED, Message: what + " is not valid (unknown, malformed, expired or revoked); sign in again or send another token.",
		Details: map[string]any{"invalid_token": true}}
}

// tooMany is the error of a client that failed to authenticate too often.
func tooMany(wait time.Duration) error {
	secs := int64(math.Ceil(wait.Seconds()))
	return &shelfmark.Error{Code: shelfmark.ETOOMANY, Message: fmt.Sprintf("Too many failed sign-ins or token checks; try again in %d s.", secs),
		Details: map[string]any{"retry_after": secs}}
}

// admin wraps a handler that only administrators (with an admin-scoped
// credential) may reach: 401 for anonymous callers, 403 for the others.
func (s *Server) admin(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := kit.SignedIn(r, r.Pattern)
		if err == nil && !c.IsAdmin() {
			err = shelfmark.Errorf(shelfmark.EFORBIDDEN, "%s is for administrators, with an admin-scoped token.", r.Pattern)
		}
		if err != nil {
			s.refuse(w, r, err, s.now())
			return
		}
		h.ServeHTTP(w, r)
	})
}

// openWrites are the unsafe requests an anonymous or read-scoped caller
// may send: signing in and out, and the requests that only read (source
// key lookups, OAI-PMH by POST).
var openWrites = map[string]bool{
	"POST /api/v1/login":          true,
	"POST /api/v1/logout":         true,
	"POST /api/v1/sources/lookup": true,
	"POST /oai":                   true,
	"POST /login":                 true,
	"POST /logout":                true,
}

// mayWrite refuses an unsafe request of a caller whose credential cannot
// write: anonymous callers get 401, read-scoped ones 403. The engine
// decides what a caller that may write may change.
func mayWrite(r *http.Request, c *shelfmark.Caller) error {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return nil
	}
	if c.MayWrite() || openWrites[r.Method+" "+r.URL.Path] {
		return nil
	}
	// (the messages do not repeat the path: it may hold an id the caller
	// may not learn of)
	if !c.Authenticated() {
		return kit.NeedSignIn("A " + r.Method)
	}
	return shelfmark.Errorf(shelfmark.EFORBIDDEN, "This credential has the %s scope; a %s needs a write-scoped one.", c.Scope, r.Method)
}

// clientKey names the client's address for the limiter: the IP of the
// connection (an IPv6 client by its /64). Behind a reverse proxy every
// client shares the proxy's address, unless the proxy is trusted (see
// clientKeyVia).
func clientKey(r *http.Request) string { return clientKeyVia(r, nil) }

// client is clientKey with the server's trusted proxies
// (Options.TrustedProxies).
func (s *Server) client(r *http.Request) string { return clientKeyVia(r, s.opts.TrustedProxies) }

// clientKeyVia names the client's address for the limiter. When the
// connection comes from a trusted proxy, the client is the last address of
// X-Forwarded-For that no trusted proxy added (the header's earlier
// entries are whatever the client claimed, and a client could name anyone
// there).
func clientKeyVia(r *http.Request, trusted []netip.Prefix) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return "ip:" + host
	}
	a = a.Unmap()
	if isTrusted(a, trusted) {
		hops := forwardedFor(r)
		for i := len(hops) - 1; i >= 0; i-- {
			h, err := netip.ParseAddr(hops[i])
			if err != nil {
				break // a malformed hop: keep the last address known good
			}
			a = h.Unmap()
			if !isTrusted(a, trusted) {
				break
			}
		}
	}
	if a.Is6() {
		p, _ := a.Prefix(64)
		return "ip:" + p.String()
	}
	return "ip:" + a.String()
}

// isTrusted reports whether a lies in one of the trusted prefixes.
func isTrusted(a netip.Addr, trusted []netip.Prefix) bool {
	for _, p := range trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// forwardedFor returns the addresses of every X-Forwarded-For header of r,
// in order (the nearest proxy's last).
func forwardedFor(r *http.Request) []string {
	var hops []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		for _, h := range strings.Split(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				hops = append(hops, h)
			}
		}
	}
	return hops
}

// limiter counts failed authentications per key (a client address, or a
// user name) in a bounded map, and makes a key that failed more than max
// times wait, twice as long after each further failure.
//
// With shared failures (Options.AuthFailures, the database of several
// servers) it also writes each failure through to the database and takes
// the count there, which every server's failures raised, and it reads the
// keys that must wait from the database at most every authSyncEvery,
// when a request with a credential comes (in the background: no request
// waits for it). So a client blocked on one server is blocked on the
// others within authSyncEvery, or at its first failure there; and an
// authentication with no failure on record costs no query.
type limiter struct {
	max     int
	tracked int
	now     func() time.Time
	mu      sync.Mutex
	m       map[string]*failures
	// size is len(m), read without the lock: while no client failed, a
	// request with a good credential takes no lock.
	size atomic.Int64
	// sweeps counts the sweeps of a full map (for tests).
	sweeps atomic.Int64
	// the shared failures (nil: this server's memory only), see auth_shared.go
	shared sharedFailures
}

// failures is what the limiter knows of one key.
type failures struct {
	n     int
	last  time.Time
	until time.Time // no attempt before this time
}

// newLimiter returns a limiter allowing max failures (default
// defaultMaxAuthFailures) that reads time from now (nil: time.Now).
func newLimiter(max int, now func() time.Time) *limiter {
	if max <= 0 {
		max = defaultMaxAuthFailures
	}
	if now == nil {
		now = time.Now
	}
	return &limiter{max: max, tracked: authTrackedMax, now: now, m: map[string]*failures{}}
}

// blocked returns how long the keys must still wait (0: they may try).
func (l *limiter) blocked(keys ...string) time.Duration {
	l.sync()
	if l.size.Load() == 0 {
		return 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	var wait time.Duration
	for _, k := range keys {
		if f := l.m[k]; f != nil && f.until.After(now) {
			wait = max(wait, f.until.Sub(now))
		}
	}
	return wait
}

// fail counts a failure of each key (in the shared failures too, when
// there are).
func (l *limiter) fail(keys ...string) {
	now := l.now()
	counts := l.shared.add(keys, now)
	blocks := l.count(keys, counts, now)
	l.shared.block(blocks)
}

// count counts a failure of each key in memory, taking the count of the
// shared failures where it is larger, and returns the keys that must now
// wait and until when.
func (l *limiter) count(keys []string, counts map[string]int, now time.Time) map[string]time.Time {
	var blocks map[string]time.Time
	l.mu.Lock()
	defer l.mu.Unlock()
	defer func() { l.size.Store(int64(len(l.m))) }()
	for _, k := range keys {
		f := l.m[k]
		if f == nil || now.Sub(f.last) > authForget {
			if f == nil && len(l.m) >= l.tracked {
				l.sweep(now)
			}
			f = &failures{}
			l.m[k] = f
		}
		f.n++
		f.n = max(f.n, counts[k])
		f.last = now
		if over := f.n - l.max; over > 0 {
			wait := authBackoffMax
			if over <= 20 {
				wait = min(authBackoffBase<<(over-1), authBackoffMax)
			}
			f.until = now.Add(wait)
			if blocks == nil {
				blocks = map[string]time.Time{}
			}
			blocks[k] = f.until
		}
	}
	return blocks
}

// userKey is the limiter's key of a user name, whose password guesses it
// counts wherever they come from.
func userKey(name string) string { return "user:" + name }

// succeed forgets the failures of the principal that authenticated (its
// userKey; in the shared failures too, when this server knew failures of
// it), unless it must still wait. It never forgets the failures of the
// client's address: a success proves the principal's credential, not
// that the address's other attempts were honest, and an attacker who
// owns one account could otherwise slip its own good sign-in (or token)
// between guesses and never be blocked per address.
func (l *limiter) succeed(principal string) {
	if l.size.Load() == 0 {
		return
	}
	now := l.now()
	l.mu.Lock()
	f := l.m[principal]
	forget := f != nil && !f.until.After(now)
	if forget {
		delete(l.m, principal)
		l.size.Store(int64(len(l.m)))
	}
	l.mu.Unlock()
	if forget {
		l.shared.clear([]string{principal}, now)
	}
}

// sweep makes room in a full map: it drops the forgotten keys, then, if
// the map is still full, arbitrary keys that are not waiting, then any.
func (l *limiter) sweep(now time.Time) {
	l.sweeps.Add(1)
	for k, f := range l.m {
		if now.Sub(f.last) > authForget {
			delete(l.m, k)
		}
	}
	for k, f := range l.m {
		if len(l.m) < l.tracked*9/10 {
			return
		}
		if !f.until.After(now) {
			delete(l.m, k)
		}
	}
	for k := range l.m {
		if len(l.m) < l.tracked*9/10 {
			return
		}
		delete(l.m, k)
	}
}

// signInRoute reports whether r signs in or out with a password, which a
// browser still holding an ended session must be able to do.
func signInRoute(r *http.Request) bool {
	switch r.URL.Path {
	case "/api/v1/login", "/api/v1/logout", "/login", "/logout":
		return r.Method == http.MethodPost
	}
	return false
}
