package http

// This file holds the security envelope every request passes before it
// reaches a route: security headers, CORS, the refusal of cross-site
// writes and of bodies without a media type, the pace a request body must
// keep, and the cap on concurrent uploads.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// ETIMEOUT is the code of a request whose body came too slowly (408); it
// is the HTTP layer's own, not the domain's.
const ETIMEOUT = kit.ETIMEOUT

// The envelope's defaults (see Options).
const (
	defaultReadHeaderTimeout    = 10 * time.Second
	defaultIdleTimeout          = 120 * time.Second
	defaultWriteTimeout         = 2 * time.Minute
	defaultBodyTimeout          = 30 * time.Second
	defaultMinBodyRate          = 4 << 10 // bytes a second
	defaultMaxHeaderBytes       = 64 << 10
	defaultMaxConcurrentUploads = 32
)

// API responses may not be framed, sniffed or given a referrer, and the
// JSON they carry loads nothing; file content is sandboxed as well, so an
// uploaded HTML or SVG file cannot run script on the server's origin.
const (
	apiCSP     = "default-src 'none'; frame-ancestors 'none'"
	contentCSP = "default-src 'none'; frame-ancestors 'none'; sandbox"
)

// corsAllowHeaders are the request headers a listed origin may send.
const corsAllowHeaders = "Accept-Datetime, Authorization, Content-Type, Content-Digest, Content-Disposition, If-Match, If-None-Match, Link, Range, Repr-Digest, Shelfmark-Position, X-Request-Id"

// corsExposeHeaders are the response headers a listed origin may read.
const corsExposeHeaders = "ETag, Location, Content-Digest, Repr-Digest, Content-Range, Retry-After, Shelfmark-Position, X-Request-Id, Link, Memento-Datetime"

// isContent reports whether a request reads file content, or an archived
// web payload (a streamed response, sandboxed and without a write
// deadline).
func isContent(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && (strings.HasSuffix(r.URL.Path, "/content") || r.URL.Path == "/api/v1/web/record")
}

// isUpload reports whether a request sends file bytes.
func isUpload(r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	p := r.URL.Path
	return p == "/api/v1/blobs" || strings.HasPrefix(p, "/api/v1/resources/") && strings.HasSuffix(p, "/files")
}

// hasBody reports whether a request carries a body.
func hasBody(r *http.Request) bool {
	return r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0
}

// The values of the security headers, shared by every response (each
// slice is full, so that Header.Add copies instead of writing into it).
var (
	nosniffValue    = []string{"nosniff"}
	noReferrerValue = []string{"no-referrer"}
	denyValue       = []string{"DENY"}
	apiCSPValue     = []string{apiCSP}
	contentCSPValue = []string{contentCSP}
)

// securityHeaders sets the headers every response carries.
func securityHeaders(h http.Header, content bool) {
	h["X-Content-Type-Options"] = nosniffValue
	h["Referrer-Policy"] = noReferrerValue
	h["X-Frame-Options"] = denyValue
	if content {
		h["Content-Security-Policy"] = contentCSPValue
	} else {
		h["Content-Security-Policy"] = apiCSPValue
	}
}

// cors holds the origins allowed to call the API from a browser, and the
// protection against cross-site writes.
type cors struct {
	allowed map[string]bool
	cop     *http.CrossOriginProtection
}

// newCORS checks the configured origins (scheme://host[:port]).
func newCORS(origins []string, baseURL string) (*cors, error) {
	c := &cors{allowed: map[string]bool{}, cop: http.NewCrossOriginProtection()}
	for _, o := range origins {
		o = strings.TrimSuffix(strings.TrimSpace(o), "/")
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.User != nil {
			return nil, fmt.Errorf("CORS origin %q is not scheme://host[:port]", o)
		}
		c.allowed[o] = true
		if err := c.cop.AddTrustedOrigin(o); err != nil {
			return nil, fmt.Errorf("CORS origin %q: %w", o, err)
		}
	}
	if baseURL != "" {
		if u, err := url.Parse(baseURL); err == nil && u.Host != "" {
			if err := c.cop.AddTrustedOrigin(u.Scheme + "://" + u.Host); err != nil {
				return nil, fmt.Errorf("base URL %q: %w", baseURL, err)
			}
		}
	}
	return c, nil
}

// apply adds the CORS headers for a listed origin and answers its
// preflight requests; it reports whether the request was answered.
func (c *cors) apply(w http.ResponseWriter, r *http.Request) (bool, error) {
	origin := r.Header.Get("Origin")
	preflight := r.Method == http.MethodOptions && origin != "" && r.Header.Get("Access-Control-Request-Method") != ""
	if len(c.allowed) > 0 {
		w.Header().Add("Vary", "Origin")
	}
	if origin == "" || !c.allowed[origin] {
		if preflight {
			return false, shelfmark.Errorf(shelfmark.EFORBIDDEN, "The origin %q may not call this API from a browser; the server's CORS allow-list does not name it.", origin)
		}
		return false, nil
	}
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", origin)
	h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
	if !preflight {
		return false, nil
	}
	h.Set("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, PATCH, DELETE")
	h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
	h.Set("Access-Control-Max-Age", "600")
	w.WriteHeader(http.StatusNoContent)
	return true, nil
}

// crossSite refuses an unsafe request a browser sent from another site:
// its Origin is neither the server's (BaseURL or Host) nor listed, or
// Sec-Fetch-Site says it came from elsewhere.
func (c *cors) crossSite(r *http.Request) error {
	if err := c.cop.Check(r); err != nil {
		origin := r.Header.Get("Origin")
		if origin == "" {
			origin = "another site (Sec-Fetch-Site: " + r.Header.Get("Sec-Fetch-Site") + ")"
		}
		return shelfmark.Errorf(shelfmark.EFORBIDDEN, "A %s from %s is refused: cross-site writes are not accepted (list the origin with --cors-origin to allow it).", r.Method, origin)
	}
	return nil
}

// needMediaType refuses a body without a Content-Type (415). File bytes
// sent with an API token may go without one (they are stored as
// application/octet-stream); a browser cannot send such a request across
// sites without a preflight.
func needMediaType(r *http.Request) error {
	if !hasBody(r) || r.Header.Get("Content-Type") != "" {
		return nil
	}
	if _, ok := kit.Bearer(r); ok && isUpload(r) {
		return nil
	}
	return &shelfmark.Error{Code: shelfmark.EUNSUPPORTED, Message: "The body has no Content-Type; say what it is (for example application/json).",
		Details: map[string]any{"accepted": []string{"application/json", "application/ld+json", "text/turtle", "application/n-triples"}}}
}

// pace sets the deadlines of a request: a response that is not file
// content must be written within WriteTimeout, and a body must come at
// MinBodyRate bytes a second or more once BodyTimeout has passed (its
// deadline moves on as its bytes come), so a client that trickles a body
// is cut off instead of holding a connection and a goroutine.
func (s *Server) pace(w http.ResponseWriter, r *http.Request, start time.Time) {
	rc := http.NewResponseController(w)
	// Keep-alive connections keep the deadlines of their last request:
	// every request sets (or clears) its own.
	if isContent(r) {
		rc.SetWriteDeadline(time.Time{})
	} else {
		rc.SetWriteDeadline(start.Add(s.opts.WriteTimeout))
	}
	if !hasBody(r) {
		return
	}
	p := &paceReader{ReadCloser: r.Body, rc: rc, start: start, grace: s.opts.BodyTimeout, rate: s.opts.MinBodyRate, write: s.opts.WriteTimeout}
	p.extend()
	r.Body = p
}

// paceReader moves a request's read deadline as its body comes.
type paceReader struct {
	io.ReadCloser
	rc       *http.ResponseController
	start    time.Time
	grace    time.Duration
	rate     int64
	write    time.Duration
	n        int64
	deadline time.Time
}

func (p *paceReader) Read(b []byte) (int, error) {
	n, err := p.ReadCloser.Read(b)
	if n > 0 {
		p.n += int64(n)
		p.extend()
	}
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		err = &shelfmark.Error{Code: ETIMEOUT, Message: fmt.Sprintf("The body came slower than %d bytes a second; the server stopped reading it after %d bytes.", p.rate, p.n),
			Details: map[string]any{"min_rate": p.rate}}
	}
	return n, err
}

// extend sets the deadline the bytes read so far earned (at least a
// quarter of a second later than the last one, so that small reads do not
// reset timers all the time).
func (p *paceReader) extend() {
	d := p.start.Add(p.grace + time.Duration(float64(p.n)/float64(p.rate)*float64(time.Second)))
	if !p.deadline.IsZero() && d.Sub(p.deadline) < time.Second/4 {
		return
	}
	p.deadline = d
	p.rc.SetReadDeadline(d)
	if p.write > 0 {
		p.rc.SetWriteDeadline(d.Add(p.write))
	}
}

// uploading takes a slot for an upload, or answers 503 with Retry-After,
// before the body is read, when all are taken or the background is over
// its backlog limit (admitUpload).
func (s *Server) uploading(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		release, err := s.admitUpload(r.Context())
		if err != nil {
			if strings.EqualFold(r.Header.Get("Expect"), "100-continue") {
				// a client that waits to be asked for the body sends
				// it after an answer on a connection kept open; on one
				// that closes, it never sends it
				w.Header().Set("Connection", "close")
			}
			s.refuse(w, r, err, s.now())
			return
		}
		defer release()
		h.ServeHTTP(w, r)
	})
}

// admitUpload takes one of the server's upload slots without waiting, once
// the backlog gate has let the upload through; release gives the slot
// back. Its errors are EUNAVAILABLE with a retry_after.
func (s *Server) admitUpload(ctx context.Context) (release func(), err error) {
	if err := s.opts.Backlog.Admit(ctx); err != nil {
		return nil, err
	}
	select {
	case s.uploads <- struct{}{}:
		return func() { <-s.uploads }, nil
	default:
		return nil, &shelfmark.Error{Code: shelfmark.EUNAVAILABLE, Message: fmt.Sprintf("The server is receiving %d uploads already; retry in a moment.", cap(s.uploads)),
			Details: map[string]any{"max_concurrent_uploads": cap(s.uploads), "retry_after": int64(1)}}
	}
}
