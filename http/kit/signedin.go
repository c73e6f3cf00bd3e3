package kit

import (
	"net/http"

	"github.com/shelfmark/shelfmark"
)

// SignedIn returns the caller on the request's context, or EUNAUTHORIZED
// (naming what, the route or page that needs a caller) when it is
// anonymous. It decides nothing else: what the caller may do is the
// engine's to answer.
func SignedIn(r *http.Request, what string) (*shelfmark.Caller, error) {
	c := shelfmark.CallerFrom(r.Context())
	if !c.Authenticated() {
		return nil, NeedSignIn(what)
	}
	return c, nil
}

// NeedSignIn is the EUNAUTHORIZED error of an anonymous request that what
// (a route or page) needs a caller for.
func NeedSignIn(what string) error {
	return shelfmark.Errorf(shelfmark.EUNAUTHORIZED, "%s needs credentials: send Authorization: Bearer with an API token, or sign in at POST /api/v1/login.", what)
}
