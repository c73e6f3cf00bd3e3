package ui

// This file serves the reordering of a work's pages (its file sets). A
// book may have thousands, so the page lists them in bounded chunks
// (keyset-paged as GET /api/v1/resources/{id}/children pages them), and
// the order form holds only the ids of its chunk, in their new order.
// Saving puts them into the slots the chunk's pages held in the whole
// order, which is read when the form is sent, and stores the whole order
// with one SetOrder under the work's version (If-Match): a page moves
// within its chunk, and a chunk is saved before the next is reordered.
// With script, pages move by dragging (SortableJS) or by keyboard;
// without, each move button sends the form, which comes back with the
// page moved (not yet saved).

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// pagesChunk is how many pages one reorder page lists.
const pagesChunk = 100

// reorderItem is one page in the reorder list.
type reorderItem struct {
	ID shelfmark.ID
	// Pos is the place shown (1-based in the whole order).
	Pos int
	// Name is the name of the page's original file ("" when none); Thumb
	// the address of its thumbnail ("" when none was made yet); Label the
	// page's label (its title, "" when none).
	Name, Thumb, Label string
	// Represents is set on the page that represents the work (its
	// thumbnail): the one chosen, else the first page; Chosen when it was
	// chosen.
	Represents, Chosen bool
}

// describeItems gives the pages of work their file names, thumbnails and
// labels, read for the whole chunk at once (a fixed number of
// statements), and marks the page that represents the work.
func (s *Handler) describeItems(r *http.Request, res *shelfmark.Resource, items []reorderItem) error {
	if len(items) == 0 {
		return nil
	}
	work := res.ID
	chosen := shelfmark.ThumbnailPageOf(res.Metadata)
	for i := range items {
		items[i].Chosen = items[i].ID == chosen
		items[i].Represents = items[i].Chosen || (chosen == "" && items[i].Pos == 1)
	}
	if err := s.labelItems(r, items); err != nil {
		return err
	}
	ids := make([]shelfmark.ID, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	files, err := s.deps.Resources.ChildFiles(r.Context(), work, ids)
	if err != nil {
		return err
	}
	for i := range items {
		for _, f := range files[items[i].ID] {
			switch {
			case f.File == nil:
			case f.File.Use == shelfmark.UseThumbnail && items[i].Thumb == "":
				items[i].Thumb = "/api/v1/resources/" + string(f.ID) + "/content"
			case (f.File.Use == shelfmark.UseOriginal || f.File.Use == "") && items[i].Name == "":
				items[i].Name = f.File.Name
			}
		}
	}
	return nil
}

// pagesData is the content of the reorder page.
type pagesData struct {
	Work    *shelfmark.Resource
	Title   string
	Version int64
	Items   []reorderItem
	// After is the cursor of this chunk ("" for the first), Offset the
	// place of its first page; Next and NextOffset those of the next.
	After      string
	Offset     int
	Next       string
	NextOffset int
	// Moved is set when the list shows moves not yet saved.
	Moved bool
}

// chunkOffset reads the place of a chunk's first page (display only).
func chunkOffset(v string) int {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// pagesPage handles GET /works/{id}/pages (?after= and ?offset= name a
// chunk).
func (s *Handler) pagesPage(w http.ResponseWriter, r *http.Request) error {
	res, err := s.editableWork(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	after := q.Get("after")
	pg, err := s.deps.Resources.ListChildren(r.Context(), res.ID, shelfmark.PageRequest{After: shelfmark.Cursor(after), Limit: pagesChunk})
	if err != nil {
		return err
	}
	d := &pagesData{Work: res, Title: titleOf(res), Version: res.Version, After: after, Offset: chunkOffset(q.Get("offset")), Next: string(pg.Next)}
	for i, it := range pg.Items {
		d.Items = append(d.Items, reorderItem{ID: it.ID, Pos: d.Offset + i})
	}
	d.NextOffset = d.Offset + len(d.Items)
	if err := s.describeItems(r, res, d.Items); err != nil {
		return err
	}
	p := s.page(w, r, "pages.title", d.Title)
	p.Data = d
	return s.render(w, r, http.StatusOK, "pages", p)
}

// orderPost handles POST /works/{id}/order: "up" or "down" (a page's id)
// moves that page in the list and shows it again; "from" and "to" move
// the page at one place of the whole order to another and save at once;
// otherwise the list's order is saved.
func (s *Handler) orderPost(w http.ResponseWriter, r *http.Request) error {
	res, version, err := s.editableForm(r)
	if err != nil {
		return err
	}
	f := r.PostForm
	ids := make([]shelfmark.ID, 0, len(f["id"]))
	for _, v := range f["id"] {
		id := shelfmark.ID(v)
		if err := id.Check(); err != nil {
			return shelfmark.Errorf(shelfmark.EINVALID, "id: %.80q is not a page of this work.", v)
		}
		ids = append(ids, id)
	}
	if len(ids) > pagesChunk {
		return shelfmark.Errorf(shelfmark.EINVALID, "The form names %d pages; a chunk has at most %d.", len(ids), pagesChunk)
	}
	after, offset := f.Get("after"), chunkOffset(f.Get("offset"))
	if f.Has("from") {
		return s.moveFar(w, r, res, version)
	}
	if up, down := f.Get("up"), f.Get("down"); up != "" || down != "" {
		moved, step := shelfmark.ID(up), -1
		if up == "" {
			moved, step = shelfmark.ID(down), 1
		}
		if i := slices.Index(ids, moved); i >= 0 && i+step >= 0 && i+step < len(ids) {
			ids[i], ids[i+step] = ids[i+step], ids[i]
		}
		d := &pagesData{Work: res, Title: titleOf(res), Version: version, After: after, Offset: offset, Moved: true}
		for i, id := range ids {
			d.Items = append(d.Items, reorderItem{ID: id, Pos: offset + i})
		}
		if err := s.describeItems(r, res, d.Items); err != nil {
			return err
		}
		p := s.page(w, r, "pages.title", d.Title)
		p.Notice = p.T("pages.unsaved")
		p.Data = d
		return s.render(w, r, http.StatusOK, "pages", p)
	}
	whole, err := s.wholeOrder(r, res.ID)
	if err != nil {
		return err
	}
	order, err := spliceOrder(whole, ids)
	if err != nil {
		return err
	}
	_, err = s.deps.Resources.SetOrder(r.Context(), res.ID, order, version)
	if shelfmark.ErrorCode(err) == shelfmark.EPRECONDITION {
		return shelfmark.Errorf(shelfmark.ECONFLICT, "The work was changed after this page was made (someone else may have reordered its pages); reload the page and move the pages again.")
	}
	if err != nil {
		return err
	}
	next := "/works/" + string(res.ID) + "/pages?notice=ordersaved"
	if after != "" {
		next += "&after=" + url.QueryEscape(after) + "&offset=" + strconv.Itoa(offset)
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

// wholeOrder reads the ids of all the work's children in order, a
// listing page at a time.
func (s *Handler) wholeOrder(r *http.Request, work shelfmark.ID) ([]shelfmark.ID, error) {
	var out []shelfmark.ID
	var after shelfmark.Cursor
	for {
		pg, err := s.deps.Resources.ListChildren(r.Context(), work, shelfmark.PageRequest{After: after, Limit: shelfmark.MaxPageSize})
		if err != nil {
			return nil, err
		}
		for _, it := range pg.Items {
			out = append(out, it.ID)
		}
		if pg.Next == "" {
			return out, nil
		}
		if len(out) > shelfmark.MaxOrderSize {
			return nil, shelfmark.Errorf(shelfmark.EINVALID, "The work has more than %d pages; reorder them through the API.", shelfmark.MaxOrderSize)
		}
		after = pg.Next
	}
}

// spliceOrder puts chunk, in its order, into the slots its ids hold in
// whole.
func spliceOrder(whole, chunk []shelfmark.ID) ([]shelfmark.ID, error) {
	want := make(map[shelfmark.ID]bool, len(chunk))
	for _, id := range chunk {
		if want[id] {
			return nil, shelfmark.Errorf(shelfmark.EINVALID, "The page %s is named twice.", id)
		}
		want[id] = true
	}
	out := slices.Clone(whole)
	k := 0
	for i, id := range out {
		if want[id] {
			out[i] = chunk[k]
			k++
		}
	}
	if k != len(chunk) {
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "Some pages of the form are no longer pages of this work; reload the page.")
	}
	return out, nil
}

// moveFar moves the page at place "from" of the whole order to place "to"
// and stores the order (one SetOrder under the form's version): the move
// across chunks.
func (s *Handler) moveFar(w http.ResponseWriter, r *http.Request, res *shelfmark.Resource, version int64) error {
	whole, err := s.wholeOrder(r, res.ID)
	if err != nil {
		return err
	}
	from, err1 := strconv.Atoi(strings.TrimSpace(r.PostForm.Get("from")))
	to, err2 := strconv.Atoi(strings.TrimSpace(r.PostForm.Get("to")))
	if err1 != nil || err2 != nil || from < 1 || to < 1 || from > len(whole) || to > len(whole) {
		return shelfmark.Errorf(shelfmark.EINVALID, "Give two places between 1 and %d.", len(whole))
	}
	moved := whole[from-1]
	whole = slices.Delete(whole, from-1, from)
	whole = slices.Insert(whole, to-1, moved)
	_, err = s.deps.Resources.SetOrder(r.Context(), res.ID, whole, version)
	if shelfmark.ErrorCode(err) == shelfmark.EPRECONDITION {
		return shelfmark.Errorf(shelfmark.ECONFLICT, "The work was changed after this page was made (someone else may have reordered its pages); reload the page and move the pages again.")
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, "/works/"+string(res.ID)+"/pages?notice=ordersaved", http.StatusSeeOther)
	return nil
}
