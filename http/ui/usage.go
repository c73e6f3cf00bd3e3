package ui

// This file shows the uses of works (shelfmark.UsageCounter, counted by
// COUNTER's rules off the request path): the totals on a work's and a
// collection's page, and the administrators' report (admin_usage.go).

import (
	"net/http"

	"github.com/shelfmark/shelfmark"
)

// usageTotals are the all-time totals of the work or collection id that
// the page shows (it has read it already, as the caller), or nil when the
// server counts no use or the read fails (a page is not refused for its
// counts; the failure is logged).
func (s *Handler) usageTotals(r *http.Request, id shelfmark.ID) *shelfmark.UsageTotals {
	t, err := s.deps.Resources.UsageTotalsOf(r.Context(), id)
	if err != nil {
		if shelfmark.ErrorCode(err) != shelfmark.EUNAVAILABLE {
			s.log.Warn("usage: the totals of a page could not be read", "id", id, "err", err)
		}
		return nil
	}
	return t
}
