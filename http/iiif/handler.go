// Package iiif serves the IIIF face of the repository: the Presentation
// API 3.0 documents of works and collections, the Image API 3.0 services
// of page images, a work as one PDF, and the Content Search API (1 and 2)
// inside a book. Every read goes through the repository with the
// request's caller on its context, so the engine's access policy decides
// what is shown; what the caller may not read is 404, as in the REST API.
package iiif

import (
	"sync"
	"time"

	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/labels"
)

// Handler serves the IIIF routes. It keeps four caches of its own: the
// manifests built for anonymous callers (iiif_cache.go), the words of OCR
// files searched inside books (iiif_search.go), the parsed directories
// of page images' tile pyramids (iiif_image.go) and the images composed
// from them (iiif_compose.go). Build it with New; it is safe for
// concurrent use.
type Handler struct {
	deps     kit.Deps
	catalogs *labels.Catalogs
	// the manifests kept for anonymous callers (see iiif_cache.go)
	manifests iiifCache
	// the byte buffers of built manifests, kept for the next (iiif_json.go)
	bufs manifestBuffers
	// the gzip writers and buffers of built manifests (iiif_gzip.go)
	gzips gzipWriters
	// the memory the pages of books are read into, kept for the next page
	// (eachChild): of *shelfmark.PageBuffer
	pageBufs sync.Pool
	// the words of OCR files searched inside books (see iiif_search.go)
	ocrWords ocrCache
	// the parsed directories of page images' tile pyramids (see iiif_image.go)
	tiles *tileIndexes
	// composes the Image API's images that are not stored, and keeps them
	// (see iiif_compose.go)
	images *composer
	// the server's limits on a composed image, before a pyramid narrows them
	limits imageLimits
	// the labels of a page and of an unordered child in every language,
	// cut around their number (iiif_label.go); nil when a catalog's
	// message is not of that form
	pageLabel, unorderedLabel *numberLabel
	// the labels of a page's hOCR and ALTO in every language, as JSON
	// (iiif_ocr.go)
	ocrLabel, altoLabel []byte
	// since is when the handler was built: no answer's Last-Modified is
	// earlier, since what the server is configured with (its base URL)
	// and how it writes its answers may have changed then
	since time.Time
}

// Options are the IIIF face's settings.
type Options struct {
	// ImageCacheBytes is the size of the cache of images the Image API
	// composes (regions, sizes, rotations and qualities that are not a
	// stored tile or a listed size): 0 is ImageCacheBytes, below 0 none
	// is kept. It costs that much memory at most; a hit saves a compose
	// (10 to 60 ms of a core for a viewer's region).
	ImageCacheBytes int64
}

// New builds the IIIF face from the shell's dependencies, the message
// catalogs its labels are written in (every language of them) and its
// options.
func New(deps kit.Deps, catalogs *labels.Catalogs, opts Options) *Handler {
	cache := opts.ImageCacheBytes
	switch {
	case cache == 0:
		cache = ImageCacheBytes
	case cache < 0:
		cache = 0
	}
	s := &Handler{deps: deps, catalogs: catalogs, tiles: newTileIndexes(tileIndexCache), images: newComposer(cache),
		limits:    imageLimits{maxWidth: imageMaxSide, maxHeight: imageMaxSide, maxArea: imageMaxArea},
		pageLabel: newNumberLabel(catalogs, "work.page"), unorderedLabel: newNumberLabel(catalogs, "work.unordered")}
	s.ocrLabel, s.altoLabel = s.iiifLabels("iiif.ocr").appendJSON(nil), s.iiifLabels("iiif.alto").appendJSON(nil)
	if deps.Now != nil {
		s.since = deps.Now()
	}
	return s
}

// Routes are the IIIF routes: the Presentation documents, the PDF, the
// content search and the Image API.
func (s *Handler) Routes() []kit.Route {
	return append(s.iiifRoutes(), s.iiifImageRoutes()...)
}

// OCRReads is how many OCR files the search inside books has read from
// the blob store (its cache's misses) since the handler was built.
func (s *Handler) OCRReads() int64 { return s.ocrWords.fileReads() }

// ImagesComposed is how many images the Image API has composed since the
// handler was built (the cache's misses), and the most at the same time
// (never more than GOMAXPROCS).
func (s *Handler) ImagesComposed() (count, atOnce int) {
	s.images.mu.Lock()
	defer s.images.mu.Unlock()
	return s.images.count, s.images.peak
}

// ImageCacheSize is how many bytes of composed images the handler keeps now.
func (s *Handler) ImageCacheSize() int64 { return s.images.cache.bytes() }

// ForgetOCR empties the cache of OCR words, so the next searches read
// their files again (the count of OCRReads goes on).
func (s *Handler) ForgetOCR() { s.ocrWords.forget() }
