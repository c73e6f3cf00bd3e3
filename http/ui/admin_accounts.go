package ui

// This file serves the administrators' pages of accounts: the users (with
// their groups; adding, disabling and enabling them, setting their
// groups), a user's API tokens (creating one shows its secret once;
// revoking) and the audit trail. Each calls the AccountService, which
// judges the caller and records the change in the audit trail.

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// adminUsersData is the content of the users page.
type adminUsersData struct {
	Section string
	Users   []*shelfmark.User
	// Next is the after of the next page ("" on the last one).
	Next string
	// Back is this page's address, for its forms to return to.
	Back string
	// Error says why the form to add a user was refused; Form holds what
	// it was sent with (but the password), to send again.
	Error string
	Form  url.Values
}

// adminUsers handles GET /admin/users?after=: a page of the users, by key.
func (s adminPages) adminUsers(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdminPage(r); err != nil {
		return err
	}
	var after int64
	if v := r.URL.Query().Get("after"); v != "" {
		var err error
		if after, err = strconv.ParseInt(v, 10, 64); err != nil || after < 0 {
			return shelfmark.Errorf(shelfmark.EINVALID, "after must be the next of a page of users, not %q.", clipText(v, 40))
		}
	}
	return s.renderUsers(w, r, after, http.StatusOK, nil)
}

// renderUsers writes the page of the users after the key after; formErr,
// when not nil, is why the form to add a user (r.PostForm) was refused,
// and the page's status says so.
func (s adminPages) renderUsers(w http.ResponseWriter, r *http.Request, after int64, status int, formErr error) error {
	acc, err := s.deps.AccountService()
	if err != nil {
		return err
	}
	users, err := acc.Users(r.Context(), after, adminPageSize+1)
	if err != nil {
		return err
	}
	p := s.page(w, r, "admin.users.title")
	p.Nav = "admin"
	p.Notice = s.adminNotice(p, r)
	d := &adminUsersData{Section: "users", Users: users, Back: r.URL.RequestURI(), Form: url.Values{}}
	if formErr != nil {
		d.Error = shelfmark.ErrorMessage(formErr)
		d.Form = url.Values{"name": {r.PostForm.Get("name")}, "groups": {r.PostForm.Get("groups")}, "admin": {r.PostForm.Get("admin")}}
		d.Back = "/admin/users"
	}
	if len(users) > adminPageSize {
		d.Users = users[:adminPageSize]
		d.Next = strconv.FormatInt(d.Users[adminPageSize-1].Key, 10)
	}
	p.Data = d
	return s.render(w, r, status, "admin_users", p)
}

// formRefusal returns the status with which a form's page is shown again
// for err, or 0 when err is no fault of what the form was given.
func formRefusal(err error) int {
	switch shelfmark.ErrorCode(err) {
	case shelfmark.EINVALID:
		return http.StatusBadRequest
	case shelfmark.ECONFLICT:
		return http.StatusConflict
	}
	return 0
}

// splitGroups reads the groups of a form field: names separated by
// commas or spaces.
func splitGroups(v string) []string {
	return strings.FieldsFunc(v, func(c rune) bool { return c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r' })
}

// adminAddUser handles POST /admin/users: name, password (may be empty:
// no password sign-in), admin ("1") and groups make a user.
func (s adminPages) adminAddUser(w http.ResponseWriter, r *http.Request) error {
	acc, err := s.adminAccounts(r)
	if err != nil {
		return err
	}
	f := r.PostForm
	name := strings.TrimSpace(f.Get("name"))
	if _, err := acc.AddUser(r.Context(), name, f.Get("password"), f.Get("admin") == "1", splitGroups(f.Get("groups"))); err != nil {
		if status := formRefusal(err); status != 0 {
			return s.renderUsers(w, r, 0, status, err)
		}
		return err
	}
	http.Redirect(w, r, withNotice("/admin/users", "/admin/users", url.Values{"notice": {"added"}, "name": {name}}), http.StatusSeeOther)
	return nil
}

// adminSetDisabled handles POST /admin/users/{name}/disabled: disabled
// "1" disables the user (its tokens and sessions stop working at once),
// "0" enables it again.
func (s adminPages) adminSetDisabled(w http.ResponseWriter, r *http.Request) error {
	acc, err := s.adminAccounts(r)
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	var disabled bool
	switch v := r.PostForm.Get("disabled"); v {
	case "1":
		disabled = true
	case "0":
	default:
		return shelfmark.Errorf(shelfmark.EINVALID, "disabled must be 1 or 0, not %q.", clipText(v, 40))
	}
	if err := acc.SetDisabled(r.Context(), name, disabled); err != nil {
		return err
	}
	notice := "enabled"
	if disabled {
		notice = "disabled"
	}
	http.Redirect(w, r, withNotice(r.PostForm.Get("back"), "/admin/users", url.Values{"notice": {notice}, "name": {name}}), http.StatusSeeOther)
	return nil
}

// adminSetGroups handles POST /admin/users/{name}/groups: groups (names
// separated by commas or spaces; empty for none) replace the user's.
func (s adminPages) adminSetGroups(w http.ResponseWriter, r *http.Request) error {
	acc, err := s.adminAccounts(r)
	if err != nil {
		return err
	}
	name := r.PathValue("name")
	if err := acc.SetGroups(r.Context(), name, splitGroups(r.PostForm.Get("groups"))); err != nil {
		return err
	}
	http.Redirect(w, r, withNotice(r.PostForm.Get("back"), "/admin/users", url.Values{"notice": {"groups"}, "name": {name}}), http.StatusSeeOther)
	return nil
}

// adminTokensData is the content of a user's tokens page, and of the
// page that shows a new token's secret.
type adminTokensData struct {
	Section string
	User    string
	Tokens  []*shelfmark.Token
	// Secret is set on the page of a token just made: shown this once.
	Secret string
	Token  *shelfmark.Token
	Now    time.Time
	// Error says why the form to create a token was refused; Form holds
	// what it was sent with, to send again.
	Error string
	Form  url.Values
}

// adminTokens handles GET /admin/tokens?user=: the user's API tokens (the
// caller's own without user), newest first, never their secrets.
func (s adminPages) adminTokens(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdminPage(r); err != nil {
		return err
	}
	user := r.URL.Query().Get("user")
	if user == "" {
		user = shelfmark.CallerFrom(r.Context()).Name
	}
	return s.renderTokens(w, r, user, http.StatusOK, nil)
}

// renderTokens writes the page of user's tokens; formErr, when not nil,
// is why the form to create one (r.PostForm) was refused, and the page's
// status says so.
func (s adminPages) renderTokens(w http.ResponseWriter, r *http.Request, user string, status int, formErr error) error {
	acc, err := s.deps.AccountService()
	if err != nil {
		return err
	}
	toks, err := acc.Tokens(r.Context(), user)
	if err != nil {
		return err
	}
	p := s.page(w, r, "admin.tokens.title", user)
	p.Nav = "admin"
	p.Notice = s.adminNotice(p, r)
	d := &adminTokensData{Section: "tokens", User: user, Tokens: toks, Now: s.now(), Form: url.Values{"scope": {"write"}, "expires": {"90d"}}}
	if formErr != nil {
		d.Error = shelfmark.ErrorMessage(formErr)
		d.Form = url.Values{"scope": {r.PostForm.Get("scope")}, "expires": {r.PostForm.Get("expires")}, "note": {r.PostForm.Get("note")}}
	}
	p.Data = d
	return s.render(w, r, status, "admin_tokens", p)
}

// adminCreateToken handles POST /admin/tokens: user, scope (read, write or
// admin; empty for write), expires (a lifetime such as 90d, or a date;
// empty for never) and note make an API token. The answer is a page with
// its secret, shown this once (201; it is never stored, and no page shows
// it again).
func (s adminPages) adminCreateToken(w http.ResponseWriter, r *http.Request) error {
	acc, err := s.adminAccounts(r)
	if err != nil {
		return err
	}
	f := r.PostForm
	nt := shelfmark.NewToken{User: strings.TrimSpace(f.Get("user")), Kind: shelfmark.TokenAPI, Scope: shelfmark.Scope(f.Get("scope")), Note: f.Get("note")}
	if nt.User == "" {
		nt.User = shelfmark.CallerFrom(r.Context()).Name
	}
	if v := strings.TrimSpace(f.Get("expires")); v != "" {
		t, err := kit.ParseExpiry(v, s.now())
		if err != nil {
			return s.renderTokens(w, r, nt.User, http.StatusBadRequest, err)
		}
		nt.Expires = &t
	}
	secret, tok, err := acc.CreateToken(r.Context(), nt)
	if err != nil {
		if status := formRefusal(err); status != 0 {
			return s.renderTokens(w, r, nt.User, status, err)
		}
		return err
	}
	p := s.page(w, r, "admin.token.title", nt.User)
	p.Nav = "admin"
	p.Data = &adminTokensData{Section: "tokens", User: nt.User, Secret: secret, Token: tok, Now: s.now()}
	return s.render(w, r, http.StatusCreated, "admin_token", p)
}

// adminRevokeToken handles POST /admin/tokens/{id}/revoke: the user's
// token (user: the form's, or the caller) is revoked.
func (s adminPages) adminRevokeToken(w http.ResponseWriter, r *http.Request) error {
	acc, err := s.adminAccounts(r)
	if err != nil {
		return err
	}
	key, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || key <= 0 {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "There is no token %q; token ids are whole numbers.", clipText(r.PathValue("id"), 40))
	}
	user := strings.TrimSpace(r.PostForm.Get("user"))
	if user == "" {
		user = shelfmark.CallerFrom(r.Context()).Name
	}
	if err := acc.RevokeToken(r.Context(), user, key); err != nil {
		return err
	}
	back := "/admin/tokens?user=" + url.QueryEscape(user)
	http.Redirect(w, r, withNotice(back, back, url.Values{"notice": {"revoked"}, "name": {user}}), http.StatusSeeOther)
	return nil
}

// adminAuditData is the content of the audit page.
type adminAuditData struct {
	Section string
	Entries []adminAuditEntry
	// the filters, as given
	Resource, Actor, After string
	// Next is the address of the next page ("" on the last one).
	Next string
}

// adminAuditEntry is one entry on the page.
type adminAuditEntry struct {
	*shelfmark.AuditEntry
	ResourceID shelfmark.ID
}

// adminAudit handles GET /admin/audit?resource=&actor=&after=&cursor=:
// the audit trail, newest first, a page at a time.
func (s adminPages) adminAudit(w http.ResponseWriter, r *http.Request) error {
	acc, err := s.adminAccounts(r)
	if err != nil {
		return err
	}
	qv := r.URL.Query()
	d := &adminAuditData{Section: "audit", Resource: strings.TrimSpace(qv.Get("resource")), Actor: strings.TrimSpace(qv.Get("actor")), After: strings.TrimSpace(qv.Get("after"))}
	q, err := kit.AuditQuery(s.deps.Resources.IDs(), d.Resource, d.Actor, d.After, qv.Get("cursor"), adminPageSize)
	if err != nil {
		return err
	}
	entries, err := acc.Audit(r.Context(), q)
	if err != nil {
		return err
	}
	for _, e := range entries {
		a := adminAuditEntry{AuditEntry: e}
		if e.Resource > 0 && e.Resource <= shelfmark.MaxKey {
			a.ResourceID = s.deps.Resources.IDs().Encode(e.Resource)
		}
		d.Entries = append(d.Entries, a)
	}
	if len(entries) == q.Limit {
		next := url.Values{"cursor": {strconv.FormatInt(entries[len(entries)-1].Key, 10)}}
		for k, v := range map[string]string{"resource": d.Resource, "actor": d.Actor, "after": d.After} {
			if v != "" {
				next.Set(k, v)
			}
		}
		d.Next = "/admin/audit?" + next.Encode()
	}
	p := s.page(w, r, "admin.audit.title")
	p.Nav = "admin"
	p.Data = d
	return s.render(w, r, http.StatusOK, "admin_audit", p)
}

// adminAccounts returns the account service for an administrators' page,
// after refusing anyone else (see requireAdminPage).
func (s adminPages) adminAccounts(r *http.Request) (shelfmark.AccountService, error) {
	if err := requireAdminPage(r); err != nil {
		return nil, err
	}
	return s.deps.AccountService()
}
