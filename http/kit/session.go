package kit

import (
	"net/http"
	"strings"
)

// SessionCookie is the name of the cookie that carries a browser session
// (set by POST /api/v1/login and the interface's sign-in).
const SessionCookie = "shelfmark_session"

// SessionCookie is the cookie of a session secret ("" and maxAge -1 clear
// it). It is never readable by script, goes only to this site (and along
// with top-level navigations to it), and only over TLS when the server is
// reached by TLS or its base URL is https.
func (d *Deps) SessionCookie(r *http.Request, secret string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: SessionCookie, Value: secret, Path: "/", MaxAge: maxAge, HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: r.TLS != nil || strings.HasPrefix(d.BaseURL, "https://")}
}

// SessionCookieSent reports whether the request carries a session cookie.
func SessionCookieSent(r *http.Request) bool {
	c, err := r.Cookie(SessionCookie)
	return err == nil && c.Value != ""
}
