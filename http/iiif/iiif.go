package iiif

// This file serves IIIF Presentation API 3.0 documents
// (https://iiif.io/api/presentation/3.0/): a work's Manifest, with one
// Canvas per page (file set) in the work's order, and a collection's IIIF
// Collection, keyset-paged. Both are built from stored rows a page of
// children (or members) at a time, as the caller may read them: what the
// caller may not read is 404, as in the API. Labels are language maps
// holding every language of the interface's catalogs, so a manifest does
// not depend on the reader's language.

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/labels"
)

const (
	// Context is the JSON-LD context of Presentation 3.0.
	Context = "http://iiif.io/api/presentation/3/context.json"
	// MediaType is the Content-Type of a Presentation 3.0 document.
	MediaType = `application/ld+json;profile="` + Context + `"`
	// ChildPage is how many of a work's children one read of a
	// manifest's build takes (with their files, in one more read), so
	// that a book of up to ChildPage pages costs the same statements
	// whatever its size; a longer one's next read runs while the
	// canvases of one are made (eachChild).
	ChildPage = shelfmark.MaxPageSize
	// CollectionPage is how many members one page of a IIIF
	// Collection lists.
	CollectionPage = 100
	// HOCRProfile names hOCR in a seeAlso.
	HOCRProfile = "http://kba.cloud/hocr-spec/1.2/"
)

// iiifRoutes are the routes of this file.
func (s *Handler) iiifRoutes() []kit.Route {
	return []kit.Route{
		{Method: "GET", Pattern: "/iiif/{id}/manifest", Handle: s.iiifManifest},
		{Method: "GET", Pattern: "/iiif/{id}/collection", Handle: s.iiifCollection},
		// the work as one PDF (iiif_pdf.go)
		{Method: "GET", Pattern: "/iiif/{id}/pdf", Handle: s.iiifPDF},
		// all its files as one ZIP (iiif_zip.go)
		{Method: "GET", Pattern: "/iiif/{id}/zip", Handle: s.iiifZip},
		{Method: "GET", Pattern: "/iiif/{id}/search/1", Handle: s.iiifSearch1},
		{Method: "GET", Pattern: "/iiif/{id}/search/2", Handle: s.iiifSearch2},
	}
}

// langMap is a IIIF language map: language (or "none") -> values.
type langMap map[string][]string

// MarshalJSON writes the map with "none" first, then English, then the
// other languages in byte order: a viewer that does not choose a value by
// its reader's language shows the first (Mirador does so for a
// rendering's label), and English is the interface's reference language.
// The book viewer of the web interface puts its page's language first
// before Mirador reads a manifest.
func (m langMap) MarshalJSON() ([]byte, error) { return m.appendJSON(nil), nil }

// compareLang orders a language map's keys: "none", "en", then the others
// in byte order.
func compareLang(a, b string) int {
	rank := func(k string) int {
		switch k {
		case "none":
			return 0
		case "en":
			return 1
		}
		return 2
	}
	return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
}

// iiifLabels is a catalog message in every language of the catalogs.
func (s *Handler) iiifLabels(key string, args ...any) langMap {
	m := langMap{}
	for _, lang := range s.catalogs.Langs() {
		m[lang] = []string{labels.Translate(s.catalogs.Messages(lang), key, args...)}
	}
	return m
}

// iiifTitle is the label of a resource: its title in its own language
// ("none" when it has no language tag), else the catalog message key.
func (s *Handler) iiifTitle(stmts []shelfmark.Statement, key string, args ...any) langMap {
	t, lang := labels.Title(stmts, "")
	if t == "" {
		return s.iiifLabels(key, args...)
	}
	if lang == "" {
		lang = "none"
	}
	return langMap{lang: {t}}
}

// iiifReadable finds the resource a IIIF route names, as the caller may
// read it.
func (s *Handler) iiifReadable(r *http.Request) (*shelfmark.Resource, error) {
	id := shelfmark.ID(r.PathValue("id"))
	if err := id.Check(); err != nil {
		return nil, err
	}
	return s.deps.Resources.FindResource(r.Context(), id)
}

// iiifWork finds the work a IIIF route of works names (/iiif/{id}/what),
// as the caller may read it. Anything else is 404, saying where to look:
// a page is pointed at its work's route, a collection at its IIIF
// Collection.
func (s *Handler) iiifWork(r *http.Request, what string) (*shelfmark.Resource, error) {
	res, err := s.iiifReadable(r)
	if err != nil {
		return nil, err
	}
	switch {
	case res.Kind == shelfmark.KindWork:
		return res, nil
	case res.Kind == shelfmark.KindCollection:
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a collection, not a work; only works have /iiif/{id}/%s. Its IIIF Collection is /iiif/%s/collection.", res.ID, what, res.ID)
	case res.Kind == shelfmark.KindFileSet && res.Parent != "":
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a page (file set); its work's is /iiif/%s/%s.", res.ID, res.Parent, what)
	case res.Kind == shelfmark.KindFileSet:
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a file set of no work; only works have /iiif/{id}/%s.", res.ID, what)
	}
	return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a %s, not a work; only works have /iiif/{id}/%s.", res.ID, res.Kind, what)
}

// eachChild calls fn with each child of work the caller may read, in
// the work's order, numbered from 1, with the files of the file sets
// (nil for other children), of each file what ListPages reads. Children
// are read with their files ChildPage at a time, so the statements of a
// book do not grow with it up to ChildPage pages.
//
// Those ChildPage are read as two halves at once, each by ListPages in a
// read of its own (the children after position p and those after
// p+ChildPage/2): reading a book's rows is most of building its
// manifest, and while the first rows are read nothing else can run, so
// a second core reads the other half. The halves are two snapshots, as
// two pages of any list are. Live children have distinct
// positions (1..n once ordered), so the first half reaches p+ChildPage/2
// and the children it holds up to there are all of them; the second
// half holds those after. (Were the first half to end before, the second
// would be set aside and the list go on from where the first ended.)
// Children not yet ordered come after the ordered ones, by key, and are
// read ChildPage at a time.
//
// The reads run ahead of fn, on goroutines of their own: the next
// ChildPage are read while fn handles these, so a book longer than that
// takes less than the sum of the two (a manifest of 3,000 pages: 51 ms
// against 58 ms one after the other, on two cores). At most one round
// waits. The readers stop when fn fails or ctx ends, and eachChild
// returns only after they have.
func (s *Handler) eachChild(ctx context.Context, work shelfmark.ID, metadata bool, fn func(it *shelfmark.Resource, n int, files []*shelfmark.Resource) error) error {
	ctx, cancel := context.WithCancel(ctx)
	pages := make(chan childRead, 2)
	defer func() {
		cancel()
		for range pages { // the reader has stopped once pages is closed
		}
	}()
	go s.readChildren(ctx, work, metadata, pages)
	n := 0
	for r := range pages {
		if r.err != nil {
			return r.err
		}
		for _, it := range r.page.Items {
			n++
			if err := fn(it, n, r.page.Files[it.ID]); err != nil {
				return err
			}
		}
		// fn has done with the page's files: their memory is read into
		// again (a page that ended in an error leaves its own to the
		// collector)
		s.pageBufs.Put(r.buf)
	}
	return ctx.Err()
}

// childRead is a page of a work's children eachChild read, with the
// buffer its files were read into, or the error that ended the reading.
type childRead struct {
	page *shelfmark.PagesPage
	buf  *shelfmark.PageBuffer
	err  error
}

// pageBuffer returns a PageBuffer to read a page into: one a page read
// before was given back in, or a new one.
func (s *Handler) pageBuffer() *shelfmark.PageBuffer {
	if b, ok := s.pageBufs.Get().(*shelfmark.PageBuffer); ok {
		return b
	}
	return new(shelfmark.PageBuffer)
}

// readChildren sends the pages of eachChild to pages, in order, until the
// last, an error (sent too) or the end of ctx, then closes pages.
func (s *Handler) readChildren(ctx context.Context, work shelfmark.ID, metadata bool, pages chan<- childRead) {
	defer close(pages)
	send := func(r childRead) bool {
		select {
		case pages <- r:
			return r.err == nil
		case <-ctx.Done():
			return false
		}
	}
	list := func(after int64, limit int) (*shelfmark.PagesPage, *shelfmark.PageBuffer, error) {
		buf := s.pageBuffer()
		page, err := s.deps.Resources.ListPages(ctx, work, shelfmark.PageRequest{After: shelfmark.PositionCursor(after), Limit: limit, Metadata: metadata}, buf)
		return page, buf, err
	}
	// next is where the list goes on after page (-1: it ends there)
	next := func(page *shelfmark.PagesPage) (int64, error) {
		if page.Next == "" {
			return -1, nil
		}
		return shelfmark.CursorPosition(page.Next)
	}
	const half = ChildPage / 2
	for after := int64(0); after >= 0; {
		if after+half >= shelfmark.UnorderedBase { // unordered: by key
			page, buf, err := list(after, ChildPage)
			if err == nil {
				after, err = next(page)
			}
			if !send(childRead{page, buf, err}) {
				return
			}
			continue
		}
		mid := after + half
		var (
			second    *shelfmark.PagesPage
			secondBuf *shelfmark.PageBuffer
			secondErr error
			done      = make(chan struct{})
		)
		go func() {
			defer close(done)
			second, secondBuf, secondErr = list(mid, half)
		}()
		first, firstBuf, err := list(after, half)
		var end int64
		if err == nil {
			end, err = next(first)
		}
		if err != nil || (end >= 0 && end < mid) {
			// the first half ended before mid: go on from its end
			// (positions are distinct, so only an error comes here)
			<-done
			if !send(childRead{first, firstBuf, err}) {
				return
			}
			after = end
			continue
		}
		// the first half's children up to mid, handed on while the second
		// (those after) may still be read
		keep := 0
		for keep < len(first.Items) && first.Items[keep].Position > 0 && int64(first.Items[keep].Position) <= mid {
			keep++
		}
		first.Items = first.Items[:keep]
		ok := send(childRead{first, firstBuf, nil})
		<-done
		if !ok {
			return
		}
		if secondErr == nil {
			after, secondErr = next(second)
		}
		if !send(childRead{second, secondBuf, secondErr}) {
			return
		}
	}
}

// iiifMaxAge is how long a shared cache may keep a public IIIF document
// before it revalidates it.
const iiifMaxAge = 2 * time.Minute

// shareHeaders sets who may read and keep an answer about res built for
// caller: any origin, as viewers on other sites need, and any cache for
// iiifMaxAge, when res is public and the caller anonymous; otherwise the
// answer shows what the caller's roles allow (a signed-in caller may see
// pages the public may not), so it is private to its caller and no shared
// cache keeps it. Either way it varies by the caller's credential. now is
// the time of the request.
func shareHeaders(h http.Header, caller *shelfmark.Caller, res *shelfmark.Resource, now time.Time) {
	kit.AddVary(h, kit.CallerVary...)
	if res.VisibilityAt(now) == shelfmark.Public && !caller.Authenticated() {
		h.Set("Access-Control-Allow-Origin", "*")
		kit.SetCache(h, kit.CachePublic, iiifMaxAge)
	} else {
		kit.SetCache(h, kit.CachePrivate, 0)
	}
}

// writeIIIF sends a Presentation 3.0 document about res (shareHeaders)
// with its validators: the hash of its bytes, and modified when it is
// known (a cached manifest's), answering 304 when the client holds it.
func (s *Handler) writeIIIF(w http.ResponseWriter, r *http.Request, res *shelfmark.Resource, b []byte, modified time.Time) error {
	return s.writeIIIFAs(w, r, res, b, kit.BodyETag(b), modified, nil)
}

// writeIIIFAs is writeIIIF of a document whose ETag is known, with gz,
// when not nil, the document gzipped: sent as it is to a client that
// accepts gzip (the compressing wrapper leaves a response that has a
// Content-Encoding alone), so a cached manifest is compressed once, not
// at every request.
func (s *Handler) writeIIIFAs(w http.ResponseWriter, r *http.Request, res *shelfmark.Resource, b []byte, etag string, modified time.Time, gz func() []byte) error {
	h := w.Header()
	shareHeaders(h, shelfmark.CallerFrom(r.Context()), res, s.deps.Now())
	if kit.NotModified(w, r, kit.Validators{ETag: etag, LastModified: modified}) {
		return nil
	}
	h.Set("Content-Type", MediaType)
	if gz != nil && kit.AcceptsGzip(r) {
		if z := gz(); z != nil {
			h.Set("Content-Encoding", "gzip")
			kit.AddVary(h, "Accept-Encoding")
			b = z
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method == http.MethodHead {
		return nil
	}
	_, err := w.Write(b)
	return err
}

// iiifManifest handles GET /iiif/{id}/manifest: the Manifest of a work.
func (s *Handler) iiifManifest(w http.ResponseWriter, r *http.Request) error {
	res, err := s.iiifWork(r, "manifest")
	if err != nil {
		return err
	}
	ctx := r.Context()
	store := s.deps.Storage
	key := s.deps.Base(r) + " " + string(res.ID)
	now := s.deps.Now()
	// anonymous callers (viewers on other sites) are served from the
	// cache (see iiif_cache.go); the others see what their roles allow
	cached := store != nil && !shelfmark.CallerFrom(ctx).Authenticated()
	var mark int64
	if cached {
		e, m, known, err := s.manifests.get(ctx, store, key, res.Version, now)
		if err != nil {
			return err
		}
		if e != nil {
			return s.writeIIIFAs(w, r, res, e.body, e.etag, s.lastModified(e.built), e.gzipped)
		}
		mark, cached = m, known
	}
	doc, built, err := s.buildManifest(r, res)
	if err != nil {
		return err
	}
	b, err := marshalManifest(doc, s.bufs.body())
	if canvases, ok := doc["items"].(*canvasList); ok {
		canvases.release() // copied into b
	}
	if err != nil {
		return err
	}
	if cached && built.complete {
		ids := s.deps.Resources.IDs()
		e := &iiifEntry{version: res.Version, body: b, etag: kit.BodyETag(b), built: s.deps.Now()}
		for _, id := range built.ids {
			if k, err := ids.Key(id); err == nil {
				e.keys = append(e.keys, k)
			}
		}
		for _, t := range built.dates {
			if t.After(now) && (e.expires.IsZero() || t.Before(e.expires)) {
				e.expires = t
			}
		}
		kept, err := s.manifests.put(ctx, store, key, mark, e)
		if err != nil {
			return err
		}
		if kept {
			return s.writeIIIFAs(w, r, res, b, e.etag, s.lastModified(e.built), nil)
		}
	}
	err = s.writeBuilt(w, r, res, b)
	s.bufs.putBody(b) // written (a writer keeps none of what it is given)
	return err
}

// lastModified is the Last-Modified of an answer unchanged since t: t,
// or when the handler was built if that is later; zero (none sent) until
// it has settled (kit.Settled).
func (s *Handler) lastModified(t time.Time) time.Time {
	if t.Before(s.since) {
		t = s.since
	}
	return kit.Settled(t, s.deps.Now())
}

// iiifBuilt is what a manifest was built from, for the cache: the ids of
// the work and its children, the embargo and lease dates among them, and
// whether every original was characterized (a manifest built before is
// not kept: characterization does not show in the change sequence).
type iiifBuilt struct {
	ids      []shelfmark.ID
	dates    []time.Time
	complete bool
}

// accessDates adds a resource's embargo and lease dates.
func (b *iiifBuilt) accessDates(res *shelfmark.Resource) {
	for _, t := range []*time.Time{res.Embargo, res.Lease} {
		if t != nil {
			b.dates = append(b.dates, *t)
		}
	}
}

// buildManifest builds a work's Manifest from its row and its children,
// read a page at a time (with their files, in one more read a page).
func (s *Handler) buildManifest(r *http.Request, res *shelfmark.Resource) (map[string]any, *iiifBuilt, error) {
	ctx := r.Context()
	built := &iiifBuilt{ids: []shelfmark.ID{res.ID}, complete: true}
	built.accessDates(res)
	base := s.deps.Base(r)
	self := base + "/iiif/" + string(res.ID) + "/manifest"
	m := map[string]any{
		"@context": Context,
		"id":       self,
		"type":     "Manifest",
		"label":    s.iiifTitle(res.Metadata, "work.untitled"),
		"homepage": []map[string]any{{"id": base + "/works/" + string(res.ID), "type": "Text", "format": "text/html",
			"label": s.iiifTitle(res.Metadata, "work.untitled")}},
		"service": iiifSearchServices(base, res.ID), // iiif_search.go
	}
	if md := s.iiifMetadata(res.Metadata); len(md) > 0 {
		m["metadata"] = md
	}
	if abs := labels.Literals(res.Metadata, false, "dcterms:abstract", "schema:abstract", "bibo:abstract", "dc:description", "dcterms:description", "schema:description"); len(abs) > 0 {
		m["summary"] = langMap{"none": {abs[0]}}
	}
	if lic := labels.FirstOf(labels.Literals(res.Metadata, true, "dcterms:license", "schema:license", "dcterms:rights", "dc:rights")); rightsIRI(lic) {
		m["rights"] = lic
	}
	if rs := s.requiredStatement(res.Metadata); rs != nil {
		m["requiredStatement"] = rs
	}
	canvases := &canvasList{bufs: &s.bufs} // written as they are made (iiif_json.go)
	images := false                        // a page has an image for the PDF (iiif_pdf.go)
	var thumbnail []iiifContent
	// one canvas made a page, written out and then made again for the
	// next (a book's pages would otherwise each leave one behind)
	var canvas iiifCanvasDoc
	err := s.eachChild(ctx, res.ID, true, func(it *shelfmark.Resource, n int, files []*shelfmark.Resource) error {
		built.ids = append(built.ids, it.ID)
		built.accessDates(it)
		if it.Kind != shelfmark.KindFileSet {
			return nil // a part that is a work has a manifest of its own
		}
		for _, f := range files {
			if f.File.Processed() && f.File.Format == nil {
				built.complete = false
			}
		}
		images = images || kit.PageJPEG(files) != nil
		c := &canvas
		s.iiifCanvas(c, base, self, it, n, files)
		more, err := s.pdfCanvases(ctx, base, c, it, files)
		if err != nil {
			return err
		}
		for _, c := range append([]*iiifCanvasDoc{c}, more...) {
			if thumbnail == nil && len(c.Thumbnail) > 0 {
				thumbnail = cloneContent(c.Thumbnail) // the first page's that has one
			}
			if err := canvases.add(c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	m["items"] = canvases
	if images {
		m["rendering"] = s.iiifRendering(base, res)
	}
	if thumbnail != nil {
		m["thumbnail"] = thumbnail
	}
	return m, built, nil
}

// iiifCanvasDoc is a Canvas; iiifAnnoPage, iiifAnno, iiifContent and
// iiifService its parts. A manifest lists a canvas per page, so these are
// structs: they encode several times faster than maps.
type iiifCanvasDoc struct {
	ID    string  `json:"id"`
	Type  string  `json:"type"`
	Label langMap `json:"label"`
	// numLabel, when set, is the label instead of Label: its message for
	// num (labelMap makes the map of it)
	numLabel *numberLabel
	num      int
	// title and titleLang, when title is set, are the label instead of
	// Label: {titleLang: [title]}, a page's own title, without a map a
	// page (labelMap makes the map of it)
	title, titleLang string
	// what Items, its annotation, its service and Thumbnail hold for a
	// canvas of one image (iiifCanvas): one allocation a canvas, not five
	pages    [1]iiifAnnoPage
	annos    [1]iiifAnno
	services [1]iiifService
	thumbs   [1]iiifContent
	seeAlsos [2]iiifSeeAlso // an hOCR and an ALTO
	// text is where iiifCanvas writes the canvas's ids before it makes
	// them one string, kept from one canvas to the next
	text      []byte
	Width     int            `json:"width,omitempty"`
	Height    int            `json:"height,omitempty"`
	Items     []iiifAnnoPage `json:"items"`
	Thumbnail []iiifContent  `json:"thumbnail,omitempty"`
	SeeAlso   []iiifSeeAlso  `json:"seeAlso,omitempty"`
}

type iiifAnnoPage struct {
	ID    string     `json:"id"`
	Type  string     `json:"type"`
	Items []iiifAnno `json:"items"`
}

type iiifAnno struct {
	ID         string      `json:"id"`
	Type       string      `json:"type"`
	Motivation string      `json:"motivation"`
	Body       iiifContent `json:"body"`
	Target     string      `json:"target"`
}

type iiifContent struct {
	ID      string        `json:"id"`
	Type    string        `json:"type"`
	Format  string        `json:"format"`
	Width   int           `json:"width,omitempty"`
	Height  int           `json:"height,omitempty"`
	Service []iiifService `json:"service,omitempty"`
}

type iiifService struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Profile string `json:"profile"`
}

// cloneContent copies content resources out of a canvas that is made
// again (their services are the canvas's own).
func cloneContent(list []iiifContent) []iiifContent {
	out := slices.Clone(list)
	for i := range out {
		out[i].Service = slices.Clone(out[i].Service)
	}
	return out
}

// iiifCanvas makes c the Canvas of one page: its image painted on it
// (from its image service once its tiles are made, else the access copy,
// else the original), sized by the original's characterization when it
// read one, with the page's thumbnail and OCR. Whatever c held is
// replaced.
func (s *Handler) iiifCanvas(c *iiifCanvasDoc, base, manifest string, it *shelfmark.Resource, n int, files []*shelfmark.Resource) {
	// the canvas's ids are made in c.text and then are slices of one
	// string: one allocation a canvas, not seven
	text := c.text[:0]
	text = append(append(append(text, strings.TrimSuffix(manifest, "/manifest")...), "/canvas/"...), it.ID...)
	cidEnd := len(text)
	*c = iiifCanvasDoc{Type: "Canvas"}
	key, num, nl := "work.page", it.Position, s.pageLabel
	if it.Position <= 0 {
		key, num, nl = "work.unordered", n, s.unorderedLabel
	}
	switch t, lang := labels.Title(it.Metadata, ""); {
	case t != "":
		c.title, c.titleLang = t, cmp.Or(lang, "none") // as iiifTitle's map
	case nl == nil:
		c.Label = s.iiifLabels(key, num)
	default:
		c.numLabel, c.num = nl, num // the message for num, written by appendJSON
	}
	var original, access, thumb, tiles *shelfmark.Resource
	var ocrFiles [2]*shelfmark.Resource
	ocr := ocrFiles[:0]
	for _, f := range files {
		switch f.File.Use {
		case shelfmark.UseOriginal, "":
			if original == nil {
				original = f
			}
		case shelfmark.UseAccess:
			if access == nil {
				access = f
			}
		case shelfmark.UseThumbnail:
			if thumb == nil {
				thumb = f
			}
		case shelfmark.UseTiles:
			if tiles == nil {
				tiles = f
			}
		case shelfmark.UseOCR, shelfmark.UseALTO:
			ocr = append(ocr, f)
		}
	}
	if original != nil && original.File.Format != nil && original.File.Format.Width > 0 && original.File.Format.Height > 0 {
		c.Width, c.Height = original.File.Format.Width, original.File.Format.Height
	}
	painted := access
	if painted == nil {
		painted = original
	}
	// the ids: the canvas's (written above) and its page's, its
	// painting's, the image service's and its full image's or the
	// painted file's, the thumbnail's
	text = append(text, "/page"...)
	pageEnd := len(text)
	paint := len(text)
	text = append(append(text, text[:cidEnd]...), "/painting"...)
	paintEnd := len(text)
	svc, svcEnd, full := len(text), 0, 0
	deep := tiles != nil && c.Width > 0
	switch {
	case deep:
		text = append(append(append(append(text, base...), "/iiif/"...), it.ID...), "/image"...)
		svcEnd = len(text)
		text = append(text, "/full/max/0/default.jpg"...)
		full = len(text)
	case painted != nil:
		text = kit.AppendContentURL(append(text, base...), painted.ID)
		full = len(text)
	}
	th := len(text)
	if thumb != nil {
		text = kit.AppendContentURL(append(text, base...), thumb.ID)
	}
	thEnd := len(text)
	var seeAlsoEnds [len(ocrFiles)]int
	seeAlso, seeAlsoEnd := len(text), seeAlsoEnds[:0]
	for _, f := range ocr {
		text = kit.AppendContentURL(append(text, base...), f.ID)
		seeAlsoEnd = append(seeAlsoEnd, len(text))
	}
	c.text = text
	ids := string(text)
	cid := ids[:cidEnd]
	c.ID = cid
	page := &c.pages[0]
	*page = iiifAnnoPage{ID: ids[:pageEnd], Type: "AnnotationPage", Items: c.annos[:0:1]}
	switch {
	case deep:
		// deep zoom: the page's image service (iiif_image.go)
		c.services[0] = iiifService{ID: ids[svc:svcEnd], Type: "ImageService3", Profile: ImageProfile}
		page.Items = append(page.Items, iiifAnno{ID: ids[paint:paintEnd], Type: "Annotation", Motivation: "painting", Target: cid,
			Body: iiifContent{ID: ids[svc:full], Type: "Image", Format: "image/jpeg", Service: c.services[:1:1]}})
	case painted != nil:
		mt := kit.FileMediaType(painted.File)
		body := iiifContent{ID: ids[svc:full], Type: iiifType(mt), Format: mt}
		if painted == original {
			body.Width, body.Height = c.Width, c.Height
		}
		page.Items = append(page.Items, iiifAnno{ID: ids[paint:paintEnd], Type: "Annotation", Motivation: "painting", Target: cid, Body: body})
	}
	c.Items = c.pages[:1:1]
	if thumb != nil {
		mt := kit.FileMediaType(thumb.File)
		c.thumbs[0] = iiifContent{ID: ids[th:thEnd], Type: iiifType(mt), Format: mt}
		c.Thumbnail = c.thumbs[:1:1]
	}
	if len(ocr) > 0 {
		c.SeeAlso = c.seeAlsos[:0]
		for i, f := range ocr {
			sa := s.ocrSeeAlso(f)
			sa.ID, seeAlso = ids[seeAlso:seeAlsoEnd[i]], seeAlsoEnd[i]
			c.SeeAlso = append(c.SeeAlso, sa)
		}
	}
}

// labelMap is c's label as a language map.
func (s *Handler) labelMap(c *iiifCanvasDoc) langMap {
	switch {
	case c.numLabel != nil:
		return s.iiifLabels(c.numLabel.key, c.num)
	case c.title != "":
		return langMap{c.titleLang: {c.title}}
	}
	return c.Label
}

// pdfCanvases makes a page whose original is a PDF with tiles one canvas
// per PDF page: it sizes c (the first page's canvas) and paints it from
// the first page's image service, and returns the canvases of the pages
// after it ({canvas}/n, labelled "…, PDF page n", each painted from its
// page's service). The pages' sizes are read from the tiles archive's
// directory (one read of a few kilobytes, then kept with the others).
// Anything else leaves c as it is and returns none.
func (s *Handler) pdfCanvases(ctx context.Context, base string, c *iiifCanvasDoc, it *shelfmark.Resource, files []*shelfmark.Resource) ([]*iiifCanvasDoc, error) {
	var original, tiles *shelfmark.Resource
	for _, f := range files {
		switch f.File.Use {
		case shelfmark.UseOriginal, "":
			if original == nil {
				original = f
			}
		case shelfmark.UseTiles:
			if tiles == nil {
				tiles = f
			}
		}
	}
	if original == nil || tiles == nil || kit.FileMediaType(original.File) != "application/pdf" {
		return nil, nil
	}
	idx, err := s.tiles.index(ctx, s.deps.Blobs, tiles.File)
	if err != nil {
		return nil, err
	}
	paint := func(c *iiifCanvasDoc, n int, pg *shelfmark.TileInfo) {
		svc := base + "/iiif/" + string(it.ID) + "~" + strconv.Itoa(n) + "/image"
		c.Width, c.Height = pg.Width, pg.Height
		c.Items = []iiifAnnoPage{{ID: c.ID + "/page", Type: "AnnotationPage", Items: []iiifAnno{{
			ID: c.ID + "/painting", Type: "Annotation", Motivation: "painting", Target: c.ID,
			Body: iiifContent{ID: svc + "/full/max/0/default.jpg", Type: "Image", Format: "image/jpeg",
				Service: []iiifService{{ID: svc, Type: "ImageService3", Profile: ImageProfile}}}}}}}
	}
	var out []*iiifCanvasDoc
	for i := range idx.info.Pages {
		pg := &idx.info.Pages[i]
		if i == 0 {
			paint(c, 1, pg)
			continue
		}
		more := &iiifCanvasDoc{ID: c.ID + "/" + strconv.Itoa(i+1), Type: "Canvas", Label: langMap{}}
		label := s.labelMap(c)
		for _, lang := range s.catalogs.Langs() {
			name := label[lang]
			if name == nil {
				name = label["none"]
			}
			if len(name) > 0 {
				more.Label[lang] = []string{labels.Translate(s.catalogs.Messages(lang), "iiif.pdfpage", name[0], i+1)}
			}
		}
		paint(more, i+1, pg)
		out = append(out, more)
	}
	return out, nil
}

// iiifType is the Presentation 3.0 type of content of a media type.
func iiifType(mediaType string) string {
	switch t, _, _ := strings.Cut(mediaType, "/"); t {
	case "image":
		return "Image"
	case "video":
		return "Video"
	case "audio":
		return "Sound"
	case "model":
		return "Model"
	case "text":
		return "Text"
	}
	if mediaType == "application/pdf" {
		return "Text"
	}
	return "Dataset"
}

// rightsIRI reports whether an IRI may be a manifest's rights: the
// specification takes Creative Commons licenses and RightsStatements.org
// statements (others go to the metadata only).
func rightsIRI(iri string) bool {
	u, err := url.Parse(iri)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return u.Host == "creativecommons.org" || u.Host == "rightsstatements.org"
}

// iiifMetadata is the metadata of a work as label/value pairs, labelled
// in every language of the catalogs.
func (s *Handler) iiifMetadata(stmts []shelfmark.Statement) []map[string]any {
	langs := s.catalogs.Langs()
	per := make([][]*labels.Field, len(langs))
	for i, lang := range langs {
		per[i] = labels.Fields(s.catalogs.Messages(lang), stmts)
	}
	out := make([]map[string]any, 0, len(per[0]))
	for j, f := range per[0] {
		label := langMap{}
		for i, lang := range langs {
			label[lang] = []string{per[i][j].Label}
		}
		value := langMap{}
		for _, v := range f.Values {
			lang := v.Lang
			if lang == "" {
				lang = "none"
			}
			value[lang] = append(value[lang], v.Text)
		}
		out = append(out, map[string]any{"label": label, "value": value})
	}
	return out
}

// requiredStatement is what a viewer must show with the work: its rights
// holder and its rights or license, when the metadata names them.
func (s *Handler) requiredStatement(stmts []shelfmark.Statement) map[string]any {
	parts := labels.Literals(stmts, false, "dcterms:rightsHolder", "schema:copyrightHolder")
	parts = append(parts, labels.Literals(stmts, true, "dc:rights", "dcterms:rights", "dcterms:license", "schema:license")...)
	if len(parts) == 0 {
		return nil
	}
	return map[string]any{"label": s.iiifLabels("iiif.attribution"), "value": langMap{"none": {strings.Join(parts, "; ")}}}
}

// iiifCollection handles GET /iiif/{id}/collection: one page of a
// collection's members the caller may read (works as Manifests,
// collections as Collections), and, when more follow, a last item that is
// the Collection of the next page (?after=).
func (s *Handler) iiifCollection(w http.ResponseWriter, r *http.Request) error {
	res, err := s.iiifReadable(r)
	if err != nil {
		return err
	}
	switch res.Kind {
	case shelfmark.KindCollection:
	case shelfmark.KindWork:
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a work, not a collection; its manifest is /iiif/%s/manifest.", res.ID, res.ID)
	default:
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a %s, not a collection; only collections are IIIF Collections.", res.ID, res.Kind)
	}
	after := r.URL.Query().Get("after")
	page, err := s.deps.Resources.ListMembers(r.Context(), res.ID, shelfmark.PageRequest{After: shelfmark.Cursor(after), Limit: CollectionPage, Metadata: true})
	if err != nil {
		return err
	}
	base := s.deps.Base(r)
	self := base + "/iiif/" + string(res.ID) + "/collection"
	id := self
	if after != "" {
		id += "?after=" + url.QueryEscape(after)
	}
	items := []map[string]any{}
	for _, it := range page.Items {
		switch it.Kind {
		case shelfmark.KindWork:
			items = append(items, map[string]any{"id": base + "/iiif/" + string(it.ID) + "/manifest", "type": "Manifest",
				"label": s.iiifTitle(it.Metadata, "work.untitled")})
		case shelfmark.KindCollection:
			items = append(items, map[string]any{"id": base + "/iiif/" + string(it.ID) + "/collection", "type": "Collection",
				"label": s.iiifTitle(it.Metadata, "read.untitled")})
		}
	}
	if page.Next != "" {
		items = append(items, map[string]any{"id": self + "?after=" + url.QueryEscape(string(page.Next)), "type": "Collection",
			"label": s.iiifLabels("iiif.more")})
	}
	doc := map[string]any{
		"@context": Context,
		"id":       id,
		"type":     "Collection",
		"label":    s.iiifTitle(res.Metadata, "read.untitled"),
		"homepage": []map[string]any{{"id": base + "/collections/" + string(res.ID), "type": "Text", "format": "text/html",
			"label": s.iiifTitle(res.Metadata, "read.untitled")}},
		"items": items,
	}
	if md := s.iiifMetadata(res.Metadata); len(md) > 0 {
		doc["metadata"] = md
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return s.writeIIIF(w, r, res, b, time.Time{})
}
