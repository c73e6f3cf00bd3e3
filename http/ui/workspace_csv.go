package ui

// This file serves the workspace's spreadsheet round trip: the works of
// the list (every match of its filters, or the works ticked) written out
// as CSV (GET /workspace/export.csv, shelfmark.BatchEditHeader's columns),
// and a CSV read back (POST /workspace/import) into a batch edit's plan
// that shows each changed cell and each refused row before anything is
// applied; the plan waits on its run's page (workspace_runs.go) until it
// is confirmed (POST /workspace/runs/{run}/apply) and is then applied as
// one run, every change audited with the run's name as its request.

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// maxBatchEditBytes bounds the CSV of a batch edit (10,000 rows of a
// fully described work fit).
const maxBatchEditBytes = 32 << 20

// workspacePreviewRows bounds the rows of each kind a plan's page lists
// (its counts cover all).
const workspacePreviewRows = 500

// workspaceExport handles GET /workspace/export.csv (every work that
// matches the filters of the address) and POST /workspace/export.csv (the
// change form: the works ticked, apply=chosen, or every match,
// apply=all): the works as a batch edit's CSV, streamed a page of works at
// a time.
func (s *Handler) workspaceExport(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	if !shelfmark.CallerFrom(ctx).Authenticated() {
		return shelfmark.Errorf(shelfmark.EUNAUTHORIZED, "The workspace lists the works of a signed-in caller: sign in.")
	}
	v := r.URL.Query()
	if r.Method == http.MethodPost {
		v = r.PostForm
	} else {
		v.Set("apply", "all")
	}
	f := readWorkspaceFilters(v)
	var ids []shelfmark.ID
	if v.Get("apply") != "all" {
		var err error
		if ids, err = workspaceChosen(v); err != nil {
			return err
		}
	}
	q, err := f.query()
	if err != nil {
		return err
	}
	q.Limit = shelfmark.MaxPageSize
	// the first page is read before anything is sent, so that a bad
	// filter is an error page, not a broken file
	next, err := s.exportPage(ctx, q, ids)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="works-%s.csv"`, s.now().UTC().Format("2006-01-02")))
	h.Set("Cache-Control", "private, no-store")
	cw := csv.NewWriter(w)
	if err := cw.Write(shelfmark.BatchEditHeader()); err != nil {
		return nil // the client went away
	}
	for {
		for _, res := range next.items {
			if err := cw.Write(shelfmark.BatchEditRecord(res)); err != nil {
				return nil
			}
		}
		cw.Flush()
		if cw.Error() != nil || next.after == "" {
			return nil
		}
		q.After = next.after
		if next, err = s.exportPage(ctx, q, nil); err != nil {
			s.log.Warn("workspace: export ended early", "err", err)
			return nil // the file is cut short: the client sees no end of its last line
		}
	}
}

// exportBatch is one page of an export: its works and where the next
// begins ("" at the end).
type exportBatch struct {
	items []*shelfmark.Resource
	after shelfmark.Cursor
}

// exportPage reads the works ids names (all of them, at most
// MaxPageSize) or, without ids, the page of q.
func (s *Handler) exportPage(ctx context.Context, q shelfmark.WorkspaceQuery, ids []shelfmark.ID) (*exportBatch, error) {
	if len(ids) > 0 {
		found, err := s.deps.Resources.FindResources(ctx, ids)
		if err != nil {
			return nil, err
		}
		out := &exportBatch{}
		for _, res := range found {
			if res.Kind == shelfmark.KindWork {
				out.items = append(out.items, res)
			}
		}
		return out, nil
	}
	page, err := s.deps.Resources.Workspace(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &exportBatch{after: page.Next}
	for _, it := range page.Items {
		out.items = append(out.items, it.Resource)
	}
	return out, nil
}

// workspaceImport handles POST /workspace/import: a multipart form with a
// batch edit's CSV (file "csv"), read into a plan that waits on its run's
// page for confirmation. A file that is not such a CSV comes back to the
// list with the reason.
func (s *Handler) workspaceImport(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	c := shelfmark.CallerFrom(ctx)
	if !c.Authenticated() {
		return shelfmark.Errorf(shelfmark.EUNAUTHORIZED, "A batch edit takes a signed-in user: sign in.")
	}
	if err := shelfmark.RequireWrite(ctx, "change works"); err != nil {
		return err
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBatchEditBytes+s.opts.MaxBodyBytes)
	if err := r.ParseMultipartForm(1 << 20); err != nil { // a larger file waits on disk, not in memory
		if strings.Contains(err.Error(), "too large") {
			return shelfmark.Errorf(shelfmark.ETOOLARGE, "The file is larger than a batch edit takes (%d MiB).", maxBatchEditBytes>>20)
		}
		return shelfmark.Errorf(shelfmark.EINVALID, "The form cannot be read: %v", err)
	}
	defer r.MultipartForm.RemoveAll()
	if err := s.checkCSRF(r, r.FormValue(csrfField)); err != nil {
		return err
	}
	filters := readWorkspaceFilters(r.MultipartForm.Value)
	file, _, err := r.FormFile("csv")
	if err != nil {
		return s.workspaceList(w, r, filters, "", "Choose the CSV file to read.")
	}
	defer file.Close()
	plan, err := s.deps.Resources.PlanBatchEdit(ctx, file)
	if err != nil {
		if shelfmark.ErrorCode(err) == shelfmark.EINVALID {
			return s.workspaceList(w, r, filters, "", shelfmark.ErrorMessage(err))
		}
		return err
	}
	run := &workspaceRun{User: c.User, Change: "csv", Filters: filters, Plan: plan, Chosen: plan.Changed}
	s.runs.add(ctx, run)
	http.Redirect(w, r, "/workspace/runs/"+run.ID, http.StatusSeeOther)
	return nil
}

// workspaceApply handles POST /workspace/runs/{run}/apply: a batch edit's
// plan, confirmed, applied as a run.
func (s *Handler) workspaceApply(w http.ResponseWriter, r *http.Request) error {
	c := shelfmark.CallerFrom(r.Context())
	if !c.Authenticated() {
		return shelfmark.Errorf(shelfmark.EUNAUTHORIZED, "A batch edit takes a signed-in user: sign in.")
	}
	if err := shelfmark.RequireWrite(r.Context(), "change works"); err != nil {
		return err
	}
	run := s.runs.find(r.PathValue("run"), c.User)
	if run == nil || run.Plan == nil {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "This server keeps no such batch edit of yours (a restart forgets them).")
	}
	plan := run.Plan
	err := s.runs.launch(run, func(ctx context.Context, progress func(shelfmark.WorkChangeProgress)) (shelfmark.WorkChangeProgress, error) {
		return s.deps.Resources.ApplyBatchEdit(ctx, plan, progress)
	})
	if err != nil {
		return err
	}
	return s.awaitRun(w, r, run)
}

// previewRows splits a plan's rows into those that change their work and
// those refused, at most workspacePreviewRows of each.
func previewRows(plan *shelfmark.BatchEditPlan) (changed, refused []shelfmark.BatchEditRow) {
	for _, row := range plan.Rows {
		switch {
		case row.Code != "" && len(refused) < workspacePreviewRows:
			refused = append(refused, row)
		case row.Code == "" && len(row.Changes) > 0 && len(changed) < workspacePreviewRows:
			changed = append(changed, row)
		}
	}
	return changed, refused
}
