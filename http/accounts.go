package http

// This file serves the account routes: login and logout (the session
// cookie), the caller (me), the caller's API tokens, the roles granted on
// a collection or on the repository, and the audit trail. Each calls the
// AccountService, which decides with the caller on the context what it
// may do.

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// maxNameBytes bounds user names read from requests.
const (
	maxNameBytes = kit.MaxNameBytes
	// maxAccountBody bounds the JSON bodies of the account routes but
	// roles (a login is a few hundred bytes).
	maxAccountBody = 64 << 10
)

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
	if err := kit.ReadJSON(w, r, maxAccountBody, &in); err != nil {
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

// tokenJSON is an API token as listed (never its secret).
type tokenJSON struct {
	ID      int64      `json:"id"`
	Hint    string     `json:"hint"`
	Scope   string     `json:"scope"`
	Note    string     `json:"note,omitempty"`
	Created time.Time  `json:"created"`
	Expires *time.Time `json:"expires"`
	Revoked *time.Time `json:"revoked,omitempty"`
}

func newTokenJSON(t *shelfmark.Token) tokenJSON {
	return tokenJSON{ID: t.Key, Hint: t.Hint, Scope: string(t.Scope), Note: t.Note, Created: t.Created, Expires: t.Expires, Revoked: t.Revoked}
}

// createToken handles POST /api/v1/tokens: {scope, expires, note} makes
// an API token for the caller (an administrator may name another user)
// and shows its secret, this once.
func (s *Server) createToken(w http.ResponseWriter, r *http.Request) error {
	acc, err := s.deps.AccountService()
	if err != nil {
		return err
	}
	c, err := kit.SignedIn(r, "POST /api/v1/tokens")
	if err != nil {
		return err
	}
	var in struct {
		User    string  `json:"user"`
		Scope   string  `json:"scope"`
		Expires *string `json:"expires"`
		Note    string  `json:"note"`
	}
	if err := kit.ReadJSON(w, r, maxAccountBody, &in); err != nil {
		return err
	}
	nt := shelfmark.NewToken{User: c.Name, Kind: shelfmark.TokenAPI, Scope: shelfmark.Scope(in.Scope), Note: in.Note}
	if in.User != "" {
		nt.User = in.User
	}
	// the scope (write, or the caller's own when narrower, by default) and
	// the note are judged, and a refusal recorded, by the account service
	if in.Expires != nil {
		t, err := kit.ParseExpiry(*in.Expires, s.now())
		if err != nil {
			return err
		}
		nt.Expires = &t
	}
	secret, tok, err := acc.CreateToken(r.Context(), nt)
	if err != nil {
		return err
	}
	out := struct {
		Token string `json:"token"`
		tokenJSON
	}{Token: secret, tokenJSON: newTokenJSON(tok)}
	w.Header().Set("Cache-Control", "no-store")
	return kit.WriteJSON(w, http.StatusCreated, out)
}

// listTokens handles GET /api/v1/tokens[?user=NAME]: the caller's API
// tokens (an administrator may name another user).
func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) error {
	acc, err := s.deps.AccountService()
	if err != nil {
		return err
	}
	c, err := kit.SignedIn(r, "GET /api/v1/tokens")
	if err != nil {
		return err
	}
	user := r.URL.Query().Get("user")
	if user == "" {
		user = c.Name
	}
	toks, err := acc.Tokens(r.Context(), user)
	if err != nil {
		return err
	}
	out := struct {
		Tokens []tokenJSON `json:"tokens"`
	}{Tokens: make([]tokenJSON, len(toks))}
	for i, t := range toks {
		out.Tokens[i] = newTokenJSON(t)
	}
	return kit.WriteJSON(w, http.StatusOK, out)
}

// revokeToken handles DELETE /api/v1/tokens/{id}[?user=NAME].
func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) error {
	acc, err := s.deps.AccountService()
	if err != nil {
		return err
	}
	c, err := kit.SignedIn(r, "DELETE /api/v1/tokens/{id}")
	if err != nil {
		return err
	}
	key, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || key <= 0 {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "There is no token %q; token ids are whole numbers (GET /api/v1/tokens lists them).", r.PathValue("id"))
	}
	user := r.URL.Query().Get("user")
	if user == "" {
		user = c.Name
	}
	if err := acc.RevokeToken(r.Context(), user, key); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// grantJSON is one grant of a role.
type grantJSON struct {
	Principal string `json:"principal"`
	Role      string `json:"role"`
}

// rolesJSON is the body of the roles routes.
type rolesJSON struct {
	Resource *shelfmark.ID `json:"resource"` // null: the repository
	Grants   []grantJSON   `json:"grants"`
}

// rolesTarget returns the collection a roles route names ("": the
// repository).
func rolesTarget(r *http.Request) (shelfmark.ID, error) {
	id := shelfmark.ID(r.PathValue("id"))
	if id == "" {
		return "", nil
	}
	if err := id.Check(); err != nil {
		return "", err
	}
	return id, nil
}

func (s *Server) writeRoles(w http.ResponseWriter, r *http.Request, acc shelfmark.AccountService, id shelfmark.ID) error {
	grants, err := acc.Roles(r.Context(), id)
	if err != nil {
		return err
	}
	out := rolesJSON{Grants: make([]grantJSON, len(grants))}
	if id != "" {
		out.Resource = &id
	}
	for i, g := range grants {
		out.Grants[i] = grantJSON{Principal: g.Principal, Role: string(g.Role)}
	}
	return kit.WriteJSON(w, http.StatusOK, out)
}

// getRoles handles GET /api/v1/resources/{id}/roles and GET
// /api/v1/roles (the repository's).
func (s *Server) getRoles(w http.ResponseWriter, r *http.Request) error {
	acc, err := s.deps.AccountService()
	if err != nil {
		return err
	}
	if _, err := kit.SignedIn(r, r.Pattern); err != nil {
		return err
	}
	id, err := rolesTarget(r)
	if err != nil {
		return err
	}
	return s.writeRoles(w, r, acc, id)
}

// putRoles handles PUT /api/v1/resources/{id}/roles and PUT
// /api/v1/roles: {"grants": [{"principal": "user:ann", "role":
// "curator"}]} replaces every grant there.
func (s *Server) putRoles(w http.ResponseWriter, r *http.Request) error {
	acc, err := s.deps.AccountService()
	if err != nil {
		return err
	}
	if _, err := kit.SignedIn(r, r.Pattern); err != nil {
		return err
	}
	id, err := rolesTarget(r)
	if err != nil {
		return err
	}
	var in struct {
		Grants *[]grantJSON `json:"grants"`
	}
	if err := kit.ReadJSON(w, r, s.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	if in.Grants == nil {
		return shelfmark.Errorf(shelfmark.EINVALID, `The body must be {"grants": [{"principal": "user:NAME" or "group:NAME", "role": "manager"|"curator"|"depositor"|"viewer"}]}.`)
	}
	grants := make([]shelfmark.Grant, len(*in.Grants))
	for i, g := range *in.Grants {
		kind, name, _ := strings.Cut(g.Principal, ":")
		if (kind != "user" && kind != "group") || name == "" || len(name) > maxNameBytes {
			return &shelfmark.Error{Code: shelfmark.EINVALID, Message: `grants[` + strconv.Itoa(i) + `].principal must be "user:NAME" or "group:NAME", not ` + strconv.Quote(g.Principal) + `.`,
				Details: map[string]any{"index": i}}
		}
		if !shelfmark.Role(g.Role).Valid() {
			return &shelfmark.Error{Code: shelfmark.EINVALID, Message: `grants[` + strconv.Itoa(i) + `].role must be manager, curator, depositor or viewer, not ` + strconv.Quote(g.Role) + `.`,
				Details: map[string]any{"index": i}}
		}
		grants[i] = shelfmark.Grant{Principal: g.Principal, Role: shelfmark.Role(g.Role)}
	}
	if err := acc.SetRoles(r.Context(), id, grants); err != nil {
		return err
	}
	return s.writeRoles(w, r, acc, id)
}

// auditJSON is one entry of the audit trail.
type auditJSON struct {
	ID         int64        `json:"id"`
	At         time.Time    `json:"at"`
	Actor      string       `json:"actor"`
	Token      int64        `json:"token,omitempty"`
	Action     string       `json:"action"`
	Resource   shelfmark.ID `json:"resource,omitempty"`
	Predicates []string     `json:"predicates,omitempty"`
	Outcome    string       `json:"outcome"`
	Detail     string       `json:"detail,omitempty"`
	Request    string       `json:"request,omitempty"`
}

// audit handles GET /api/v1/audit?resource=&actor=&after=&cursor=&limit=:
// the audit trail, newest first; cursor is the next of the page before.
func (s *Server) audit(w http.ResponseWriter, r *http.Request) error {
	acc, err := s.deps.AccountService()
	if err != nil {
		return err
	}
	if _, err := kit.SignedIn(r, "GET /api/v1/audit"); err != nil {
		return err
	}
	qv := r.URL.Query()
	q := shelfmark.AuditQuery{Actor: qv.Get("actor"), Limit: 100}
	if v := qv.Get("resource"); v != "" {
		k, err := s.opts.Resources.IDs().Key(shelfmark.ID(v))
		if err != nil {
			return shelfmark.Errorf(shelfmark.EINVALID, "resource: %q is not a resource id.", v)
		}
		q.Resource = k
	}
	if v := qv.Get("after"); v != "" {
		t, err := kit.ParseTime("after", v)
		if err != nil {
			return err
		}
		q.After = t
	}
	if v := qv.Get("cursor"); v != "" {
		k, err := strconv.ParseInt(v, 10, 64)
		if err != nil || k <= 0 {
			return shelfmark.Errorf(shelfmark.EINVALID, "cursor: %q is not the next of an audit page.", v)
		}
		q.Before = k
	}
	if v := qv.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > shelfmark.MaxPageSize {
			return shelfmark.Errorf(shelfmark.EINVALID, "limit must be a whole number from 1 to %d.", shelfmark.MaxPageSize)
		}
		q.Limit = n
	}
	entries, err := acc.Audit(r.Context(), q)
	if err != nil {
		return err
	}
	out := struct {
		Entries []auditJSON `json:"entries"`
		Next    string      `json:"next,omitempty"`
	}{Entries: make([]auditJSON, len(entries))}
	for i, e := range entries {
		a := auditJSON{ID: e.Key, At: e.At, Actor: e.Actor, Token: e.Token, Action: e.Action, Predicates: e.Predicates,
			Outcome: e.Outcome, Detail: e.Detail, Request: e.Request}
		if e.Resource > 0 && e.Resource <= shelfmark.MaxKey {
			a.Resource = s.opts.Resources.IDs().Encode(e.Resource)
		}
		out.Entries[i] = a
	}
	if len(entries) == q.Limit && q.Limit > 0 {
		out.Next = strconv.FormatInt(entries[len(entries)-1].Key, 10)
	}
	return kit.WriteJSON(w, http.StatusOK, out)
}
