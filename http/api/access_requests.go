package api

// This file serves the requests for access to a work's files: a
// signed-in reader of a work's record who may not read its files asks
// for them (POST /api/v1/resources/{id}/access-requests); the caller's
// own requests, and those the caller may decide, are listed (GET
// /api/v1/access-requests) and read one by one (GET
// /api/v1/access-requests/{id}); those who manage the work grant a request
// until a time or refuse it (POST /api/v1/access-requests/{id}), list
// the grants in force on the work (GET /api/v1/resources/{id}/access-grants)
// and end one (DELETE …/access-grants/{principal}). The engine decides
// who may do what (shelfmark.AccountService: RequestAccess,
// AccessRequests, AccessRequest, DecideAccessRequest, WorkAccessGrants,
// RevokeAccess).

import (
	"net/http"
	"strconv"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// AccessRequestJSON is one request for access.
type AccessRequestJSON struct {
	ID      int64        `json:"id"`
	Work    shelfmark.ID `json:"work"`
	User    string       `json:"user"`
	Message string       `json:"message"`
	Created string       `json:"created"`
	State   string       `json:"state"`
	// Decided, Until (a grant's end) and Reply are set by the decision.
	Decided *string `json:"decided"`
	Until   *string `json:"until"`
	Reply   string  `json:"reply,omitempty"`
}

func (s *Handler) accessRequestJSON(q *shelfmark.AccessRequest) AccessRequestJSON {
	out := AccessRequestJSON{ID: q.Key, Work: s.deps.Resources.IDs().Encode(q.Resource), User: q.UserName, Message: q.Message,
		Created: kit.TimeString(q.Created), State: string(q.State), Reply: q.Reply}
	if q.Decided != nil {
		d := kit.TimeString(*q.Decided)
		out.Decided = &d
	}
	if q.Until != nil {
		u := kit.TimeString(*q.Until)
		out.Until = &u
	}
	return out
}

// accessRequestsJSON is one page of requests for access.
type accessRequestsJSON struct {
	Items []AccessRequestJSON `json:"items"`
	Next  string              `json:"next,omitempty"`
}

// requestAccess handles POST /api/v1/resources/{id}/access-requests:
// {"message": "…"} asks for the files of the work; 201 with the request
// (the caller's request on the work still waiting, when there is one).
func (s *Handler) requestAccess(w http.ResponseWriter, r *http.Request) error {
	acc, err := s.deps.AccountService()
	if err != nil {
		return err
	}
	id := shelfmark.ID(r.PathValue("id"))
	if err := id.Check(); err != nil {
		return err
	}
	if _, err := kit.SignedIn(r, "POST /api/v1/resources/{id}/access-requests"); err != nil {
		return err
	}
	var in struct {
		Message string `json:"message"`
	}
	if err := kit.ReadJSON(w, r, s.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	q, err := acc.RequestAccess(r.Context(), id, in.Message)
	if err != nil {
		return err
	}
	return kit.WriteJSON(w, http.StatusCreated, s.accessRequestJSON(q))
}

// listAccessRequests handles GET /api/v1/access-requests: with
// ?mine=true the caller's own requests (?work= those on one work);
// otherwise those the caller may decide in ?state= (open by default,
// granted, refused); newest first, ?limit= (50, at most 200) at a time,
// ?before= continuing below a page's last request.
func (s *Handler) listAccessRequests(w http.ResponseWriter, r *http.Request) error {
	acc, err := s.deps.AccountService()
	if err != nil {
		return err
	}
	if _, err := kit.SignedIn(r, "GET /api/v1/access-requests"); err != nil {
		return err
	}
	v := r.URL.Query()
	var q shelfmark.AccessRequestQuery
	switch m := v.Get("mine"); m {
	case "", "false":
	case "true":
		q.Mine = true
	default:
		return shelfmark.Errorf(shelfmark.EINVALID, "mine: %.40q is neither true nor false.", m)
	}
	if st := v.Get("state"); st != "" {
		if q.Mine {
			return shelfmark.Errorf(shelfmark.EINVALID, "state: mine=true lists all of your requests; state selects among those you may decide.")
		}
		q.State = shelfmark.AccessRequestState(st)
	}
	if wk := v.Get("work"); wk != "" {
		id := shelfmark.ID(wk)
		if !q.Mine {
			return shelfmark.Errorf(shelfmark.EINVALID, "work: selects among your own requests (mine=true).")
		}
		if err := id.Check(); err != nil {
			return shelfmark.Errorf(shelfmark.EINVALID, "work: %s", shelfmark.ErrorMessage(err))
		}
		q.Work = id
	}
	if b := v.Get("before"); b != "" {
		if q.Before, err = strconv.ParseInt(b, 10, 64); err != nil || q.Before <= 0 {
			return shelfmark.Errorf(shelfmark.EINVALID, "before: %.40q is not the id of a request (a whole number).", b)
		}
	}
	if l := v.Get("limit"); l != "" {
		if q.Limit, err = strconv.Atoi(l); err != nil || q.Limit < 1 || q.Limit > 200 {
			return shelfmark.Errorf(shelfmark.EINVALID, "limit must be a whole number from 1 to 200.")
		}
	}
	rows, next, err := acc.AccessRequests(r.Context(), q)
	if err != nil {
		return err
	}
	out := accessRequestsJSON{Items: make([]AccessRequestJSON, len(rows))}
	for i, q := range rows {
		out.Items[i] = s.accessRequestJSON(q)
	}
	if next != 0 {
		v.Set("before", strconv.FormatInt(next, 10))
		out.Next = r.URL.Path + "?" + v.Encode()
		w.Header().Add("Link", "<"+out.Next+`>; rel="next"`)
	}
	return kit.WriteJSON(w, http.StatusOK, out)
}

// accessRequestOf is the account service and the request a path's {id}
// names, for a signed-in caller of route: an id that is not a whole
// number names none (404), and a caller signed out is refused (401).
func (s *Handler) accessRequestOf(r *http.Request, route string) (shelfmark.AccountService, int64, error) {
	acc, err := s.deps.AccountService()
	if err != nil {
		return nil, 0, err
	}
	key, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || key <= 0 {
		// the path's id is not repeated: a resource's id there would
		// show in the answer to anyone
		return nil, 0, shelfmark.Errorf(shelfmark.ENOTFOUND, "There is no request for access with that id; their ids are whole numbers (GET /api/v1/access-requests lists them).")
	}
	if _, err := kit.SignedIn(r, route); err != nil {
		return nil, 0, err
	}
	return acc, key, nil
}

// getAccessRequest handles GET /api/v1/access-requests/{id}: the request,
// to the reader who made it and to those who may decide it; 404 to anyone
// else, as for a request that does not exist.
func (s *Handler) getAccessRequest(w http.ResponseWriter, r *http.Request) error {
	acc, key, err := s.accessRequestOf(r, "GET /api/v1/access-requests/{id}")
	if err != nil {
		return err
	}
	q, err := acc.AccessRequest(r.Context(), key)
	if err != nil {
		return err
	}
	return kit.WriteJSON(w, http.StatusOK, s.accessRequestJSON(q))
}

// decideAccessRequest handles POST /api/v1/access-requests/{id}:
// {"decision": "grant", "until": "2030-01-31T00:00:00Z", "reply": "…"}
// gives the reader the work's files until then (at most 366 days
// ahead); {"decision": "refuse", "reply": "…"} refuses. It answers the
// request as decided; a request decided already is 409.
func (s *Handler) decideAccessRequest(w http.ResponseWriter, r *http.Request) error {
	acc, key, err := s.accessRequestOf(r, "POST /api/v1/access-requests/{id}")
	if err != nil {
		return err
	}
	var in struct {
		Decision string  `json:"decision"`
		Until    *string `json:"until"`
		Reply    string  `json:"reply"`
	}
	if err := kit.ReadJSON(w, r, s.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	d := shelfmark.AccessDecision{Reply: in.Reply}
	switch in.Decision {
	case "grant":
		if in.Until == nil {
			return shelfmark.Errorf(shelfmark.EINVALID, "until: a grant ends at a time (2030-01-31T00:00:00Z, or a date: its midnight UTC), at most 366 days ahead.")
		}
		if d.Until, err = kit.ParseTime("until", *in.Until); err != nil {
			return err
		}
		d.Grant = true
	case "refuse":
		if in.Until != nil {
			return shelfmark.Errorf(shelfmark.EINVALID, "until: a refusal has no end; only a grant does.")
		}
	default:
		return shelfmark.Errorf(shelfmark.EINVALID, "decision: %.40q is neither grant nor refuse.", in.Decision)
	}
	q, err := acc.DecideAccessRequest(r.Context(), key, d)
	if err != nil {
		return err
	}
	return kit.WriteJSON(w, http.StatusOK, s.accessRequestJSON(q))
}

// AccessGrantJSON is the access a request gave a reader to a work's
// files, until a time.
type AccessGrantJSON struct {
	Principal string `json:"principal"`
	Role      string `json:"role"`
	Expires   string `json:"expires"`
}

// accessGrants handles GET /api/v1/resources/{id}/access-grants: the
// readers who hold the work's files through a request, until when; for
// those who manage the work.
func (s *Handler) accessGrants(w http.ResponseWriter, r *http.Request) error {
	acc, id, err := s.grantsRequest(r)
	if err != nil {
		return err
	}
	gs, err := acc.WorkAccessGrants(r.Context(), id)
	if err != nil {
		return err
	}
	out := struct {
		Resource shelfmark.ID      `json:"resource"`
		Grants   []AccessGrantJSON `json:"grants"`
	}{Resource: id, Grants: make([]AccessGrantJSON, 0, len(gs))}
	for _, g := range gs {
		if g.Expires != nil { // WorkAccessGrants gives those with an end only
			out.Grants = append(out.Grants, AccessGrantJSON{Principal: g.Principal, Role: string(g.Role), Expires: kit.TimeString(*g.Expires)})
		}
	}
	return kit.WriteJSON(w, http.StatusOK, out)
}

// revokeAccessGrant handles DELETE
// /api/v1/resources/{id}/access-grants/{principal}: the reader
// (user:NAME) no longer holds the work's files through a request.
func (s *Handler) revokeAccessGrant(w http.ResponseWriter, r *http.Request) error {
	acc, id, err := s.grantsRequest(r)
	if err != nil {
		return err
	}
	if err := acc.RevokeAccess(r.Context(), id, r.PathValue("principal")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// grantsRequest reads what both grants routes need: the account service,
// a signed-in caller (the grants are for managers alone, as the roles
// are), and the work named.
func (s *Handler) grantsRequest(r *http.Request) (shelfmark.AccountService, shelfmark.ID, error) {
	acc, err := s.deps.AccountService()
	if err != nil {
		return nil, "", err
	}
	if _, err := kit.SignedIn(r, r.Pattern); err != nil {
		return nil, "", err
	}
	id := shelfmark.ID(r.PathValue("id"))
	return acc, id, id.Check()
}
