package ui

// This file serves the labelling of a work's pages ("Title page",
// "p. 1", "f. 2r"): the reorder page shows each page of its chunk with a
// text field for its label (its file set's title, which the IIIF
// manifest gives as the canvas's label). "Save labels", a second submit
// button of the order form (and its default one, so that Enter in a
// label field saves the labels), sends the form to /works/{id}/labels:
// the chunk's ids and labels in pairs, stored by one SetPageLabels under
// the work's version.

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/labels"
)

// labelItems sets the pages' current labels, read for the whole chunk at
// once (one FindResources: a fixed number of statements).
func (s *Handler) labelItems(r *http.Request, items []reorderItem) error {
	if len(items) == 0 {
		return nil
	}
	ids := make([]shelfmark.ID, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	found, err := s.deps.Resources.FindResources(r.Context(), ids)
	if err != nil {
		return err
	}
	byID := make(map[shelfmark.ID]*shelfmark.Resource, len(found))
	for _, res := range found {
		byID[res.ID] = res
	}
	for i := range items {
		if res := byID[items[i].ID]; res != nil {
			items[i].Label, _ = labels.Title(res.Metadata, "")
		}
	}
	return nil
}

// labelsPost handles POST /works/{id}/labels: the fields id and label, in
// pairs, give the pages of one chunk their labels (an empty label removes
// one), saved at once under the form's version; it comes back to the
// same chunk.
func (s *Handler) labelsPost(w http.ResponseWriter, r *http.Request) error {
	res, version, err := s.editableForm(r)
	if err != nil {
		return err
	}
	f := r.PostForm
	ids, texts := f["id"], f["label"]
	if len(ids) != len(texts) {
		return shelfmark.Errorf(shelfmark.EINVALID, "The form gives %d pages and %d labels; reload the page.", len(ids), len(texts))
	}
	if len(ids) > pagesChunk {
		return shelfmark.Errorf(shelfmark.EINVALID, "The form names %d pages; a chunk has at most %d.", len(ids), pagesChunk)
	}
	pls := make([]shelfmark.PageLabel, len(ids))
	for i, v := range ids {
		id := shelfmark.ID(v)
		if err := id.Check(); err != nil {
			return shelfmark.Errorf(shelfmark.EINVALID, "id: %.80q is not a page of this work.", v)
		}
		pls[i] = shelfmark.PageLabel{Page: id, Label: texts[i]}
	}
	_, err = s.deps.Resources.SetPageLabels(r.Context(), res.ID, pls, version)
	if shelfmark.ErrorCode(err) == shelfmark.EPRECONDITION {
		return shelfmark.Errorf(shelfmark.ECONFLICT, "The work was changed after this page was made (someone else may have reordered or labelled its pages); reload the page and enter the labels again.")
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, chunkURL(res.ID, f.Get("after"), chunkOffset(f.Get("offset")), "labelssaved"), http.StatusSeeOther)
	return nil
}

// chunkURL is the address of the reorder page's chunk that starts after
// the cursor after ("" for the first) at place offset, with a notice.
func chunkURL(work shelfmark.ID, after string, offset int, notice string) string {
	next := "/works/" + string(work) + "/pages?notice=" + url.QueryEscape(notice)
	if after != "" {
		next += "&after=" + url.QueryEscape(after) + "&offset=" + strconv.Itoa(offset)
	}
	return next
}
