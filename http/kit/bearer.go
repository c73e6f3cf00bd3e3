package kit

import (
	"net/http"
	"strings"
)

// Bearer returns the token of an Authorization: Bearer header, and
// whether the request sends an Authorization header at all (a header of
// another scheme is ("", true): a bad credential, not anonymity). It
// reads one header and allocates nothing.
func Bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return "", false
	}
	scheme, tok, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return "", true // another scheme: a bad credential, not anonymity
	}
	return strings.TrimSpace(tok), true
}
