package ui

// This file protects the interface's forms against cross-site request
// forgery. Besides the envelope's refusal of cross-site writes (by
// Sec-Fetch-Site and Origin, see headers.go), every form carries a token
// that a page of another site cannot know: an HMAC, keyed with a random
// value in an HttpOnly cookie of this site, of the session's secret (so a
// token stops working when the session ends). The check needs no state on
// the server, so any of several servers sharing one database accepts it.
// Requests that carry an API token in Authorization need no form token:
// a browser never adds that header across sites.

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

const (
	// csrfCookie holds the browser's random key.
	csrfCookie = "shelfmark_csrf"
	// csrfField is the form field of the token; csrfHeader carries it
	// for scripts.
	csrfField  = "csrf"
	csrfHeader = "X-CSRF-Token"
)

// csrfToken returns the token the forms of this response carry, setting
// the browser's key first when it has none.
func (s *Handler) csrfToken(w http.ResponseWriter, r *http.Request) string {
	key := ""
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) >= 32 {
		key = c.Value
	} else {
		b := make([]byte, 32)
		rand.Read(b)
		key = base64.RawURLEncoding.EncodeToString(b)
		http.SetCookie(w, &http.Cookie{Name: csrfCookie, Value: key, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: r.TLS != nil})
		// the key must be seen by later calls for this same request
		r.AddCookie(&http.Cookie{Name: csrfCookie, Value: key})
	}
	return csrfMAC(key, sessionSecret(r))
}

// sessionSecret is the session cookie's value, "" when signed out (also
// when the cookie names a session that has ended: its pages were served
// as to anyone signed out).
func sessionSecret(r *http.Request) string {
	if !shelfmark.CallerFrom(r.Context()).Authenticated() {
		return ""
	}
	if c, err := r.Cookie(kit.SessionCookie); err == nil {
		return c.Value
	}
	return ""
}

func csrfMAC(key, session string) string {
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte("shelfmark form\x00"))
	m.Write([]byte(session))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkCSRF refuses (403) an unsafe request from a browser whose form
// token (the form field, or the X-CSRF-Token header) is missing or not
// the one its pages carry.
func (s *Handler) checkCSRF(r *http.Request, token string) error {
	if _, ok := kit.Bearer(r); ok {
		return nil
	}
	if token == "" {
		token = r.Header.Get(csrfHeader)
	}
	c, err := r.Cookie(csrfCookie)
	if err != nil || token == "" || !hmac.Equal([]byte(token), []byte(csrfMAC(c.Value, sessionSecret(r)))) {
		return shelfmark.Errorf(shelfmark.EFORBIDDEN, "This form was not sent from a page of this site, or the page is too old (its session has ended); reload the page and send it again.")
	}
	return nil
}
