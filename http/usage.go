package http

// This file counts the uses of works that COUNTER reports count
// (shelfmark.UsageCounter): a work's page answered (an investigation),
// and a file's bytes, a work's PDF or its ZIP sent (requests). The
// counting wraps only those routes; it looks at the answer's status
// after the handler has written it and hands the counter an event (a map
// update in memory): the reader never waits on a count. A robot (a user
// agent on the COUNTER robots list) is not counted, nor is a HEAD.

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// usageRoutes are the routes whose answers are uses of a work: true for
// a request (a retrieval of content), false for an investigation. The
// route's {id} names the work, or the file whose bytes were sent.
var usageRoutes = map[string]bool{
	"GET /works/{id}":                    false,
	"GET /api/v1/resources/{id}/content": true,
	"GET /iiif/{id}/pdf":                 true,
	"GET /iiif/{id}/zip":                 true,
}

// counting wraps h, the handler of a route, to count its answers as uses
// (see usageRoutes); other routes, and a server without a counter, are
// given h as it is.
func (s *Server) counting(method, pattern string, h http.Handler) http.Handler {
	request, ok := usageRoutes[method+" "+pattern]
	if !ok || s.opts.Usage == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r)
		if r.Method != http.MethodGet || !usageCounted(sw.status, request) {
			return
		}
		if s.robots != nil && s.robots.Is(r.UserAgent()) {
			return
		}
		s.opts.Usage.Record(shelfmark.UsageEvent{ID: shelfmark.ID(r.PathValue("id")), Request: request, Session: s.usageSession(r), At: s.now()})
	})
}

// usageCounted reports whether an answer of status is a use: a page
// sent or revalidated (304: the reader looks at it again), or content
// sent whole or in part.
func usageCounted(status int, request bool) bool {
	switch status {
	case http.StatusOK:
		return true
	case http.StatusPartialContent:
		return request
	case http.StatusNotModified:
		return !request
	}
	return false
}

// usageSession names a request's user-session for COUNTER: a digest of
// its session cookie, or of its client's address and user agent (the
// counter adds the hour). Neither is stored: only counts are.
func (s *Server) usageSession(r *http.Request) string {
	h := sha256.New()
	if c, err := r.Cookie(kit.SessionCookie); err == nil && c.Value != "" {
		h.Write([]byte("s\x00" + c.Value))
	} else {
		h.Write([]byte("c\x00" + s.client(r) + "\x00" + r.UserAgent()))
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
