package ui

// This file serves the administrators' page of fixity results: the
// progress of the last pass over every stored copy, how many files are
// damaged now, and the last check of each copy (all, or those not found
// whole), a page at a time.

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// adminFixityData is the content of the fixity page.
type adminFixityData struct {
	Section string
	// NoFixity is set when the storage keeps no fixity checks.
	NoFixity bool
	Pass     shelfmark.FixityPass
	Damaged  int64
	Failed   bool
	Rows     []adminFixityRow
	// Next is the address of the next page ("" on the last one).
	Next string
}

// adminFixityRow is one copy's last check.
type adminFixityRow struct {
	shelfmark.FixityState
	ID shelfmark.ID // "" for a content file no resource names
}

// adminFixity handles GET /admin/fixity?failed=1&cursor=: the fixity
// results. Cost: three statements (the pass, the damaged count over its
// partial index, a page of adminPageSize states over the primary key).
func (s adminPages) adminFixity(w http.ResponseWriter, r *http.Request) error {
	if err := requireAdminPage(r); err != nil {
		return err
	}
	qv := r.URL.Query()
	d := &adminFixityData{Section: "fixity", Failed: qv.Get("failed") == "1"}
	pe, ok := s.deps.Storage.(shelfmark.PreservationEvents)
	if !ok {
		d.NoFixity = true
	} else {
		after, err := fixityCursor(qv.Get("cursor"))
		if err != nil {
			return err
		}
		ctx := r.Context()
		if d.Pass, err = pe.FixityPass(ctx); err != nil {
			return err
		}
		if d.Damaged, err = pe.CountDamaged(ctx); err != nil {
			return err
		}
		states, err := pe.FixityStates(ctx, after, d.Failed, adminPageSize)
		if err != nil {
			return err
		}
		for _, st := range states {
			row := adminFixityRow{FixityState: st}
			if st.Resource > 0 && st.Resource <= shelfmark.MaxKey {
				row.ID = s.deps.Resources.IDs().Encode(st.Resource)
			}
			d.Rows = append(d.Rows, row)
		}
		if len(states) == adminPageSize {
			last := states[len(states)-1]
			next := url.Values{"cursor": {strconv.FormatInt(last.Resource, 10) + "|" + last.Copy + "|" + last.Item}}
			if d.Failed {
				next.Set("failed", "1")
			}
			d.Next = "/admin/fixity?" + next.Encode()
		}
	}
	p := s.page(w, r, "admin.fixity.title")
	p.Nav = "admin"
	p.Data = d
	return s.render(w, r, http.StatusOK, "admin_fixity", p)
}

// fixityCursor reads a cursor the page gave out: RESOURCE|COPY|ITEM.
func fixityCursor(v string) (shelfmark.FixityState, error) {
	var st shelfmark.FixityState
	if v == "" {
		return st, nil
	}
	parts := strings.SplitN(v, "|", 3)
	k, err := strconv.ParseInt(parts[0], 10, 64)
	if len(parts) != 3 || err != nil || k < 0 {
		return st, shelfmark.Errorf(shelfmark.EINVALID, "cursor: %.100q is not a cursor this page gave out.", v)
	}
	st.Resource, st.Copy, st.Item = k, parts[1], parts[2]
	return st, nil
}

// damagedFiles is how many files fixity found damaged (0 when the storage
// keeps no fixity checks or does not answer: the dashboard shows what it
// can). Cost: one statement over a partial index.
func (s adminPages) damagedFiles(ctx context.Context) int64 {
	pe, ok := s.deps.Storage.(shelfmark.PreservationEvents)
	if !ok {
		return 0
	}
	n, err := pe.CountDamaged(ctx)
	if err != nil {
		return 0
	}
	return n
}
