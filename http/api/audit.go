package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// AuditJSON is one entry of the audit trail.
type AuditJSON struct {
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
func (s *Handler) audit(w http.ResponseWriter, r *http.Request) error {
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
		k, err := s.deps.Resources.IDs().Key(shelfmark.ID(v))
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
		Entries []AuditJSON `json:"entries"`
		Next    string      `json:"next,omitempty"`
	}{Entries: make([]AuditJSON, len(entries))}
	for i, e := range entries {
		a := AuditJSON{ID: e.Key, At: e.At, Actor: e.Actor, Token: e.Token, Action: e.Action, Predicates: e.Predicates,
			Outcome: e.Outcome, Detail: e.Detail, Request: e.Request}
		if e.Resource > 0 && e.Resource <= shelfmark.MaxKey {
			a.Resource = s.deps.Resources.IDs().Encode(e.Resource)
		}
		out.Entries[i] = a
	}
	if len(entries) == q.Limit && q.Limit > 0 {
		out.Next = strconv.FormatInt(entries[len(entries)-1].Key, 10)
	}
	return kit.WriteJSON(w, http.StatusOK, out)
}
