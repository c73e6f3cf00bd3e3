package ui

// This file serves the forms that change a work: its metadata (with
// conflict detection: the form carries the version it was made from, and
// a form made from an older version than the stored one is shown again
// beside what was saved meanwhile), its access (visibility, embargo,
// lease) and its deletion. Each calls the engine operation the REST API
// calls, with the version as If-Match, so the access policy decides.

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
)

// editableWork loads the work of the path for a form that changes it:
// callers who may not write at all are refused first (a signed-out
// browser is sent to sign in), then the engine judges the work.
func (s *Handler) editableWork(r *http.Request) (*shelfmark.Resource, error) {
	return s.editableOf(r, shelfmark.KindWork)
}

// editableOf reads the resource of kind that the request's address names
// and the caller may change (ENOTFOUND for another kind).
func (s *Handler) editableOf(r *http.Request, kind shelfmark.Kind) (*shelfmark.Resource, error) {
	ctx := r.Context()
	if err := shelfmark.RequireWrite(ctx, "change "+string(kind)+"s"); err != nil {
		return nil, err
	}
	id := shelfmark.ID(r.PathValue("id"))
	if err := id.Check(); err != nil {
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "There is no %s %.80q.", kind, r.PathValue("id"))
	}
	if err := s.deps.Resources.CheckEdit(ctx, id); err != nil {
		return nil, err
	}
	res, err := s.deps.Resources.FindResource(ctx, id)
	if err != nil {
		return nil, err
	}
	if res.Kind != kind {
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a %s, not a %s.", id, res.Kind, kind)
	}
	return res, nil
}

// pagePath is the address of a resource's page: a collection's or a
// work's.
func pagePath(res *shelfmark.Resource) string {
	if res.Kind == shelfmark.KindCollection {
		return "/collections/" + string(res.ID)
	}
	return "/works/" + string(res.ID)
}

// editableForm reads the work of a form's address that the caller may
// change (editableWork) and the version the form was made from.
func (s *Handler) editableForm(r *http.Request) (*shelfmark.Resource, int64, error) {
	res, err := s.editableWork(r)
	if err != nil {
		return nil, 0, err
	}
	version, err := formVersion(r)
	if err != nil {
		return nil, 0, err
	}
	return res, version, nil
}

// formVersion reads the version a form was made from.
func formVersion(r *http.Request) (int64, error) { return parseVersion(r.PostForm.Get("version")) }

// parseVersion reads the version field of a form (a multipart form's
// too).
func parseVersion(s string) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 {
		return 0, shelfmark.Errorf(shelfmark.EINVALID, "The form does not say which version of the work it was made from; reload the page.")
	}
	return v, nil
}

// editData is the content of the edit page and of the conflict page.
type editData struct {
	Work *shelfmark.Resource
	// Base is the address of the resource's page (a work's or a
	// collection's); the form posts to Base/edit.
	Base string
	// FilesDefault is, for a collection, who may read the files of the
	// works deposited into it by default (access_files.go).
	FilesDefault string
	Title        string
	Version      int64
	Meta         *metaForm
	Error        string
	// Theirs is what is stored now (conflict page only).
	Theirs []metaRow
	// Mine is what the form sent (conflict page only).
	Mine []metaRow
}

// editPage handles GET /works/{id}/edit.
func (s *Handler) editPage(w http.ResponseWriter, r *http.Request) error {
	return s.editPageOf(w, r, shelfmark.KindWork)
}

// collectionEditPage handles GET /collections/{id}/edit: a collection's
// description (title, description and any other field), as a work's.
func (s *Handler) collectionEditPage(w http.ResponseWriter, r *http.Request) error {
	return s.editPageOf(w, r, shelfmark.KindCollection)
}

// collectionEditPost handles POST /collections/{id}/edit, as editPost.
func (s *Handler) collectionEditPost(w http.ResponseWriter, r *http.Request) error {
	return s.editPostOf(w, r, shelfmark.KindCollection)
}

// editPageOf is the edit page of a resource of kind.
func (s *Handler) editPageOf(w http.ResponseWriter, r *http.Request, kind shelfmark.Kind) error {
	res, err := s.editableOf(r, kind)
	if err != nil {
		return err
	}
	if len(res.Metadata) >= maxFormRows {
		return shelfmark.Errorf(shelfmark.EINVALID, "%s has %d statements, more than this form shows; change them through the API (PATCH /api/v1/resources/%s).", res.ID, len(res.Metadata), res.ID)
	}
	t := titleOf(res)
	p := s.page(w, r, "edit.title", t)
	shown, _ := splitPageChoice(res.Metadata)
	rows := append(rowsOf(shown), metaRow{Field: shelfmark.NSDC + "subject"})
	d := &editData{Work: res, Base: pagePath(res), Title: t, Version: res.Version, Meta: newMetaForm(p, rows)}
	if res.Kind == shelfmark.KindCollection {
		v, err := s.deps.Resources.CollectionFilesDefault(r.Context(), res.ID)
		if err != nil {
			return err
		}
		d.FilesDefault = string(v)
	}
	p.Data = d
	return s.render(w, r, http.StatusOK, "edit", p)
}

// editPost handles POST /works/{id}/edit: "add" shows the form again with
// one more row; otherwise the metadata is replaced (only the differences
// are written) if the work is still at the form's version, and a stale
// form is answered 409 with both versions.
func (s *Handler) editPost(w http.ResponseWriter, r *http.Request) error {
	return s.editPostOf(w, r, shelfmark.KindWork)
}

// editPostOf is editPost for a resource of kind.
func (s *Handler) editPostOf(w http.ResponseWriter, r *http.Request, kind shelfmark.Kind) error {
	res, err := s.editableOf(r, kind)
	if err != nil {
		return err
	}
	version, err := formVersion(r)
	if err != nil {
		return err
	}
	rows, err := formRows(r.PostForm)
	if err != nil {
		return err
	}
	t := titleOf(res)
	p := s.page(w, r, "edit.title", t)
	d := &editData{Work: res, Base: pagePath(res), Title: t, Version: version}
	p.Data = d
	again := func(status int, msg string) error {
		d.Meta, d.Error = newMetaForm(p, rows), msg
		return s.render(w, r, status, "edit", p)
	}
	stmts, answered, err := metaStep(p, r.PostForm, &rows, res.Metadata, again)
	if answered {
		return err
	}
	// the page chosen to represent the work is the pages page's to change
	_, kept := splitPageChoice(res.Metadata)
	stmts = append(stmts, kept...)
	_, err = s.deps.Resources.UpdateResource(r.Context(), res.ID, shelfmark.ResourceUpdate{IfMatch: version, Replace: &stmts})
	switch shelfmark.ErrorCode(err) {
	case "":
		http.Redirect(w, r, pagePath(res)+"?notice=saved", http.StatusSeeOther)
		return nil
	case shelfmark.EPRECONDITION:
		// someone saved meanwhile: both versions, and the form again
		// with the user's values over the stored version
		cur, err := s.deps.Resources.FindResource(r.Context(), res.ID)
		if err != nil {
			return err
		}
		p.Title = p.T("conflict.title", t)
		theirs, _ := splitPageChoice(cur.Metadata)
		d.Version, d.Theirs, d.Mine = cur.Version, rowsOf(theirs), nonEmpty(rows)
		d.Meta = newMetaForm(p, rows)
		return s.render(w, r, http.StatusConflict, "conflict", p)
	case shelfmark.EINVALID:
		return again(http.StatusBadRequest, shelfmark.ErrorMessage(err))
	}
	return err
}

// nonEmpty are the rows with a value.
func nonEmpty(rows []metaRow) []metaRow {
	out := make([]metaRow, 0, len(rows))
	for _, r := range rows {
		if strings.TrimSpace(r.Value) != "" {
			out = append(out, r)
		}
	}
	return out
}

// FieldLabel names a row's field in the page's language (its IRI when it
// is not one the forms offer).
func (f *metaForm) FieldLabel(iri string) string {
	for _, o := range f.Options {
		if o.IRI == iri {
			return o.Label
		}
	}
	return iri
}

// accessData is the content of the access page.
type accessData struct {
	Work         *shelfmark.Resource
	Title        string
	Version      int64
	Visibility   string
	Visibilities []string
	Embargo      string
	Lease        string
	Error        string
	// Conflict is set when the work changed since the form was made; the
	// form then shows the stored settings.
	Conflict bool
	// Files is who may read the work's files (access_files.go), nil for a
	// work without pages.
	Files *filesAccessData
}

// dateOf writes an optional date as a date input wants it.
func dateOf(t *time.Time) string {
	if t == nil {
		return ""
	}
	return t.UTC().Format(time.DateOnly)
}

func newAccessData(res *shelfmark.Resource) *accessData {
	return &accessData{Work: res, Title: titleOf(res), Version: res.Version, Visibility: string(res.Visibility),
		Visibilities: visibilities, Embargo: dateOf(res.Embargo), Lease: dateOf(res.Lease)}
}

// accessPage handles GET /works/{id}/access.
func (s *Handler) accessPage(w http.ResponseWriter, r *http.Request) error {
	res, err := s.editableWork(r)
	if err != nil {
		return err
	}
	d := newAccessData(res)
	if err := s.filesAccessOf(r, d); err != nil {
		return err
	}
	p := s.page(w, r, "access.title", d.Title)
	p.Data = d
	return s.render(w, r, http.StatusOK, "access", p)
}

// accessPost handles POST /works/{id}/access: visibility, embargo and
// lease (an empty date clears it), under the form's version.
func (s *Handler) accessPost(w http.ResponseWriter, r *http.Request) error {
	res, version, err := s.editableForm(r)
	if err != nil {
		return err
	}
	f := r.PostForm
	d := &accessData{Work: res, Title: titleOf(res), Version: version, Visibility: f.Get("visibility"), Visibilities: visibilities,
		Embargo: strings.TrimSpace(f.Get("embargo")), Lease: strings.TrimSpace(f.Get("lease"))}
	p := s.page(w, r, "access.title", d.Title)
	p.Data = d
	files, err := s.filesAccessForm(r, p, d)
	if err != nil {
		return err
	}
	if d.Error != "" {
		return s.render(w, r, http.StatusBadRequest, "access", p)
	}
	u := shelfmark.ResourceUpdate{IfMatch: version}
	vis := shelfmark.Visibility(d.Visibility)
	if !vis.Valid() {
		d.Error = p.T("access.badvisibility")
		return s.render(w, r, http.StatusBadRequest, "access", p)
	}
	u.Visibility = &vis
	for _, dt := range []struct {
		field, value, stored string
		to                   ***time.Time
	}{{"embargo", d.Embargo, dateOf(res.Embargo), &u.Embargo}, {"lease", d.Lease, dateOf(res.Lease), &u.Lease}} {
		if dt.value == dt.stored {
			continue // unchanged: kept as it is (even a date passed that the sweep has not reached yet)
		}
		var t *time.Time
		if dt.value != "" {
			v, err := time.Parse(time.DateOnly, dt.value)
			if err != nil {
				d.Error = p.T("access.baddate", dt.value)
				return s.render(w, r, http.StatusBadRequest, "access", p)
			}
			t = &v
		}
		*dt.to = &t
	}
	saved, err := s.deps.Resources.UpdateResource(r.Context(), res.ID, u)
	if err == nil && files != nil {
		// the record's change is saved; the files' goes under its version
		_, err = s.deps.Resources.SetFilesAccess(r.Context(), res.ID, *files, saved.Version)
	}
	switch shelfmark.ErrorCode(err) {
	case "":
		http.Redirect(w, r, "/works/"+string(res.ID)+"?notice=accesssaved", http.StatusSeeOther)
		return nil
	case shelfmark.EPRECONDITION:
		cur, err := s.deps.Resources.FindResource(r.Context(), res.ID)
		if err != nil {
			return err
		}
		nd := newAccessData(cur)
		if err := s.filesAccessOf(r, nd); err != nil {
			return err
		}
		nd.Conflict = true
		nd.Error = p.T("access.conflict", d.Visibility, orNone(p, d.Embargo), orNone(p, d.Lease))
		p.Data = nd
		return s.render(w, r, http.StatusConflict, "access", p)
	case shelfmark.EINVALID:
		d.Error = shelfmark.ErrorMessage(err)
		return s.render(w, r, http.StatusBadRequest, "access", p)
	}
	return err
}

// orNone is a date, or "none" in the page's language.
func orNone(p *uiPage, date string) string {
	if date == "" {
		return p.T("access.none")
	}
	return date
}

// deleteData is the content of the delete confirmation page.
type deleteData struct {
	Work    *shelfmark.Resource
	Title   string
	Version int64
}

// deletePage handles GET /works/{id}/delete: the confirmation. It is
// shown to those who may change the work; deleting it takes a curator,
// which the engine judges when the form is sent.
func (s *Handler) deletePage(w http.ResponseWriter, r *http.Request) error {
	res, err := s.editableWork(r)
	if err != nil {
		return err
	}
	if err := s.deps.Resources.CheckDelete(r.Context(), res.ID); err != nil {
		return err // a depositor may change the work, not delete it
	}
	t := titleOf(res)
	p := s.page(w, r, "delete.title", t)
	p.Data = &deleteData{Work: res, Title: t, Version: res.Version}
	return s.render(w, r, http.StatusOK, "delete", p)
}

// deletePost handles POST /works/{id}/delete: the work becomes a tombstone
// (its address answers 410 from then on) if it is still at the form's
// version; the browser goes home with a notice.
func (s *Handler) deletePost(w http.ResponseWriter, r *http.Request) error {
	if err := shelfmark.RequireWrite(r.Context(), "delete works"); err != nil {
		return err
	}
	id := shelfmark.ID(r.PathValue("id"))
	if err := id.Check(); err != nil {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "There is no work %.80q.", r.PathValue("id"))
	}
	version, err := formVersion(r)
	if err != nil {
		return err
	}
	res, err := s.deps.Resources.FindResource(r.Context(), id)
	if err != nil {
		return err
	}
	if res.Kind != shelfmark.KindWork {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a %s, not a work.", id, res.Kind)
	}
	err = s.deps.Resources.DeleteResource(r.Context(), id, version)
	if shelfmark.ErrorCode(err) == shelfmark.EPRECONDITION {
		return shelfmark.Errorf(shelfmark.ECONFLICT, "The work was changed after this page was made; look at it again before deleting it.")
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/?notice=deleted", http.StatusSeeOther)
	return nil
}
