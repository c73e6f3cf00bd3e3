package ui

// This file serves what the interface shows of a WARC file: the page of
// its captures (/web/files/{id}, in the order they were indexed, a keyset
// page at a time), and, on the page of the work that holds it, a link to
// that page in place of the book's controls (a crawl has no pages to
// arrange and nothing for the page viewer).

import (
	"context"
	"net/http"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ingest"
)

// webFileData is the content of /web/files/{id}.
type webFileData struct {
	// Name is the file's name; Work the page of the work holding it ("":
	// none the caller may read).
	Name, Work string
	State      *shelfmark.WebFileRow
	List       webCaptureList
}

// webFilePage serves /web/files/{id}?cursor=: the captures of a WARC file
// the caller may read. A file the caller may not read, or one the web
// index does not hold, is a 404 page.
func (s *Handler) webFilePage(w http.ResponseWriter, r *http.Request) error {
	wi, err := s.opts.WebArchive.Index()
	if err != nil {
		return err
	}
	ctx := r.Context()
	id := shelfmark.ID(r.PathValue("id"))
	if err := id.Check(); err != nil {
		return err
	}
	res, err := s.deps.Resources.FindResource(ctx, id)
	if err != nil {
		return err
	}
	if res.Kind != shelfmark.KindFile || res.File == nil {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is not a WARC file of the web index.", id)
	}
	state, err := wi.WebFileState(ctx, id)
	if err != nil {
		return err
	}
	if state == nil {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is not a WARC file of the web index.", id)
	}
	page, err := wi.WebFileCaptures(ctx, id, r.URL.Query().Get("cursor"), webUIPage)
	if err != nil {
		return err
	}
	p := s.cachedPage(w, r, "web.file.title", res.File.Name)
	p.Nav, p.public = "web", res.VisibilityAt(s.now()) == shelfmark.Public
	d := &webFileData{Name: res.File.Name, State: state, List: webCaptureList{Page: p, Captures: webCaptureItems(page.Captures)}}
	webPager(r, &d.List, page.Next)
	if d.Work, err = s.workOfFile(ctx, res); err != nil {
		return err
	}
	p.Data = d
	return s.render(w, r, http.StatusOK, "web_file", p)
}

// workOfFile returns the page of the work that holds a file (through its
// file set), or "" when there is none the caller may read.
func (s *Handler) workOfFile(ctx context.Context, f *shelfmark.Resource) (string, error) {
	if f.Parent == "" {
		return "", nil
	}
	fs, err := s.deps.Resources.FindResource(ctx, f.Parent)
	switch {
	case shelfmark.ErrorCode(err) == shelfmark.ENOTFOUND || shelfmark.ErrorCode(err) == shelfmark.EGONE:
		return "", nil
	case err != nil:
		return "", err
	case fs.Kind == shelfmark.KindWork:
		return "/works/" + string(fs.ID), nil
	case fs.Parent == "":
		return "", nil
	}
	return "/works/" + string(fs.Parent), nil
}

// uiWorkWeb is a WARC file of a work, on the work's page.
type uiWorkWeb struct {
	// Name is the file's name; Href the page of its captures.
	Name, Href string
	// Records counts the records indexed; Done is unset while indexing
	// goes on.
	Records int64
	Done    bool
}

// isWARCFile reports whether a file looks like a WARC (or WAT) file: its
// media type, or its name as a WARC ingest takes it (a gzipped WARC file
// is stored as application/gzip).
func isWARCFile(f *shelfmark.File) bool {
	return f.MediaType == "application/warc" || ingest.IsWARC(f.Name)
}

// workWebFiles finds the WARC files of the work page's file sets that the
// web index holds (asking the index once for each original file that
// looks like one, so at most once per page shown), and reports whether
// the page shows a web archive: pages that each hold such a file, and no
// other page. Such a work gets no book controls (arranging pages, the
// page viewer) but a link to each file's captures.
func (s *Handler) workWebFiles(ctx context.Context, sets []shelfmark.ID, files map[shelfmark.ID][]*shelfmark.Resource) ([]*uiWorkWeb, bool, error) {
	wi, ok := s.deps.Resources.(WebIndex)
	if !ok || len(sets) == 0 {
		return nil, false, nil
	}
	var out []*uiWorkWeb
	all := true
	for _, fs := range sets {
		found := false
		for _, f := range files[fs] {
			if f.File == nil || (f.File.Use != shelfmark.UseOriginal && f.File.Use != "") || !isWARCFile(f.File) {
				continue
			}
			state, err := wi.WebFileState(ctx, f.ID)
			switch {
			case shelfmark.ErrorCode(err) == shelfmark.ENOTFOUND || shelfmark.ErrorCode(err) == shelfmark.EGONE:
				continue
			case err != nil:
				return nil, false, err
			case state == nil || state.Removed:
				continue
			}
			found = true
			out = append(out, &uiWorkWeb{Name: f.File.Name, Href: "/web/files/" + string(f.ID), Records: state.Records, Done: state.Done})
		}
		all = all && found
	}
	return out, all && len(out) > 0, nil
}
