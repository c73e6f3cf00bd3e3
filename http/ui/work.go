package ui

// This file serves the interface's work pages: a work's metadata with
// human labels, its files, the thumbnails of its pages (keyset-paged, so a
// page of a 1,200-page book costs what a page of a 10-page one does), the
// collections it belongs to, and what search engines and reference
// managers read (work_meta.go). Citations and the sitemap are in
// work_cite.go and work_sitemap.go.

import (
	"context"
	"net/http"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/labels"
)

const (
	// uiWorkPageSize is how many of a work's pages (file sets) one work
	// page shows; the rest follow through the ?after= cursor.
	uiWorkPageSize = 60
	// uiWorkCollections caps the collections named on a work page.
	uiWorkCollections = 20
)

// uiWorkRoutes are the routes of this file and of work_cite.go and
// work_sitemap.go.
func (s *Handler) uiWorkRoutes() []kit.Route {
	return []kit.Route{
		{Method: "GET", Pattern: "/works/{id}", Handle: s.uiWrap(s.workPage)},
		{Method: "GET", Pattern: "/works/{id}/cite.bib", Handle: s.uiWrap(s.workBibTeX)},
		{Method: "GET", Pattern: "/works/{id}/cite.ris", Handle: s.uiWrap(s.workRIS)},
		{Method: "GET", Pattern: "/sitemap.xml", Handle: s.uiWrap(s.sitemapIndex)},
		{Method: "GET", Pattern: "/sitemaps/{file}", Handle: s.uiWrap(s.sitemapPage)},
		{Method: "GET", Pattern: "/robots.txt", Handle: s.uiWrap(s.robots)},
	}
}

// uiWorkData is the content of a work page.
type uiWorkData struct {
	// ID is the work's id.
	ID    string
	Title string
	// TitleLang is the language of the title, "" when not known.
	TitleLang string
	// Fields are the metadata, labelled, in reading order.
	Fields []*labels.Field
	// Visibility is the work's effective visibility; Embargo and Lease
	// the dates that change it, when set and still ahead.
	Visibility shelfmark.Visibility
	Embargo    *time.Time
	Lease      *time.Time
	// Collections are the readable collections the work belongs to;
	// MoreCollections counts those past uiWorkCollections.
	Collections     []uiLink
	MoreCollections int
	// PartOf links the work this one is a part of, when it is one the
	// caller may read.
	PartOf *uiLink
	// Crumbs are the breadcrumbs between the home page and the work: the
	// work it is a part of, else the first collection it is shown in.
	Crumbs []uiLink
	// PDF is the address of the whole work as one PDF (the IIIF
	// manifest's rendering), "" when no page shown has a JPEG image (an
	// access copy, or an original that is one) to make it of.
	PDF string
	// Zip is the address of all the work's files as one ZIP, when its
	// first pages have files the caller may read.
	Zip string
	// Items are this page's children (file sets, or parts that are works).
	Items []*uiWorkItem
	// Files are the files of Items, in order.
	Files []*uiWorkFile
	// After is the cursor this page started from ("" for the first); Next
	// the cursor of the following one ("" on the last).
	After, Next string
	// MayEdit shows the links to edit the work; MayDelete the one to
	// delete it (a depositor may change a work, only a curator delete it).
	MayEdit, MayDelete bool
	// Canonical is the work page's stable URL.
	Canonical string
	// Meta are the Highwire Press citation_* tags; JSONLD the schema.org
	// description.
	Meta   []uiMeta
	JSONLD map[string]any
	// Viewer is the book viewer, nil when no page shown has an image.
	Viewer *uiViewer
	// Web are the WARC files of the pages shown that the web index holds,
	// each linked to its captures; WebArchive is set when the pages shown
	// are all such files (a crawl): the page then shows no book controls
	// (arranging pages, the viewer) and no page list.
	Web        []*uiWorkWeb
	WebArchive bool
	// History links the work's History page (work_history.go), shown
	// when the server keeps a preservation copy.
	History bool
	// Usage is how often the work was looked at and taken (COUNTER's
	// totals), nil when the server counts none.
	Usage *shelfmark.UsageTotals
	// Restricted is set when the reader reads the record but not the
	// files (access_requests.go).
	Restricted *uiRestricted
}

// uiLink is a link with its text.
type uiLink struct {
	Href, Text string
}

// uiWorkItem is one child of a work: a page (file set) with its thumbnail,
// or a part that is a work of its own.
type uiWorkItem struct {
	ID    shelfmark.ID
	Label string
	// Work is set for a part that is a work (linked to its own page).
	Work bool
	// Thumb is the thumbnail's URL, "" when none was made (yet); Href
	// what the thumbnail opens (the access copy, else the original).
	Thumb, Href string
}

// uiWorkFile is one file of a page.
type uiWorkFile struct {
	ID       shelfmark.ID
	Page     string
	Name     string
	Use      string
	Format   string
	PRONOM   string
	Size     int64
	SHA256   string
	Href     string
	External bool
}

// workPage handles GET /works/{id}: a work the caller may read; a file
// set's page is its work's, a collection's is the collection page.
func (s *Handler) workPage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := shelfmark.ID(r.PathValue("id"))
	if err := id.Check(); err != nil {
		return err
	}
	res, err := s.deps.Resources.FindResource(ctx, id)
	if err != nil {
		return err
	}
	switch res.Kind {
	case shelfmark.KindWork:
	case shelfmark.KindFileSet:
		if res.Parent == "" {
			return shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a file set of no work.", id)
		}
		http.Redirect(w, r, "/works/"+string(res.Parent), http.StatusSeeOther)
		return nil
	case shelfmark.KindCollection:
		http.Redirect(w, r, "/collections/"+string(res.ID), http.StatusSeeOther)
		return nil
	default:
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a %s, not a work.", id, res.Kind)
	}
	after := r.URL.Query().Get("after")
	if pg := r.URL.Query().Get("page"); pg != "" && after == "" {
		// a search hit in a page's text: the pages shown start at it
		if after, err = s.pageCursor(ctx, id, shelfmark.ID(pg)); err != nil {
			return err
		}
	}
	children, err := s.deps.Resources.ListChildren(ctx, id, shelfmark.PageRequest{After: shelfmark.Cursor(after), Limit: uiWorkPageSize, Metadata: true})
	if err != nil {
		return err
	}
	var sets []shelfmark.ID
	for _, it := range children.Items {
		if it.Kind == shelfmark.KindFileSet {
			sets = append(sets, it.ID)
		}
	}
	var files map[shelfmark.ID][]*shelfmark.Resource
	if len(sets) > 0 {
		if files, err = s.deps.Resources.ChildFiles(ctx, id, sets); err != nil {
			return err
		}
	}
	p := s.cachedPage(w, r, "")
	now := s.now()
	d := &uiWorkData{ID: string(id), Visibility: res.VisibilityAt(now), After: after, Next: string(children.Next),
		Canonical: p.Base + "/works/" + string(id), Fields: labels.Fields(p.msgs, res.Metadata)}
	labels.ForReaders(d.Fields, p.Lang) // languages named, creators and subjects searchable
	p.public = d.Visibility == shelfmark.Public
	d.Title, d.TitleLang = labels.Title(res.Metadata, p.Lang)
	if d.Title == "" {
		d.Title = p.T("work.untitled")
	}
	if res.Embargo != nil && res.Embargo.After(now) {
		d.Embargo = res.Embargo
	}
	if res.Lease != nil && res.Lease.After(now) {
		d.Lease = res.Lease
	}
	if err := s.workCollections(r, p.Lang, res, d); err != nil {
		return err
	}
	d.Usage = s.usageTotals(r, id)
	if res.Parent != "" {
		pr, err := s.deps.Resources.FindResource(ctx, res.Parent)
		switch shelfmark.ErrorCode(err) {
		case "":
			t, _ := labels.Title(pr.Metadata, p.Lang)
			if t == "" {
				t = p.T("work.untitled")
			}
			d.PartOf = &uiLink{Href: "/works/" + string(pr.ID), Text: t}
		case shelfmark.ENOTFOUND, shelfmark.EGONE:
		default:
			return err
		}
	}
	for i, it := range children.Items {
		item := &uiWorkItem{ID: it.ID, Label: childLabel(p, it, i)}
		if it.Kind != shelfmark.KindFileSet {
			item.Work, item.Href = true, "/works/"+string(it.ID)
			d.Items = append(d.Items, item)
			continue
		}
		var original, access string
		for _, f := range files[it.ID] {
			href := kit.ContentURL(f.ID)
			switch f.File.Use {
			case shelfmark.UseThumbnail:
				if item.Thumb == "" {
					item.Thumb = href
				}
			case shelfmark.UseAccess:
				if access == "" {
					access = href
				}
			case shelfmark.UseOriginal, "":
				if original == "" {
					original = href
				}
			}
			d.Files = append(d.Files, workFile(p, item.Label, f))
		}
		item.Href = access
		if item.Href == "" {
			item.Href = original
		}
		d.Items = append(d.Items, item)
	}
	if after == "" && len(sets) == 0 {
		if d.Restricted, err = s.workRestricted(r, id); err != nil {
			return err
		}
	}
	d.History = s.opts.History != nil
	d.MayEdit = s.deps.Resources.CheckEdit(ctx, id) == nil
	d.MayDelete = d.MayEdit && s.deps.Resources.CheckDelete(ctx, id) == nil
	d.Meta, d.JSONLD = s.workMeta(p, res, d, files)
	var archive bool
	if d.Web, archive, err = s.workWebFiles(ctx, sets, files); err != nil {
		return err
	}
	d.WebArchive = archive && len(sets) == len(children.Items)
	if !d.WebArchive {
		if d.Viewer, err = s.workViewer(p, id, shelfmark.ID(r.URL.Query().Get("page")), d.Items, files); err != nil {
			return err
		}
	}
	switch {
	case d.PartOf != nil:
		d.Crumbs = []uiLink{*d.PartOf}
	case len(d.Collections) > 0:
		d.Crumbs = d.Collections[:1]
	}
	for _, set := range sets {
		if kit.PageJPEG(files[set]) != nil {
			d.PDF = "/iiif/" + string(id) + "/pdf"
		}
		for _, f := range files[set] {
			if f.File != nil && f.File.Processed() {
				d.Zip = "/iiif/" + string(id) + "/zip"
			}
		}
	}
	p.Title = d.Title
	p.Data = d
	return s.render(w, r, http.StatusOK, "work", p)
}

// workCollections names the collections the work belongs to that the
// caller may read (the others are left out, as if absent), read at once.
func (s *Handler) workCollections(r *http.Request, lang string, res *shelfmark.Resource, d *uiWorkData) error {
	ids := res.MemberOf
	if len(ids) > uiWorkCollections {
		ids = ids[:uiWorkCollections]
		d.MoreCollections = len(res.MemberOf) - uiWorkCollections
	}
	if len(ids) == 0 {
		return nil
	}
	colls, err := s.deps.Resources.FindResources(r.Context(), ids)
	if err != nil {
		return err
	}
	for _, c := range colls {
		t, _ := labels.Title(c.Metadata, lang)
		if t == "" {
			t = string(c.ID)
		}
		d.Collections = append(d.Collections, uiLink{Href: "/collections/" + string(c.ID), Text: t})
	}
	return nil
}

// childLabel names a child: its own title, else "Page n" by its place in
// the order (or on this page, while the work has no order).
func childLabel(p *uiPage, it *shelfmark.Resource, i int) string {
	if t, _ := labels.Title(it.Metadata, p.Lang); t != "" {
		return t
	}
	if it.Kind == shelfmark.KindWork {
		return p.T("work.part")
	}
	if it.Position > 0 {
		return p.T("work.page", it.Position)
	}
	return p.T("work.unordered", i+1)
}

// useKeys are the catalog keys of the uses of files.
var useKeys = map[string]string{
	"":                     "work.use.original",
	shelfmark.UseOriginal:  "work.use.original",
	shelfmark.UseThumbnail: "work.use.thumbnail",
	shelfmark.UseAccess:    "work.use.access",
	shelfmark.UseText:      "work.use.text",
	shelfmark.UseOCR:       "work.use.ocr",
	shelfmark.UseTiles:     "work.use.tiles",
	shelfmark.UseALTO:      "work.use.alto",
	shelfmark.UseSource:    "work.use.source",
}

// workFile describes a file for the files table.
func workFile(p *uiPage, page string, f *shelfmark.Resource) *uiWorkFile {
	wf := &uiWorkFile{ID: f.ID, Page: page, Name: f.File.Name, Size: f.File.Size, SHA256: f.File.SHA256,
		Href: kit.ContentURL(f.ID), External: !f.File.Managed()}
	if key, ok := useKeys[f.File.Use]; ok {
		wf.Use = p.T(key)
	} else {
		wf.Use = f.File.Use
	}
	switch fm := f.File.Format; {
	case fm == nil && f.File.Managed() && !f.File.Processed():
		// derivatives are not identified: the media
		// type they were made with is what is known
		wf.Format = p.T("work.format.mediatype", f.File.MediaType)
	case fm == nil:
		wf.Format = p.T("work.format.pending")
	case !fm.Known():
		wf.Format = p.T("work.format.unknown")
	default:
		wf.Format, wf.PRONOM = fm.Name, fm.PRONOM
		if fm.Version != "" {
			wf.Format += " " + fm.Version
		}
	}
	return wf
}

// pageCursor is the cursor of the work's pages that starts at page (one of
// its file sets, as ?page= names it); "" (the first pages) when page is
// not one of the work's children the caller may read.
func (s *Handler) pageCursor(ctx context.Context, work, page shelfmark.ID) (string, error) {
	res, err := s.deps.Resources.FindResource(ctx, page)
	switch {
	case shelfmark.ErrorCode(err) == shelfmark.ENOTFOUND || shelfmark.ErrorCode(err) == shelfmark.EGONE:
		return "", nil
	case err != nil:
		return "", err
	case res.Parent != work:
		return "", nil
	}
	c, err := s.deps.Resources.ChildCursor(res)
	return string(c), err
}
