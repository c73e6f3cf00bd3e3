package api

// This file serves two changes of a work's pages: replacing a page's
// file (PUT /api/v1/resources/{id}/pages/{page}/file: the new file
// becomes the page's original, and the page's files before it leave the
// work's current version, its derivatives made again by the background
// pipeline; Resources.ReplacePageFile) and choosing the page that
// represents the work (PUT /api/v1/resources/{id}/thumbnail;
// Resources.SetThumbnailPage).

import (
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// replacePageFile handles PUT /api/v1/resources/{id}/pages/{page}/file:
// the body is the new file of the page, under the rules of POST
// …/files (name, media type, digests, quotas; or external content);
// If-Match is the work's version. 201 with the new file.
func (s *Handler) replacePageFile(w http.ResponseWriter, r *http.Request) error {
	work, ifMatch, err := targetIfMatch(r)
	if err != nil {
		return err
	}
	page := shelfmark.ID(r.PathValue("page"))
	if err := page.Check(); err != nil {
		return err
	}
	if use := r.URL.Query().Get("use"); use != "" && use != shelfmark.UseOriginal {
		return shelfmark.Errorf(shelfmark.EINVALID, "use: a page's file is replaced by an original, not a file of use %.40q.", use)
	}
	// The work, the page and the version are checked before any byte is
	// stored, so that a refused replacement leaves nothing in the blob
	// store; the engine checks them again in the change.
	ctx := r.Context()
	wres, err := s.deps.Resources.FindResource(ctx, work)
	if err != nil {
		return err
	}
	if wres.Kind != shelfmark.KindWork {
		return shelfmark.Errorf(shelfmark.EINVALID, "%s is a %s; only the pages of a work have their files replaced.", work, wres.Kind)
	}
	if err := s.deps.Resources.CheckEdit(ctx, work); err != nil {
		return err
	}
	if ifMatch != 0 && ifMatch != wres.Version {
		return &shelfmark.Error{Code: shelfmark.EPRECONDITION, Message: fmt.Sprintf("The resource %s is at version %d, not %d: read it again and retry.", work, wres.Version, ifMatch),
			Details: map[string]any{"current_version": wres.Version}}
	}
	p, err := s.deps.Resources.FindResource(ctx, page)
	if err != nil && shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND && shelfmark.ErrorCode(err) != shelfmark.EGONE {
		return err
	}
	if err != nil || p.Kind != shelfmark.KindFileSet || p.Parent != work {
		return &shelfmark.Error{Code: shelfmark.EINVALID, Message: fmt.Sprintf("page: %s is not a page of %s.", page, work),
			Details: map[string]any{"id": string(page)}}
	}
	f, storedAt, err := s.receiveFile(r)
	if err != nil {
		return err
	}
	res, err := s.deps.Resources.ReplacePageFile(ctx, work, page, f, ifMatch)
	if err != nil {
		s.discard(r, f, storedAt) // refused: its bytes go at once
		return err
	}
	w.Header().Set("Location", "/api/v1/resources/"+string(res.ID))
	w.Header().Set("ETag", kit.ETag(res.Version))
	return writeResource(w, http.StatusCreated, s.toJSON(r, res))
}

// putThumbnail handles PUT /api/v1/resources/{id}/thumbnail: {"page":
// ID} makes that page of the work the one that represents it, {"page":
// null} its first page again; If-Match is the work's version. It answers
// the work.
func (s *Handler) putThumbnail(w http.ResponseWriter, r *http.Request) error {
	work, ifMatch, err := targetIfMatch(r)
	if err != nil {
		return err
	}
	var in struct {
		Page json.RawMessage `json:"page"`
	}
	if err := kit.ReadJSON(w, r, s.opts.MaxBodyBytes, &in); err != nil {
		return err
	}
	var page shelfmark.ID
	switch {
	case in.Page == nil:
		return shelfmark.Errorf(shelfmark.EINVALID, `page: the body must be {"page": the id of a page of the work, or null for its first page}.`)
	case string(in.Page) != "null":
		var id string
		if err := json.Unmarshal(in.Page, &id); err != nil || id == "" {
			return shelfmark.Errorf(shelfmark.EINVALID, "page: the id of a page of the work (a string), or null for its first page.")
		}
		page = shelfmark.ID(id)
	}
	res, err := s.deps.Resources.SetThumbnailPage(r.Context(), work, page, ifMatch)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", kit.ETag(res.Version))
	return writeResource(w, http.StatusOK, s.toJSON(r, res))
}
