package iiif

// This file serves the IIIF Image API 3.0 (https://iiif.io/api/image/3.0/)
// for every page image: the image service of a page (file set) is
// /iiif/{page}/image. It is a level 2 service built on a pyramid made
// once: the derive job cuts each page image into a pyramid of 512-pixel
// JPEG tiles with libvips (shelfmark.TileInfo), stored as one archive. A
// request for a tile the pyramid holds reads the tile's bytes from the
// archive at their offset, and a request for the whole image at a listed
// size is the page's thumbnail or access copy: neither decodes an image.
// Any other region, size, rotation, quality or format is composed from the
// tiles that cover it (iiif_compose.go), within the limits info.json
// states. Every request checks that the caller may read the page now, so
// a page that becomes private stops being served at once, from the cache
// of composed images too.

import (
	"archive/zip"
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

const (
	// ImageContext is the JSON-LD context of Image API 3.0.
	ImageContext = "http://iiif.io/api/image/3/context.json"
	// ImageProfile is the compliance level every image service claims.
	ImageProfile = "level2"
	// imageProfileURI is the level's URI, sent in a Link rel="profile".
	imageProfileURI = "http://iiif.io/api/image/3/level2.json"
	// tileIndexCache is how many pyramids' archive directories a server
	// keeps parsed (a few kilobytes each).
	tileIndexCache = 4096
)

// iiifImageRoutes are the routes of this file.
func (s *Handler) iiifImageRoutes() []kit.Route {
	return []kit.Route{
		{Method: "GET", Pattern: "/iiif/{id}/image", Handle: s.iiifImageBase},
		{Method: "GET", Pattern: "/iiif/{id}/image/info.json", Handle: s.iiifImageInfo},
		{Method: "GET", Pattern: "/iiif/{id}/image/{region}/{size}/{rotation}/{file}", Handle: s.iiifImage},
	}
}

// iiifPage is a page image as the caller may read it: its file set and
// the files that serve it.
type iiifPage struct {
	res                  *shelfmark.Resource
	public               bool
	tiles, thumb, access *shelfmark.Resource
	// pdfPage is the page of a PDF the service shows (the id's "~n"), 0
	// for an image
	pdfPage int
	// service is the service's id after /iiif/: the file set's id, and
	// "~n" for a PDF's page
	service string
}

// pageOfID splits an image service's id, "{file set}" or "{file set}~n"
// (page n of a PDF).
func pageOfID(raw string) (shelfmark.ID, int, error) {
	id, page, paged := strings.Cut(raw, "~")
	if !paged {
		return shelfmark.ID(id), 0, shelfmark.ID(id).Check()
	}
	n, err := strconv.Atoi(page)
	if err != nil || n < 1 || n > 1_000_000 || page != strconv.Itoa(n) {
		return "", 0, shelfmark.Errorf(shelfmark.EINVALID, "%q is not {page} or {page}~n, n a page number of a PDF from 1.", raw)
	}
	return shelfmark.ID(id), n, shelfmark.ID(id).Check()
}

// iiifFindPage finds the page an image route names and its files.
func (s *Handler) iiifFindPage(r *http.Request) (*iiifPage, error) {
	id, pdfPage, err := pageOfID(r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	res, err := s.deps.Resources.FindResource(r.Context(), id)
	if err != nil {
		return nil, err
	}
	switch {
	case res.Kind == shelfmark.KindWork:
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a work; each of its pages has an image service, listed in /iiif/%s/manifest.", res.ID, res.ID)
	case res.Kind != shelfmark.KindFileSet || res.Parent == "":
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a %s, not a page of a work; only pages have image services.", res.ID, res.Kind)
	}
	ctx := r.Context()
	files, err := s.deps.Resources.ChildFiles(ctx, res.Parent, []shelfmark.ID{res.ID})
	if err != nil {
		return nil, err
	}
	p := &iiifPage{res: res, pdfPage: pdfPage, service: r.PathValue("id")}
	for _, f := range files[res.ID] {
		switch f.File.Use {
		case shelfmark.UseTiles:
			p.tiles = f
		case shelfmark.UseThumbnail:
			p.thumb = f
		case shelfmark.UseAccess:
			p.access = f
		}
	}
	if p.tiles == nil {
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "Page %s has no image tiles (yet): they are made in the background from a page image after it is stored.", res.ID)
	}
	p.public = s.readableByAnyone(ctx, p.tiles)
	return p, nil
}

// pyramid is the part of the archive the service shows: the image's
// pyramid, or a PDF page's (its info, and the prefix of its entries).
func (p *iiifPage) pyramid(idx *tileIndex) (*shelfmark.TileInfo, string, error) {
	switch {
	case len(idx.info.Pages) == 0 && p.pdfPage == 0:
		return &idx.info, "", nil
	case len(idx.info.Pages) == 0:
		return nil, "", shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is not a PDF; its image service is /iiif/%s/image.", p.res.ID, p.res.ID)
	case p.pdfPage == 0:
		return nil, "", shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is a PDF; each of its pages has an image service, /iiif/%s~1/image for the first.", p.res.ID, p.res.ID)
	case p.pdfPage > len(idx.info.Pages):
		return nil, "", shelfmark.Errorf(shelfmark.ENOTFOUND, "Page %d of the PDF of %s has no image service: %d of its pages have one.", p.pdfPage, p.res.ID, len(idx.info.Pages))
	}
	return &idx.info.Pages[p.pdfPage-1], strconv.Itoa(p.pdfPage) + "/", nil
}

// readableByAnyone reports whether a page's image (its tiles, as the
// caller read them) is in public view: an anonymous caller found it, or
// its effective visibility (its page's, its work's and the page image's
// it was made from) is public now.
func (s *Handler) readableByAnyone(ctx context.Context, tiles *shelfmark.Resource) bool {
	return !shelfmark.CallerFrom(ctx).Authenticated() || tiles.VisibilityAt(s.deps.Now()) == shelfmark.Public
}

// iiifImageBase handles GET /iiif/{id}/image: a redirect to its
// info.json, as the specification asks.
func (s *Handler) iiifImageBase(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.iiifFindPage(r); err != nil {
		return err
	}
	http.Redirect(w, r, s.deps.Base(r)+"/iiif/"+r.PathValue("id")+"/image/info.json", http.StatusSeeOther)
	return nil
}

// iiifImageInfo handles GET /iiif/{id}/image/info.json.
func (s *Handler) iiifImageInfo(w http.ResponseWriter, r *http.Request) error {
	p, err := s.iiifFindPage(r)
	if err != nil {
		return err
	}
	idx, err := s.tiles.index(r.Context(), s.deps.Blobs, p.tiles.File)
	if err != nil {
		return err
	}
	pi, prefix, err := p.pyramid(idx)
	if err != nil {
		return err
	}
	lim := limitsOf(pi, s.limits)
	gray, err := s.isGray(r.Context(), p, idx, pi, prefix)
	if err != nil {
		return err
	}
	qualities := []string{"color", "gray", "bitonal"}
	if gray {
		qualities = qualities[1:] // the spec: no color for an image without
	}
	info := map[string]any{
		"@context":  ImageContext,
		"id":        s.deps.Base(r) + "/iiif/" + p.service + "/image",
		"type":      "ImageService3",
		"protocol":  "http://iiif.io/api/image",
		"profile":   ImageProfile,
		"width":     pi.Width,
		"height":    pi.Height,
		"tiles":     pi.Tiles,
		"maxWidth":  lim.maxWidth,
		"maxHeight": lim.maxHeight,
		"maxArea":   lim.maxArea,
		// beyond level 2: png and jpg are level 2's formats, so no extraFormats
		"extraQualities": qualities,
		"extraFeatures":  []string{"canonicalLinkHeader", "mirroring", "profileLinkHeader"},
	}
	if sizes := infoSizes(pi); len(sizes) > 0 {
		info["sizes"] = sizes
	}
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	ct := "application/json"
	if strings.Contains(r.Header.Get("Accept"), "application/ld+json") {
		ct = `application/ld+json;profile="` + ImageContext + `"`
	}
	h := w.Header()
	kit.AddVary(h, "Accept")
	imageHeaders(h, r, p.public)
	// the document is made from the pyramid's file alone (and the base
	// URL, fixed since the server started)
	if kit.NotModified(w, r, kit.Validators{ETag: kit.BodyETag([]byte(ct), b), LastModified: s.lastModified(p.tiles.Modified)}) {
		return nil
	}
	h.Set("Content-Type", ct)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	if r.Method == http.MethodHead {
		return nil
	}
	_, err = w.Write(b)
	return err
}

// infoSizes are the whole-image sizes info.json lists: the pyramid's
// (thumbnail and access copy), unless OpenSeadragon would misread them.
// It takes a list of as many sizes as the pyramid has levels above its
// full size, or one more, for the sizes of its levels, and then cuts
// tiles that do not exist; so such a list is left out (the sizes are
// still served, and the tiles alone are what deep zoom needs).
func infoSizes(info *shelfmark.TileInfo) []map[string]int {
	levels := 0 // OpenSeadragon's maxLevel: log2 of the largest scale factor
	for _, ts := range info.Tiles {
		for _, f := range ts.ScaleFactors {
			for l := 0; 1<<l <= f; l++ {
				levels = max(levels, l)
			}
		}
	}
	if n := len(info.Sizes); len(info.Tiles) > 0 && (n == levels || n == levels+1) {
		return nil
	}
	out := make([]map[string]int, 0, len(info.Sizes))
	for _, sz := range info.Sizes {
		out = append(out, map[string]int{"width": sz.Width, "height": sz.Height})
	}
	return out
}

// iiifImage handles GET /iiif/{id}/image/{region}/{size}/{rotation}/{file}:
// a stored tile or listed size as stored, anything else composed.
func (s *Handler) iiifImage(w http.ResponseWriter, r *http.Request) error {
	p, err := s.iiifFindPage(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	idx, err := s.tiles.index(ctx, s.deps.Blobs, p.tiles.File)
	if err != nil {
		return err
	}
	pi, prefix, err := p.pyramid(idx)
	if err != nil {
		return err
	}
	q, err := parseImage(pi, limitsOf(pi, s.limits), r.PathValue("region"), r.PathValue("size"), r.PathValue("rotation"), r.PathValue("file"))
	if err != nil {
		return err
	}
	canon := q.canonical(pi)
	h := w.Header()
	svc := s.deps.Base(r) + "/iiif/" + p.service + "/image"
	h.Set("Link", "<"+svc+"/"+canon+`>;rel="canonical", <`+imageProfileURI+`>;rel="profile"`)
	if q.quality == "default" && q.format == "jpg" && q.degrees == 0 && !q.mirror {
		if ok, err := s.serveStored(w, r, p, idx, pi, prefix, q); ok || err != nil {
			return err
		}
	}
	return s.serveComposed(w, r, p, idx, pi, prefix, q, canon)
}

// serveStored answers a request that is exactly a tile of the pyramid or
// a listed size of the whole image with its stored bytes, undecoded;
// false when it is neither (or the page lacks the size's file).
func (s *Handler) serveStored(w http.ResponseWriter, r *http.Request, p *iiifPage, idx *tileIndex, pi *shelfmark.TileInfo, prefix string, q *imageRequest) (bool, error) {
	var (
		sha       string
		off, size int64
		etag      string
		modified  time.Time
		use       string
		entry     string
	)
	for _, c := range q.sizes {
		if q.whole(pi) {
			for _, ls := range pi.Sizes {
				if ls.Width == c[0] && ls.Height == c[1] {
					use = ls.Use
				}
			}
		}
		if use != "" {
			break
		}
		name := fmt.Sprintf("%s%d,%d,%d,%d/%d,%d/0/default.jpg", prefix, q.region.x, q.region.y, q.region.w, q.region.h, c[0], c[1])
		if idx.has(name) {
			entry = name
			break
		}
	}
	if use == shelfmark.UsePage {
		entry = prefix + shelfmark.TilePageName
	}
	switch {
	case entry != "" && idx.has(entry):
		e := idx.entries[entry]
		// a tile is the pyramid's bytes the URL names: unchanged since
		// the pyramid's row was
		sha, off, size, modified = p.tiles.File.SHA256, e.offset, e.size, s.lastModified(p.tiles.Modified)
		etag = fmt.Sprintf(`"%s.%x"`, sha[:24], off)
	case use == shelfmark.UseThumbnail && p.thumb != nil:
		// which file serves a whole image depends on the files the page
		// has (one removed leaves no trace): no Last-Modified
		sha, size, etag = p.thumb.File.SHA256, p.thumb.File.Size, `"`+p.thumb.File.SHA256[:32]+`"`
	case use == shelfmark.UseAccess && p.access != nil:
		sha, size, etag = p.access.File.SHA256, p.access.File.Size, `"`+p.access.File.SHA256[:32]+`"`
	default:
		return false, nil
	}
	h := w.Header()
	imageHeaders(h, r, p.public)
	if kit.NotModified(w, r, kit.Validators{ETag: etag, LastModified: modified}) {
		return true, nil
	}
	rc, err := s.deps.Blobs.Open(r.Context(), sha)
	if err != nil {
		return true, err
	}
	defer rc.Close()
	h.Set("Content-Type", "image/jpeg")
	// ServeContent answers Range (and If-Range) from the headers set
	http.ServeContent(w, r, "", modified, io.NewSectionReader(kit.ReaderAt(rc), off, size))
	return true, nil
}

// serveComposed answers a request by composing its image from the
// pyramid, or from the cache of composed images. The caller's access to
// the page was checked before (iiifFindPage), so the cache is looked in
// only for a caller who may read the page; its key is the page's service,
// its pyramid's digest and the canonical request. The image is made from
// the pyramid alone, so it is as new as the pyramid's row.
func (s *Handler) serveComposed(w http.ResponseWriter, r *http.Request, p *iiifPage, idx *tileIndex, pi *shelfmark.TileInfo, prefix string, q *imageRequest, canon string) error {
	sha := p.tiles.File.SHA256
	key := p.service + "/" + sha + "/" + canon
	sum := sha256.Sum256([]byte(key))
	etag := `"` + sha[:24] + "-" + hex.EncodeToString(sum[:8]) + `"`
	modified := s.lastModified(p.tiles.Modified)
	h := w.Header()
	imageHeaders(h, r, p.public)
	if kit.NotModified(w, r, kit.Validators{ETag: etag, LastModified: modified}) {
		return nil
	}
	ct := "image/jpeg"
	if q.format == "png" {
		ct = "image/png"
	}
	body, err := s.images.image(r.Context(), key, func() ([]byte, error) {
		a, c, err := s.openPyramid(r.Context(), p, idx, prefix)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		b, _, err := compose(pi, a, q)
		return b, err
	})
	if err != nil {
		return err
	}
	h.Set("Content-Type", ct)
	http.ServeContent(w, r, "", modified, bytes.NewReader(body))
	return nil
}

// imageHeaders sets the headers every Image API answer shares: any
// origin may read a public page's (viewers on other sites need it). The
// answer to an anonymous caller (who reads public pages only) is public; a
// public page's, read by a signed-in caller, is the same for everyone but
// not marked public; the others are private to the caller. Every answer is
// revalidated (it is cheap: an unchanged one is 304 without opening the
// file), so a page made private stops being shown from caches at once.
func imageHeaders(h http.Header, r *http.Request, public bool) {
	switch {
	case !public:
		kit.SetCache(h, kit.CachePrivate, 0)
		return
	case shelfmark.CallerFrom(r.Context()).Authenticated():
		kit.SetCache(h, kit.CacheRevalidate, 0)
	default:
		kit.SetCache(h, kit.CachePublic, 0)
	}
	h.Set("Access-Control-Allow-Origin", "*")
}

// tileEntry is where a tile's bytes lie in its archive.
type tileEntry struct{ offset, size int64 }

// tileIndex is a pyramid archive's directory, parsed.
type tileIndex struct {
	sha     string
	info    shelfmark.TileInfo
	entries map[string]tileEntry
	// gray tells, by pyramid prefix, whether its tiles are grayscale
	// (isGray reads it once)
	mu   sync.Mutex
	gray map[string]bool
}

func (t *tileIndex) has(entry string) bool { _, ok := t.entries[entry]; return ok }

// tileIndexes keeps the parsed directories of recently used pyramids,
// least recently used out first. A pyramid's blob never changes (its name
// is its digest), so an entry never goes stale.
type tileIndexes struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *tileIndex, most recent first
	bySHA map[string]*list.Element
}

func newTileIndexes(n int) *tileIndexes {
	return &tileIndexes{max: n, order: list.New(), bySHA: map[string]*list.Element{}}
}

// index returns the parsed directory of a pyramid file, reading it from
// the blob store when it is not kept.
func (c *tileIndexes) index(ctx context.Context, blobs shelfmark.BlobStore, f *shelfmark.File) (*tileIndex, error) {
	c.mu.Lock()
	if el, ok := c.bySHA[f.SHA256]; ok {
		c.order.MoveToFront(el)
		c.mu.Unlock()
		return el.Value.(*tileIndex), nil
	}
	c.mu.Unlock()
	idx, err := readTileIndex(ctx, blobs, f)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.bySHA[f.SHA256]; ok {
		return el.Value.(*tileIndex), nil
	}
	c.bySHA[f.SHA256] = c.order.PushFront(idx)
	for c.order.Len() > c.max {
		last := c.order.Back()
		delete(c.bySHA, last.Value.(*tileIndex).sha)
		c.order.Remove(last)
	}
	return idx, nil
}

// readTileIndex parses a pyramid archive's directory and info entry.
func readTileIndex(ctx context.Context, blobs shelfmark.BlobStore, f *shelfmark.File) (*tileIndex, error) {
	rc, err := blobs.Open(ctx, f.SHA256)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	zr, err := zip.NewReader(kit.ReaderAt(rc), f.Size)
	if err != nil {
		return nil, fmt.Errorf("tiles %s: %w", f.SHA256, err)
	}
	idx := &tileIndex{sha: f.SHA256, entries: make(map[string]tileEntry, len(zr.File))}
	found := false
	for _, zf := range zr.File {
		if zf.Method != zip.Store {
			continue // only stored entries are served from their offset
		}
		off, err := zf.DataOffset()
		if err != nil {
			return nil, fmt.Errorf("tiles %s: %w", f.SHA256, err)
		}
		if zf.Name == shelfmark.TileInfoName {
			b := make([]byte, min(zf.UncompressedSize64, 1<<20))
			if _, err := kit.ReaderAt(rc).ReadAt(b, off); err != nil {
				return nil, fmt.Errorf("tiles %s: %w", f.SHA256, err)
			}
			if err := json.Unmarshal(b, &idx.info); err != nil {
				return nil, fmt.Errorf("tiles %s: %w", f.SHA256, err)
			}
			found = true
			continue
		}
		idx.entries[zf.Name] = tileEntry{offset: off, size: int64(zf.UncompressedSize64)}
	}
	if !found || idx.info.Width <= 0 || idx.info.Height <= 0 {
		return nil, fmt.Errorf("tiles %s: no %s in the archive", f.SHA256, shelfmark.TileInfoName)
	}
	return idx, nil
}
