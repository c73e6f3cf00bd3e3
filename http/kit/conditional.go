package kit

// This file holds what every face shares to make its answers cheap to
// revalidate and safe to cache: the validators of a representation (an
// entity tag and, where one can be stated truthfully, the time it last
// changed), the evaluation of a GET's or HEAD's preconditions
// (If-None-Match, If-Modified-Since) into a 304, and the Cache-Control
// and Vary that say who may keep an answer.
//
// The rule of caching: an answer goes to shared caches (public) only when
// it was built for an anonymous caller and everything it shows is in
// public view, and it sets no cookie; whatever depends on a credential or
// a session, or shows what the public may not see, is private (or
// no-store) and says so.

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

// Validators are what a representation is revalidated by.
type Validators struct {
	// ETag is the quoted entity tag (W/"…" for a weak one); "" sends none.
	ETag string
	// LastModified is when the representation last changed; zero sends
	// none. Set it only when it is truthful: a page whose content can
	// change without any time the server reads moving (a member that
	// leaves a list, say) must leave it zero, or a client asking with
	// If-Modified-Since alone would be told a stale copy is current.
	LastModified time.Time
}

// settle is how long past the second a change falls in a Last-Modified
// waits before it is sent (Settled): the rest of that second, and a
// second more for a change stamped before its commit was seen.
const settle = 2 * time.Second

// Settled is t, the time a representation last changed, as a
// Last-Modified to send at now; zero (send none) until t's second is
// over by settle. HTTP dates have whole seconds: a representation that
// changed again within t's second would carry the same date, and a client
// holding the first would be told it is current. Once the second is over
// and the representation is still unchanged, a later change carries a
// later date.
func Settled(t, now time.Time) time.Time {
	if t.IsZero() || now.Before(t.Truncate(time.Second).Add(settle)) {
		return time.Time{}
	}
	return t
}

// BodyETag is the weak entity tag of a representation made of parts (in
// order): the first 128 bits of their SHA-256, in URL-safe base64. It
// changes whenever the bytes do, so a page built from many rows needs no
// account of which of them it read; it is weak because the same content
// may be sent gzipped or not. Cost: one pass of SHA-256 over the parts.
func BodyETag(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	var sum [sha256.Size]byte
	return `W/"` + base64.RawURLEncoding.EncodeToString(h.Sum(sum[:0])[:16]) + `"`
}

// NotModified sets v's ETag and Last-Modified on the response and reports
// whether the request's preconditions show the client holds the current
// representation; it then has answered 304 Not Modified and the caller
// writes nothing more. Per RFC 9110 §13.2.2 If-None-Match decides when it
// is sent (weak comparison, "*" matches any), and If-Modified-Since is
// read only without it and only when v has a LastModified; only GET and
// HEAD are answered 304. The 304 keeps the headers that guide caches
// (ETag, Last-Modified, Cache-Control, Vary, the CORS headers) and drops
// those of the representation (Content-Type, Content-Length and the page's
// Content-Security-Policy, which must stay the one stored with the body).
// Set Cache-Control and Vary before calling it. No allocation beyond the
// headers it sets.
func NotModified(w http.ResponseWriter, r *http.Request, v Validators) bool {
	h := w.Header()
	if v.ETag != "" {
		h.Set("ETag", v.ETag)
	}
	if !v.LastModified.IsZero() {
		h.Set("Last-Modified", v.LastModified.UTC().Format(http.TimeFormat))
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	if !fresh(r, v) {
		return false
	}
	for _, k := range []string{"Content-Type", "Content-Length", "Content-Encoding", "Content-Security-Policy", "Content-Disposition"} {
		delete(h, k)
	}
	w.WriteHeader(http.StatusNotModified)
	return true
}

// fresh evaluates the request's If-None-Match, else its
// If-Modified-Since, against v.
func fresh(r *http.Request, v Validators) bool {
	if inm := r.Header.Values("If-None-Match"); len(inm) > 0 {
		if v.ETag == "" {
			return false
		}
		for _, list := range inm {
			if ETagListMatches(list, v.ETag) {
				return true
			}
		}
		return false
	}
	ims := r.Header.Get("If-Modified-Since")
	if ims == "" || v.LastModified.IsZero() {
		return false
	}
	t, err := http.ParseTime(ims)
	if err != nil {
		return false
	}
	// HTTP dates have whole seconds: the representation is unchanged when
	// it last changed within or before the second the client names
	return !v.LastModified.Truncate(time.Second).After(t)
}

// ETagListMatches reports whether an If-None-Match value (a comma-separated
// list of entity tags, or "*") names etag by weak comparison: the opaque
// tags are equal, whether either is weak. A malformed list matches
// nothing.
func ETagListMatches(list, etag string) bool {
	want := opaqueTag(etag)
	if want == "" {
		return false
	}
	s := strings.TrimSpace(list)
	if s == "*" {
		return true
	}
	for s != "" {
		s = strings.TrimLeft(s, " \t,")
		if s == "" {
			break
		}
		tag := ""
		if tag, s = scanETag(s); tag == "" {
			return false
		}
		if opaqueTag(tag) == want {
			return true
		}
	}
	return false
}

// scanETag reads one entity tag at the start of s (W/"…" or "…") and
// returns it and the rest; "" when s does not start with one.
func scanETag(s string) (tag, rest string) {
	start := 0
	if strings.HasPrefix(s, "W/") {
		start = 2
	}
	if len(s) < start+2 || s[start] != '"' {
		return "", ""
	}
	for i := start + 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return s[:i+1], s[i+1:]
		case c == 0x21 || c >= 0x23 && c != 0x7f:
			// etagc
		default:
			return "", ""
		}
	}
	return "", ""
}

// opaqueTag is an entity tag without its weakness marker ("" when it is
// not one).
func opaqueTag(etag string) string {
	etag = strings.TrimPrefix(etag, "W/")
	if len(etag) < 2 || etag[0] != '"' || etag[len(etag)-1] != '"' {
		return ""
	}
	return etag
}

// Cache says how caches may keep an answer.
type Cache int

// The ways an answer may be kept.
const (
	// CacheNoStore: no cache keeps it (a signed-in caller's pages).
	CacheNoStore Cache = iota
	// CachePrivate: the caller's browser may keep it, and revalidates it
	// before each use; shared caches do not keep it.
	CachePrivate
	// CacheRevalidate: a cache may keep it but asks the server before
	// each use, which checks the caller's access again (an answer the same
	// for every caller who may have it, built for a signed-in one).
	CacheRevalidate
	// CachePublic: any cache may keep it for the given max-age (and
	// revalidate it after); for answers built for an anonymous caller
	// about what is in public view.
	CachePublic
)

// SetCache sets Cache-Control for c: "no-store", "private, no-cache",
// "no-cache", or "public, max-age=N" (N from maxAge in whole seconds; "public, no-cache"
// for none). A public answer that sets a cookie is made private: a shared
// cache must never hand one browser's cookie to another.
func SetCache(h http.Header, c Cache, maxAge time.Duration) {
	if c == CachePublic && len(h.Values("Set-Cookie")) > 0 {
		c = CachePrivate
	}
	switch c {
	case CachePublic:
		if s := int64(maxAge / time.Second); s > 0 {
			h.Set("Cache-Control", "public, max-age="+strconv.FormatInt(s, 10))
		} else {
			h.Set("Cache-Control", "public, no-cache")
		}
	case CachePrivate:
		h.Set("Cache-Control", "private, no-cache")
	case CacheRevalidate:
		h.Set("Cache-Control", "no-cache")
	default:
		h.Set("Cache-Control", "no-store")
	}
}

// CallerVary are the request headers an answer built for its caller
// differs by: the session cookie and the API token.
var CallerVary = []string{"Cookie", "Authorization"}

// AddVary adds names to the response's Vary, keeping what it holds (the
// envelope's Origin, the compression's Accept-Encoding) and adding none
// twice.
func AddVary(h http.Header, names ...string) {
	have := map[string]bool{}
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			have[strings.ToLower(strings.TrimSpace(f))] = true
		}
	}
	for _, n := range names {
		if k := strings.ToLower(n); !have[k] {
			have[k] = true
			h.Add("Vary", n)
		}
	}
}

// GzipLevel is the level responses are gzipped at (klauspost/compress's
// gzip): the fastest, whose ratio on XML and JSON is close to the default
// level's at a fraction of the processor's time.
const GzipLevel = gzip.BestSpeed

// AcceptsGzip reports whether the request's Accept-Encoding accepts gzip
// (RFC 9110 §12.5.3): gzip, x-gzip or * with a weight above zero, unless
// gzip itself is refused with q=0.
func AcceptsGzip(r *http.Request) bool {
	ok := false
	for _, v := range r.Header.Values("Accept-Encoding") {
		for part := range strings.SplitSeq(v, ",") {
			name, params, _ := strings.Cut(part, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "gzip" && name != "x-gzip" && name != "*" {
				continue
			}
			weight := 1.0
			for p := range strings.SplitSeq(params, ";") {
				if k, val, found := strings.Cut(strings.TrimSpace(p), "="); found && strings.EqualFold(strings.TrimSpace(k), "q") {
					if q, err := strconv.ParseFloat(strings.TrimSpace(val), 64); err == nil {
						weight = q
					}
				}
			}
			switch {
			case weight <= 0 && name != "*":
				return false // gzip refused outright
			case weight > 0:
				ok = true
			}
		}
	}
	return ok
}
