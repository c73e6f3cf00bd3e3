package ui

// This file holds the access page's part for a work's files: who may read
// them apart from the record (a visibility and an embargo that every page
// of the work takes, Resources.SetFilesAccess), and, for those who manage
// the work, the readers a request for access gave the files to, each with
// a button that ends that access now (POST /works/{id}/access/revoke).

import (
	"net/http"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
)

// filesAccessData is the files' part of the access page.
type filesAccessData struct {
	// Visibility and Embargo are the pages' own access (of the first
	// page), as the form sends them; an embargo passed is shown empty.
	Visibility string
	Embargo    string
	// Grants are the readers given the files until a date; MayRevoke is
	// set for those who manage the work (who alone see them).
	Grants    []accessGrantRow
	MayRevoke bool
}

// accessGrantRow is one reader given a work's files.
type accessGrantRow struct {
	Principal string
	Name      string
	// Last is the last day of the access.
	Last time.Time
}

// grantLastDay is the last day of an access that ends at until: a grant
// "until 2030-01-31" ends at the start of the next day.
func grantLastDay(until time.Time) time.Time { return until.Add(-time.Second) }

// grantEnd is the end of an access through day, the start of the next.
func grantEnd(day time.Time) time.Time { return day.Add(24 * time.Hour) }

// filesAccessOf fills d.Files from the work's first page, and its grants
// when the caller manages the work; a work without pages has none.
func (s *Handler) filesAccessOf(r *http.Request, d *accessData) error {
	ctx := r.Context()
	a, ok, err := s.deps.Resources.FilesAccess(ctx, d.Work.ID)
	if err != nil || !ok {
		return err
	}
	f := &filesAccessData{Visibility: string(a.Visibility)}
	if a.Embargo != nil && a.Embargo.After(s.now()) {
		f.Embargo = dateOf(a.Embargo)
	}
	if acc, err := s.deps.AccountService(); err == nil {
		gs, err := acc.WorkAccessGrants(ctx, d.Work.ID)
		switch shelfmark.ErrorCode(err) {
		case "":
			f.MayRevoke = true
			for _, g := range gs {
				_, name, _ := strings.Cut(g.Principal, ":")
				f.Grants = append(f.Grants, accessGrantRow{Principal: g.Principal, Name: name, Last: grantLastDay(*g.Expires)})
			}
		case shelfmark.EFORBIDDEN, shelfmark.EUNAUTHORIZED:
			// an editor who does not manage the work: no grants shown
		default:
			return err
		}
	}
	d.Files = f
	return nil
}

// filesAccessForm reads the files' part of the access form into d.Files:
// nil when the form has none (a work without pages); a choice that is not
// one, or a date that is not one or has passed, sets d.Error.
func (s *Handler) filesAccessForm(r *http.Request, p *uiPage, d *accessData) (*shelfmark.Access, error) {
	form := r.PostForm
	if !form.Has("files") {
		return nil, nil
	}
	f := &filesAccessData{Visibility: form.Get("files"), Embargo: strings.TrimSpace(form.Get("files_embargo"))}
	d.Files = f
	vis := shelfmark.Visibility(f.Visibility)
	if !vis.Valid() {
		d.Error = p.T("access.files.bad")
		return nil, nil
	}
	a := &shelfmark.Access{Visibility: vis}
	if f.Embargo != "" {
		t, err := time.Parse(time.DateOnly, f.Embargo)
		if err != nil {
			d.Error = p.T("access.baddate", f.Embargo)
			return nil, nil
		}
		if !t.After(s.now()) {
			d.Error = p.T("access.files.passed", f.Embargo)
			return nil, nil
		}
		a.Embargo = &t
	}
	return a, nil
}

// revokePost handles POST /works/{id}/access/revoke: the reader named by
// the field principal no longer reads the work's files through the grant
// a request gave; only those who manage the work may (the engine
// decides).
func (s *Handler) revokePost(w http.ResponseWriter, r *http.Request) error {
	acc, id, err := s.accountsAndWork(r)
	if err != nil {
		return err
	}
	if err := acc.RevokeAccess(r.Context(), id, r.PostForm.Get("principal")); err != nil {
		return err
	}
	http.Redirect(w, r, "/works/"+string(id)+"/access?notice=accessrevoked", http.StatusSeeOther)
	return nil
}

// depositFilesAccess reads the deposit form's choice of who may read the
// files (EINVALID for a choice that is not one, or an embargo date that is
// not one; the engine refuses a date passed).
func depositFilesAccess(d *depositData) (shelfmark.Access, error) {
	vis := shelfmark.Visibility(d.FilesVisibility)
	if !vis.Valid() {
		return shelfmark.Access{}, shelfmark.Errorf(shelfmark.EINVALID, "files_access: %.40q is not one of public, authenticated, private.", d.FilesVisibility)
	}
	a := shelfmark.Access{Visibility: vis}
	if d.FilesEmbargo != "" {
		t, err := time.Parse(time.DateOnly, d.FilesEmbargo)
		if err != nil {
			return shelfmark.Access{}, shelfmark.Errorf(shelfmark.EINVALID, "files_embargo: %.40q is not a date (2030-01-31).", d.FilesEmbargo)
		}
		a.Embargo = &t
	}
	return a, nil
}

// addedPagesAccess is the access of pages added to work after its
// deposit: its first page's, so that pages added keep the files as closed
// as those there (an embargo passed is left out: it no longer closes
// anything, and the engine refuses a new one in the past).
func (s *Handler) addedPagesAccess(r *http.Request, work shelfmark.ID) (shelfmark.Access, error) {
	a, ok, err := s.deps.Resources.FilesAccess(r.Context(), work)
	if err != nil || !ok {
		return shelfmark.Access{}, err
	}
	if a.Embargo != nil && !a.Embargo.After(s.now()) {
		a.Embargo = nil
	}
	a.Lease = nil
	return a, nil
}

// filesDefaultPost handles POST /collections/{id}/files-default: who may
// read the files of the works deposited into the collection, by default
// (the field files_default); the engine decides who may set it (those who
// may change the collection).
func (s *Handler) filesDefaultPost(w http.ResponseWriter, r *http.Request) error {
	id := shelfmark.ID(r.PathValue("id"))
	if err := id.Check(); err != nil {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "There is no collection %.80q.", r.PathValue("id"))
	}
	if err := s.deps.Resources.SetCollectionFilesDefault(r.Context(), id, shelfmark.Visibility(r.PostForm.Get("files_default"))); err != nil {
		return err
	}
	http.Redirect(w, r, "/collections/"+string(id)+"?notice=filesdefaultsaved", http.StatusSeeOther)
	return nil
}
