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
	q, err := kit.AuditQuery(s.deps.Resources.IDs(), qv.Get("resource"), qv.Get("actor"), qv.Get("after"), qv.Get("cursor"), 100)
	if err != nil {
		return err
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
