package ui

// This file serves the choice of the page that represents a work (POST
// /works/{id}/thumbnail, a button of each page on the pages page): its
// thumbnail is the work's in search results and in "My works". The
// choice is stored in the work's metadata under its version
// (SetThumbnailPage); which thumbnail a reader sees is the engine's
// decision when it is read (the chosen page's while the reader may see
// it, else the first page's).

import (
	"net/http"

	"github.com/shelfmark/shelfmark"
)

// thumbnailPost handles POST /works/{id}/thumbnail: the field "page"
// names the page chosen ("" for the first page again), under the form's
// version; it comes back to the same chunk.
func (s *Handler) thumbnailPost(w http.ResponseWriter, r *http.Request) error {
	res, version, err := s.editableForm(r)
	if err != nil {
		return err
	}
	f := r.PostForm
	page := shelfmark.ID(f.Get("page"))
	if page != "" {
		if err := page.Check(); err != nil {
			return shelfmark.Errorf(shelfmark.EINVALID, "page: %.80q is not a page of this work.", f.Get("page"))
		}
	}
	_, err = s.deps.Resources.SetThumbnailPage(r.Context(), res.ID, page, version)
	if shelfmark.ErrorCode(err) == shelfmark.EPRECONDITION {
		return shelfmark.Errorf(shelfmark.ECONFLICT, "The work was changed after this page was made (someone else may have changed it); reload the page and choose the thumbnail again.")
	}
	if err != nil {
		return err
	}
	next := chunkURL(res.ID, f.Get("after"), chunkOffset(f.Get("offset")), "thumbnailsaved")
	if page != "" {
		next += "#p-" + string(page)
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

// splitPageChoice splits a work's metadata into what the edit form shows
// and the statement of the page chosen to represent the work, which the
// form keeps as it is (the pages page changes it).
func splitPageChoice(meta []shelfmark.Statement) (shown, kept []shelfmark.Statement) {
	for _, st := range meta {
		if st.Predicate == shelfmark.PredThumbnailPage {
			kept = append(kept, st)
		} else {
			shown = append(shown, st)
		}
	}
	return shown, kept
}
