package ui

// This file serves a work's citation for reference managers: BibTeX
// (GET /works/{id}/cite.bib) and RIS (GET /works/{id}/cite.ris), linked
// from the work page as "cite as". Both obey the access policy as the page
// does: a work the caller may not read is not found.

import (
	"net/http"
	"strconv"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/labels"
	"github.com/shelfmark/shelfmark/http/ui/cite"
)

// citedWork reads the work a citation route names.
func (s *Handler) citedWork(r *http.Request) (*shelfmark.Resource, *cite.Citation, error) {
	id := shelfmark.ID(r.PathValue("id"))
	if err := id.Check(); err != nil {
		return nil, nil, err
	}
	res, err := s.deps.Resources.FindResource(r.Context(), id)
	if err != nil {
		return nil, nil, err
	}
	if res.Kind != shelfmark.KindWork {
		return nil, nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a %s, not a work; only works are cited.", id, res.Kind)
	}
	title, _ := labels.Title(res.Metadata, "")
	return res, cite.Of(res.Metadata, title, s.deps.Base(r)+"/works/"+string(id)), nil
}

// writeCitation sends a citation as a file named for the work.
func writeCitation(w http.ResponseWriter, r *http.Request, id shelfmark.ID, contentType, ext, body string) error {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Disposition", `attachment; filename="`+string(id)+ext+`"`)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Cache-Control", "no-store")
	h.Set("Vary", "Cookie")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	_, err := w.Write([]byte(body))
	return err
}

// workBibTeX handles GET /works/{id}/cite.bib.
func (s *Handler) workBibTeX(w http.ResponseWriter, r *http.Request) error {
	res, c, err := s.citedWork(r)
	if err != nil {
		return err
	}
	return writeCitation(w, r, res.ID, "application/x-bibtex; charset=utf-8", ".bib", cite.BibTeX(res.ID, c))
}

// workRIS handles GET /works/{id}/cite.ris.
func (s *Handler) workRIS(w http.ResponseWriter, r *http.Request) error {
	res, c, err := s.citedWork(r)
	if err != nil {
		return err
	}
	return writeCitation(w, r, res.ID, "application/x-research-info-systems; charset=utf-8", ".ris", cite.RIS(c))
}
