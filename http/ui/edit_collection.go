package ui

// This file serves the form that makes a collection: its description
// (the same repeatable rows as a work's), the collection it belongs to
// (none: a top-level collection) and its visibility. The engine decides
// who may: the curator role on the collection it goes into, or on the
// whole repository for a top-level one, as for POST /api/v1/collections.

import (
	"net/http"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// newCollectionData is the content of the new collection page.
type newCollectionData struct {
	Meta         *metaForm
	Parent       string
	ParentTitle  string
	Visibility   string
	Visibilities []string
	Error        string
}

// newCollectionPage handles GET /collections/new (?parent= preselects the
// collection it goes into).
func (s *Handler) newCollectionPage(w http.ResponseWriter, r *http.Request) error {
	if err := shelfmark.RequireWrite(r.Context(), "make collections"); err != nil {
		return err
	}
	p := s.page(w, r, "collnew.title")
	d := &newCollectionData{Meta: newMetaForm(p, []metaRow{{Field: shelfmark.NSDC + "title"}, {Field: shelfmark.NSDC + "description"}}),
		Parent: strings.TrimSpace(r.URL.Query().Get("parent")), Visibility: string(shelfmark.Public), Visibilities: visibilities}
	d.ParentTitle = s.readableCollection(r, d.Parent)
	p.Data = d
	return s.render(w, r, http.StatusOK, "collection_new", p)
}

// readableCollection is the title of the collection id when the caller
// may see it, else "".
func (s *Handler) readableCollection(r *http.Request, id string) string {
	if id == "" || shelfmark.ID(id).Check() != nil {
		return ""
	}
	if c, err := s.deps.Resources.FindResource(r.Context(), shelfmark.ID(id)); err == nil && c.Kind == shelfmark.KindCollection {
		return titleOf(c)
	}
	return ""
}

// newCollectionPost handles POST /collections/new: "add" shows the form
// again with one more row; otherwise the collection is made and the
// browser goes to its page.
func (s *Handler) newCollectionPost(w http.ResponseWriter, r *http.Request) error {
	if err := shelfmark.RequireWrite(r.Context(), "make collections"); err != nil {
		return err
	}
	rows, err := formRows(r.PostForm)
	if err != nil {
		return err
	}
	p := s.page(w, r, "collnew.title")
	d := &newCollectionData{Parent: strings.TrimSpace(r.PostForm.Get("parent")), Visibility: r.PostForm.Get("visibility"), Visibilities: visibilities}
	d.ParentTitle = s.readableCollection(r, d.Parent)
	p.Data = d
	again := func(status int, msg string) error {
		d.Meta, d.Error = newMetaForm(p, rows), msg
		return s.render(w, r, status, "collection_new", p)
	}
	stmts, answered, err := metaStep(p, r.PostForm, &rows, nil, again)
	if answered {
		return err
	}
	vis := shelfmark.Visibility(d.Visibility)
	if !vis.Valid() {
		return again(http.StatusBadRequest, p.T("access.badvisibility"))
	}
	nr := &shelfmark.NewResource{Kind: shelfmark.KindCollection, Visibility: vis, Metadata: stmts}
	if d.Parent != "" {
		if shelfmark.ID(d.Parent).Check() != nil {
			return again(http.StatusBadRequest, p.T("collnew.badparent", d.Parent))
		}
		nr.MemberOf = []shelfmark.ID{shelfmark.ID(d.Parent)}
	}
	res, err := s.deps.Resources.CreateResource(r.Context(), nr)
	switch code := shelfmark.ErrorCode(err); code {
	case "":
		http.Redirect(w, r, "/collections/"+string(res.ID)+"?notice=collcreated", http.StatusSeeOther)
		return nil
	case shelfmark.EINVALID, shelfmark.EFORBIDDEN:
		return again(kit.Status(code), shelfmark.ErrorMessage(err))
	}
	return err
}
