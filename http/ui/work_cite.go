package ui

// This file serves a work's citation for reference managers: BibTeX
// (GET /works/{id}/cite.bib) and RIS (GET /works/{id}/cite.ris), linked
// from the work page as "cite as". Both obey the access policy as the page
// does: a work the caller may not read is not found.

import (
	"net/http"
	"strconv"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
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

// writeCitation sends a citation of res as a file named for the work,
// with its tag (the hash of its bytes), answering 304 when the client
// holds it: public for a while to an anonymous reader of a public work,
// no-store otherwise.
func (s *Handler) writeCitation(w http.ResponseWriter, r *http.Request, res *shelfmark.Resource, contentType, ext, body string) error {
	h := w.Header()
	kit.AddVary(h, kit.CallerVary...)
	if res.VisibilityAt(s.now()) == shelfmark.Public && !shelfmark.CallerFrom(r.Context()).Authenticated() {
		kit.SetCache(h, kit.CachePublic, pageMaxAge)
	} else {
		kit.SetCache(h, kit.CacheNoStore, 0)
	}
	if kit.NotModified(w, r, kit.Validators{ETag: kit.BodyETag([]byte(contentType), []byte(body))}) {
		return nil
	}
	h.Set("Content-Type", contentType)
	h.Set("Content-Disposition", `attachment; filename="`+string(res.ID)+ext+`"`)
	h.Set("Content-Length", strconv.Itoa(len(body)))
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
	return s.writeCitation(w, r, res, "application/x-bibtex; charset=utf-8", ".bib", cite.BibTeX(res.ID, c))
}

// workRIS handles GET /works/{id}/cite.ris.
func (s *Handler) workRIS(w http.ResponseWriter, r *http.Request) error {
	res, c, err := s.citedWork(r)
	if err != nil {
		return err
	}
	return s.writeCitation(w, r, res, "application/x-research-info-systems; charset=utf-8", ".ris", cite.RIS(c))
}
