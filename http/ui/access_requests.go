package ui

// This file serves the requests for access: a signed-in reader of a work
// whose record shows but whose files do not asks for them from the work
// page (POST /works/{id}/access-requests); those who manage the work list
// the requests (GET /access-requests, waiting ones first, granted and
// refused ones by tab) and grant each until a date, or refuse it, with a
// reply (POST /access-requests/{key}). The engine decides who may do
// what (shelfmark.Accounts: RequestAccess, AccessRequests,
// DecideAccessRequest); the pages only show and send.

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/labels"
)

// accessRequestRoutes are the routes of the requests for access.
func (s *Handler) accessRequestRoutes() []kit.Route {
	return []kit.Route{
		{Method: "POST", Pattern: "/works/{id}/access-requests", Handle: s.uiForm(s.requestAccessPost)},
		{Method: "POST", Pattern: "/works/{id}/access/revoke", Handle: s.uiForm(s.revokePost)},
		{Method: "GET", Pattern: "/access-requests", Handle: s.uiWrap(s.accessRequestsPage)},
		{Method: "POST", Pattern: "/access-requests/{key}", Handle: s.uiForm(s.decideAccessPost)},
	}
}

// uiRestricted is what a work page says of files its reader may not read.
type uiRestricted struct {
	// Embargo is the files' embargo, when one is ahead.
	Embargo *time.Time
	// SignedIn is set for a signed-in reader, who may ask.
	SignedIn bool
	// Request is the reader's latest request on the work, nil when none.
	Request *shelfmark.AccessRequest
}

// Waiting reports whether the reader's latest request waits for a
// decision.
func (u *uiRestricted) Waiting() bool {
	return u.Request != nil && u.Request.State == shelfmark.AccessRequestOpen
}

// Refused is the reader's latest request when it was refused.
func (u *uiRestricted) Refused() *shelfmark.AccessRequest {
	if u.Request != nil && u.Request.State == shelfmark.AccessRequestRefused {
		return u.Request
	}
	return nil
}

// workRestricted tells the work page whether its reader reads the record
// but not the files, asked only when the pages shown hold no file set
// (so a work whose pages show costs nothing more): the files' embargo and
// the reader's latest request. nil when the files are not closed to the
// reader.
func (s *Handler) workRestricted(r *http.Request, id shelfmark.ID) (*uiRestricted, error) {
	ctx := r.Context()
	closed, a, err := s.deps.Resources.FilesRestricted(ctx, id)
	if err != nil || !closed {
		return nil, err
	}
	out := &uiRestricted{SignedIn: shelfmark.CallerFrom(ctx).User != 0}
	if a.Embargo != nil && a.Embargo.After(s.now()) {
		out.Embargo = a.Embargo
	}
	if acc, err := s.deps.AccountService(); err == nil && out.SignedIn {
		mine, _, err := acc.AccessRequests(ctx, shelfmark.AccessRequestQuery{Mine: true, Work: id, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(mine) > 0 {
			out.Request = mine[0]
		}
	}
	return out, nil
}

// requestAccessPost handles POST /works/{id}/access-requests: the
// signed-in reader asks for the work's files with the field message.
func (s *Handler) requestAccessPost(w http.ResponseWriter, r *http.Request) error {
	acc, id, err := s.accountsAndWork(r)
	if err != nil {
		return err
	}
	if _, err := acc.RequestAccess(r.Context(), id, r.PostForm.Get("message")); err != nil {
		return err
	}
	http.Redirect(w, r, "/works/"+string(id)+"?notice=accessrequested", http.StatusSeeOther)
	return nil
}

// accountsAndWork is the account service and the work the address
// names, for the forms of requests for access.
func (s *Handler) accountsAndWork(r *http.Request) (shelfmark.AccountService, shelfmark.ID, error) {
	acc, err := s.deps.AccountService()
	if err != nil {
		return nil, "", err
	}
	id := shelfmark.ID(r.PathValue("id"))
	if err := id.Check(); err != nil {
		return nil, "", shelfmark.Errorf(shelfmark.ENOTFOUND, "There is no work %.80q.", r.PathValue("id"))
	}
	return acc, id, nil
}

// accessRequestsData is the content of the requests page.
type accessRequestsData struct {
	// State is the tab shown: open, granted or refused.
	State  string
	States []string
	Rows   []*accessRequestRow
	// Next continues the list below its last row ("" at its end).
	Next string
	// Until is the date the grant field offers (DefaultAccessGrant ahead);
	// Max the last date it accepts.
	Until, Max string
}

// accessRequestRow is one request on the page.
type accessRequestRow struct {
	*shelfmark.AccessRequest
	WorkID    shelfmark.ID
	WorkTitle string
	// Last is the last day of the access granted.
	Last time.Time
}

// accessRequestsPage handles GET /access-requests: the requests the
// caller may decide, newest first, 50 at a time, in the state the query's
// state names (open by default).
func (s *Handler) accessRequestsPage(w http.ResponseWriter, r *http.Request) error {
	acc, err := s.deps.AccountService()
	if err != nil {
		return err
	}
	ctx := r.Context()
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = string(shelfmark.AccessRequestOpen)
	}
	var before int64
	if b := q.Get("before"); b != "" {
		if before, err = strconv.ParseInt(b, 10, 64); err != nil || before <= 0 {
			return shelfmark.Errorf(shelfmark.EINVALID, "before: %.40q is not a position in the list.", b)
		}
	}
	rows, next, err := acc.AccessRequests(ctx, shelfmark.AccessRequestQuery{State: shelfmark.AccessRequestState(state), Before: before})
	if err != nil {
		return err
	}
	p := s.page(w, r, "requests.title")
	now := s.now()
	d := &accessRequestsData{State: state, States: []string{string(shelfmark.AccessRequestOpen), string(shelfmark.AccessRequestGranted), string(shelfmark.AccessRequestRefused)},
		Until: now.Add(shelfmark.DefaultAccessGrant).UTC().Format(time.DateOnly), Max: now.Add(shelfmark.MaxAccessGrant - 24*time.Hour).UTC().Format(time.DateOnly)}
	if next != 0 {
		d.Next = strconv.FormatInt(next, 10)
	}
	ids := make([]shelfmark.ID, len(rows))
	for i, q := range rows {
		ids[i] = s.deps.Resources.IDs().Encode(q.Resource)
	}
	// the works' titles, read at once (those the caller no longer reads
	// are left untitled)
	works, err := s.deps.Resources.FindResources(ctx, ids)
	if err != nil {
		return err
	}
	titles := make(map[shelfmark.ID]string, len(works))
	for _, res := range works {
		titles[res.ID], _ = labels.Title(res.Metadata, p.Lang)
	}
	for i, q := range rows {
		row := &accessRequestRow{AccessRequest: q, WorkID: ids[i], WorkTitle: titles[ids[i]]}
		if row.WorkTitle == "" {
			row.WorkTitle = p.T("work.untitled")
		}
		if q.Until != nil {
			row.Last = grantLastDay(*q.Until)
		}
		d.Rows = append(d.Rows, row)
	}
	p.Data = d
	return s.render(w, r, http.StatusOK, "access_requests", p)
}

// decideAccessPost handles POST /access-requests/{key}: the field
// decision is grant (with the last day of the access in until) or refuse,
// with an optional reply; it comes back to the list of waiting requests.
func (s *Handler) decideAccessPost(w http.ResponseWriter, r *http.Request) error {
	acc, err := s.deps.AccountService()
	if err != nil {
		return err
	}
	key, err := strconv.ParseInt(r.PathValue("key"), 10, 64)
	if err != nil || key <= 0 {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "There is no request for access %.40q.", r.PathValue("key"))
	}
	f := r.PostForm
	d := shelfmark.AccessDecision{Reply: f.Get("reply")}
	notice := "accessrefused"
	switch f.Get("decision") {
	case "grant":
		day, err := time.Parse(time.DateOnly, strings.TrimSpace(f.Get("until")))
		if err != nil {
			return shelfmark.Errorf(shelfmark.EINVALID, "until: %.40q is not a date (2030-01-31).", f.Get("until"))
		}
		d.Grant, d.Until, notice = true, grantEnd(day), "accessgranted"
	case "refuse":
	default:
		return shelfmark.Errorf(shelfmark.EINVALID, "decision: %.40q is neither grant nor refuse.", f.Get("decision"))
	}
	if _, err := acc.DecideAccessRequest(r.Context(), key, d); err != nil {
		return err
	}
	http.Redirect(w, r, "/access-requests?notice="+notice, http.StatusSeeOther)
	return nil
}
