package http

// This file serves the sign-in routes: login and logout (the session
// cookie) and the caller (me). The caller's API tokens, the roles and the
// audit trail are the REST API's (package api). Each calls the
// AccountService, which decides with the caller on the context what it
// may do.

import (
	"net/http"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// maxNameBytes bounds user names read from requests.
const maxNameBytes = kit.MaxNameBytes

// callerJSON is who the caller is (login and me).
type callerJSON struct {
	User   string   `json:"user"`
	Admin  bool     `json:"admin"`
	Groups []string `json:"groups"`
	Scope  string   `json:"scope,omitempty"`
	// Via says how the request authenticated: "token" or "session".
	Via string `json:"via,omitempty"`
}

func newCallerJSON(c *shelfmark.Caller) callerJSON {
	g := c.Groups
	if g == nil {
		g = []string{}
	}
	return callerJSON{User: c.Name, Admin: c.Admin, Groups: g, Scope: string(c.Scope)}
}

// login handles POST /api/v1/login: {name, password} opens a session and
// sets its cookie. Failures count against the client's address and the
// name (see Options.MaxAuthFailures).
func (s *Server) login(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.deps.AccountService(); err != nil {
		return err
	}
	var in struct {
		Name     string `json:"name"`
		Password string `json:"password"`
	}
	if err := kit.ReadJSON(w, r, kit.MaxAccountBody, &in); err != nil {
		return err
	}
	secret, c, err := s.passwordLogin(r, in.Name, in.Password)
	if err != nil {
		return err
	}
	http.SetCookie(w, s.deps.SessionCookie(r, secret, 0))
	out := newCallerJSON(c)
	out.Via = "session"
	return kit.WriteJSON(w, http.StatusOK, out)
}

// logout handles POST /api/v1/logout: it revokes the session the cookie
// names and clears the cookie. (API tokens are revoked with DELETE
// /api/v1/tokens/{id}.)
func (s *Server) logout(w http.ResponseWriter, r *http.Request) error {
	if err := s.endSession(w, r); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// passwordLogin checks a name and password and opens a session, for the
// API's login and the sign-in form. Failures count against the client's
// address and the name (see Options.MaxAuthFailures).
func (s *Server) passwordLogin(r *http.Request, name, password string) (string, *shelfmark.Caller, error) {
	acc, err := s.deps.AccountService()
	if err != nil {
		return "", nil, err
	}
	if name == "" || len(name) > maxNameBytes {
		return "", nil, shelfmark.Errorf(shelfmark.EINVALID, "name must be a user name of 1 to %d bytes.", maxNameBytes)
	}
	keys := []string{s.client(r), userKey(name)}
	if wait := s.limiter.blocked(keys...); wait > 0 {
		return "", nil, tooMany(wait)
	}
	secret, c, err := acc.Login(r.Context(), name, password)
	if err != nil {
		if shelfmark.ErrorCode(err) == shelfmark.EUNAUTHORIZED {
			s.limiter.fail(keys...)
			return "", nil, shelfmark.Errorf(shelfmark.EUNAUTHORIZED, "Wrong user name or password (or the account cannot sign in).")
		}
		return "", nil, err
	}
	s.limiter.succeed(userKey(name)) // not the address's
	return secret, c, nil
}

// endSession revokes the session the request's cookie names, if any, and
// clears the cookie.
func (s *Server) endSession(w http.ResponseWriter, r *http.Request) error {
	c := shelfmark.CallerFrom(r.Context())
	if _, via := credential(r); via == "session" && c.Authenticated() && c.Token != 0 && s.opts.Accounts != nil {
		if err := s.opts.Accounts.RevokeToken(r.Context(), c.Name, c.Token); err != nil && shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
			return err
		}
	}
	http.SetCookie(w, s.deps.SessionCookie(r, "", -1))
	return nil
}

// me handles GET /api/v1/me: who the credential belongs to.
func (s *Server) me(w http.ResponseWriter, r *http.Request) error {
	c, err := kit.SignedIn(r, "GET /api/v1/me")
	if err != nil {
		return err
	}
	out := newCallerJSON(c)
	_, out.Via = credential(r)
	return kit.WriteJSON(w, http.StatusOK, out)
}
