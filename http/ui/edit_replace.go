package ui

// This file serves the replacement of a page's file (POST
// /works/{id}/pages/{page}/file, from the form of each page on the pages
// page): one file, streamed to the content store under the caller's
// quotas as added files are (receiveFiles), becomes the page's original
// in one change of the work under the version the page was made from
// (ReplacePageFile). The page's files before it leave the work's current
// version and stay in its history; its derivatives are made again by the
// background pipeline.

import (
	"net/http"
	"net/url"

	"github.com/shelfmark/shelfmark"
)

// replacePost handles POST /works/{id}/pages/{page}/file: a multipart
// form with its form token, the work's version ("version"), the chunk it
// came from ("after", "offset") and one file ("files"). A refused form
// keeps nothing: the bytes it sent are discarded.
func (s *Handler) replacePost(w http.ResponseWriter, r *http.Request) error {
	page := shelfmark.ID(r.PathValue("page"))
	if err := page.Check(); err != nil {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "There is no page %.80q.", r.PathValue("page"))
	}
	return s.receiveFiles(w, r, func(res *shelfmark.Resource, form url.Values, files []depositFile) error {
		version, err := parseVersion(form.Get("version"))
		if err != nil {
			return err
		}
		switch {
		case len(files) == 0:
			return shelfmark.Errorf(shelfmark.EINVALID, "No file was sent: choose the file that replaces the page's.")
		case len(files) > 1:
			return shelfmark.Errorf(shelfmark.EINVALID, "One file replaces a page's file; the form sent %d.", len(files))
		}
		_, err = s.deps.Resources.ReplacePageFile(r.Context(), res.ID, page, files[0].file(), version)
		if shelfmark.ErrorCode(err) == shelfmark.EPRECONDITION {
			return shelfmark.Errorf(shelfmark.ECONFLICT, "The work was changed after this page was made (someone else may have changed its pages); reload the page and choose the file again.")
		}
		if err != nil {
			return err
		}
		http.Redirect(w, r, chunkURL(res.ID, form.Get("after"), chunkOffset(form.Get("offset")), "filereplaced")+"#p-"+string(page), http.StatusSeeOther)
		return nil
	})
}
