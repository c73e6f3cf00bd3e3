package http

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/api"
)

// createdToken is the answer of POST /api/v1/tokens.
type createdToken struct {
	Token string `json:"token"`
	api.TokenJSON
}

func TestTokensOverTheAPI(t *testing.T) {
	e := newEnv(t, Options{})
	ann := e.addUser("ann", shelfmark.ScopeWrite, "staff")
	var who callerJSON
	e.do("GET", "/api/v1/me", nil, as(ann)...).want(t, http.StatusOK).json(t, &who)
	if who.User != "ann" || who.Admin || who.Scope != "write" || who.Via != "token" || len(who.Groups) != 1 || who.Groups[0] != "staff" {
		t.Errorf("me %+v", who)
	}
	e.do("GET", "/api/v1/me", nil, as("")...).wantError(t, http.StatusUnauthorized, shelfmark.EUNAUTHORIZED)

	// ann makes a read token for a script, valid 90 days
	r := e.do("POST", "/api/v1/tokens", `{"scope": "read", "expires": "90d", "note": "harvester"}`, as(ann, "Content-Type", "application/json")...).want(t, http.StatusCreated)
	var made createdToken
	r.json(t, &made)
	if !strings.HasPrefix(made.Token, shelfmark.TokenPrefix) || made.ID == 0 || made.Scope != "read" || made.Note != "harvester" || !strings.HasPrefix(made.Token, made.Hint) {
		t.Errorf("made %+v", made)
	}
	if made.Expires == nil || made.Expires.Sub(e.clock.now().Add(90*24*time.Hour)).Abs() > time.Hour {
		t.Errorf("expires %v", made.Expires)
	}
	if r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q", r.Header.Get("Cache-Control"))
	}
	e.do("GET", "/api/v1/me", nil, as(made.Token)...).want(t, http.StatusOK).json(t, &who)
	if who.User != "ann" || who.Scope != "read" {
		t.Errorf("me with the new token %+v", who)
	}
	// The list shows hints, never secrets.
	r = e.do("GET", "/api/v1/tokens", nil, as(ann)...).want(t, http.StatusOK)
	if strings.Contains(string(r.Body), made.Token) || strings.Contains(string(r.Body), ann) {
		t.Errorf("a secret is listed: %s", r.Body)
	}
	var list struct {
		Tokens []api.TokenJSON `json:"tokens"`
	}
	r.json(t, &list)
	if len(list.Tokens) != 2 {
		t.Fatalf("ann's tokens: %+v", list.Tokens)
	}
	// A read token makes no token stronger than itself, and writes nothing.
	e.do("POST", "/api/v1/tokens", `{"scope": "write"}`, as(made.Token, "Content-Type", "application/json")...).wantError(t, http.StatusForbidden, shelfmark.EFORBIDDEN)
	e.do("POST", "/api/v1/tokens", `{"scope": "admin"}`, as(ann, "Content-Type", "application/json")...).wantError(t, http.StatusForbidden, shelfmark.EFORBIDDEN)
	// Bad bodies.
	for _, body := range []string{`{"scope": "root"}`, `{"expires": "yesterday"}`, `{"expires": "2001-01-01"}`, `{"expires": "0d"}`, `{"note": "` + strings.Repeat("n", 2000) + `"}`, `{"secret": "x"}`} {
		e.do("POST", "/api/v1/tokens", body, as(ann, "Content-Type", "application/json")...).wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	}
	// Another user's tokens are neither listed nor revoked by ann.
	bob := e.addUser("bob", shelfmark.ScopeWrite)
	e.do("GET", "/api/v1/tokens?user=bob", nil, as(ann)...).wantError(t, http.StatusForbidden, shelfmark.EFORBIDDEN)
	var bobs struct {
		Tokens []api.TokenJSON `json:"tokens"`
	}
	e.do("GET", "/api/v1/tokens?user=bob", nil).want(t, http.StatusOK).json(t, &bobs) // the admin may
	if len(bobs.Tokens) != 1 {
		t.Fatalf("bob's tokens %+v", bobs.Tokens)
	}
	bobID := strconv.FormatInt(bobs.Tokens[0].ID, 10)
	r = e.do("DELETE", "/api/v1/tokens/"+bobID, nil, as(ann)...)
	if r.Status != http.StatusNotFound && r.Status != http.StatusForbidden {
		t.Errorf("ann revoking bob's token: %d %s", r.Status, r.Body)
	}
	e.do("GET", "/api/v1/me", nil, as(bob)...).want(t, http.StatusOK)
	e.do("DELETE", "/api/v1/tokens/x1", nil, as(ann)...).wantError(t, http.StatusNotFound, shelfmark.ENOTFOUND)
	// ann revokes her read token: it stops at once.
	e.do("DELETE", "/api/v1/tokens/"+strconv.FormatInt(made.ID, 10), nil, as(ann)...).want(t, http.StatusNoContent)
	wantInvalidToken(t, e.do("GET", "/api/v1/me", nil, as(made.Token)...))
	// The admin revokes bob's.
	e.do("DELETE", "/api/v1/tokens/"+bobID+"?user=bob", nil).want(t, http.StatusNoContent)
	wantInvalidToken(t, e.do("GET", "/api/v1/me", nil, as(bob)...))
}

// rolesBody is the answer of the roles routes.
type rolesBody struct {
	Resource *string         `json:"resource"`
	Grants   []api.GrantJSON `json:"grants"`
}

func TestRolesOverTheAPI(t *testing.T) {
	e := newEnv(t, Options{})
	coll := e.create("/api/v1/collections", `{"visibility": "public"}`)
	ann := e.addUser("ann", shelfmark.ScopeWrite)
	bob := e.addUser("bob", shelfmark.ScopeWrite)
	p := "/api/v1/resources/" + string(coll.ID) + "/roles"
	json := "application/json"

	var got rolesBody
	e.do("GET", p, nil).want(t, http.StatusOK).json(t, &got)
	if got.Resource == nil || *got.Resource != string(coll.ID) || len(got.Grants) != 0 {
		t.Errorf("roles %+v", got)
	}
	e.do("PUT", p, `{"grants": [{"principal": "user:ann", "role": "manager"}, {"principal": "group:staff", "role": "viewer"}]}`, "Content-Type", json).
		want(t, http.StatusOK).json(t, &got)
	if len(got.Grants) != 2 || got.Grants[0] != (api.GrantJSON{Principal: "group:staff", Role: "viewer"}) || got.Grants[1] != (api.GrantJSON{Principal: "user:ann", Role: "manager"}) {
		t.Errorf("roles after PUT %+v", got.Grants)
	}
	// ann manages the collection: she may read and change its roles.
	e.do("GET", p, nil, as(ann)...).want(t, http.StatusOK)
	e.do("PUT", p, `{"grants": [{"principal": "user:ann", "role": "manager"}, {"principal": "user:bob", "role": "curator"}]}`, as(ann, "Content-Type", json)...).want(t, http.StatusOK)
	// bob, a curator, may not grant roles.
	before := e.do("GET", p, nil).want(t, http.StatusOK).Body
	r := e.do("PUT", p, `{"grants": [{"principal": "user:bob", "role": "manager"}]}`, as(bob, "Content-Type", json)...)
	if r.Status != http.StatusForbidden && r.Status != http.StatusNotFound {
		t.Errorf("a curator granting roles: %d %s", r.Status, r.Body)
	}
	if after := e.do("GET", p, nil).Body; string(after) != string(before) {
		t.Errorf("roles changed: %s -> %s", before, after)
	}
	// Anonymous callers learn nothing.
	e.do("GET", p, nil, as("")...).wantError(t, http.StatusUnauthorized, shelfmark.EUNAUTHORIZED)
	e.do("PUT", p, `{"grants": []}`, as("", "Content-Type", json)...).wantError(t, http.StatusUnauthorized, shelfmark.EUNAUTHORIZED)
	// Malformed grants are 400.
	for _, body := range []string{`{"grants": [{"principal": "ann", "role": "manager"}]}`, `{"grants": [{"principal": "user:ann", "role": "owner"}]}`,
		`{"grants": [{"principal": "user:", "role": "viewer"}]}`, `{}`, `{"grants": [{"principal": "user:ann", "role": "viewer", "x": 1}]}`} {
		e.do("PUT", p, body, "Content-Type", json).wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	}
	e.do("GET", "/api/v1/resources/notanid00/roles", nil).wantError(t, http.StatusNotFound, shelfmark.ENOTFOUND)

	// Repository-wide roles are the admin's.
	e.do("PUT", "/api/v1/roles", `{"grants": [{"principal": "group:curators", "role": "curator"}]}`, "Content-Type", json).want(t, http.StatusOK).json(t, &got)
	if got.Resource != nil || len(got.Grants) != 1 {
		t.Errorf("repository roles %+v", got)
	}
	e.do("PUT", "/api/v1/roles", `{"grants": []}`, as(ann, "Content-Type", json)...).wantError(t, http.StatusForbidden, shelfmark.EFORBIDDEN)
}

func TestAuditOverTheAPI(t *testing.T) {
	e := newEnv(t, Options{})
	e.do("POST", "/api/v1/login", `{"name": "admin", "password": "wrong"}`, as("", "Content-Type", "application/json", "X-Request-Id", "login-1")...).
		wantError(t, http.StatusUnauthorized, shelfmark.EUNAUTHORIZED)
	e.login("admin", adminPassword)
	e.login("admin", adminPassword)

	type page struct {
		Entries []api.AuditJSON `json:"entries"`
		Next    string          `json:"next"`
	}
	var all page
	e.do("GET", "/api/v1/audit", nil).want(t, http.StatusOK).json(t, &all)
	var failed *api.AuditJSON
	for i := range all.Entries {
		if all.Entries[i].Request == "login-1" {
			failed = &all.Entries[i]
		}
	}
	if failed == nil || failed.Action != "login" || failed.Outcome != shelfmark.AuditFailed {
		t.Fatalf("the failed login is not in the trail with its request id: %+v", all.Entries)
	}
	for i := 1; i < len(all.Entries); i++ {
		if all.Entries[i].ID >= all.Entries[i-1].ID {
			t.Fatalf("not newest first: %+v", all.Entries)
		}
	}
	// Keyset pages of one entry walk the same entries.
	var walked []int64
	cursor := ""
	for i := 0; i <= len(all.Entries); i++ {
		var pg page
		e.do("GET", "/api/v1/audit?limit=1&cursor="+cursor, nil).want(t, http.StatusOK).json(t, &pg)
		for _, en := range pg.Entries {
			walked = append(walked, en.ID)
		}
		if pg.Next == "" {
			break
		}
		cursor = pg.Next
	}
	if len(walked) != len(all.Entries) {
		t.Errorf("paged %v, whole %d entries", walked, len(all.Entries))
	}
	var mine page
	e.do("GET", "/api/v1/audit?actor=admin&after=2000-01-01", nil).want(t, http.StatusOK).json(t, &mine)
	for _, en := range mine.Entries {
		if en.Actor != "admin" {
			t.Errorf("actor filter let through %+v", en)
		}
	}
	for _, q := range []string{"limit=0", "limit=x", "cursor=-1", "cursor=abc", "after=yesterday", "resource=nope"} {
		e.do("GET", "/api/v1/audit?"+q, nil).wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	}
	ann := e.addUser("ann", shelfmark.ScopeWrite)
	e.do("GET", "/api/v1/audit", nil, as(ann)...).wantError(t, http.StatusForbidden, shelfmark.EFORBIDDEN)
	e.do("GET", "/api/v1/audit", nil, as("")...).wantError(t, http.StatusUnauthorized, shelfmark.EUNAUTHORIZED)
}
