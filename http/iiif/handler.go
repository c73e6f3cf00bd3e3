// Package iiif serves the IIIF face of the repository: the Presentation
// API 3.0 documents of works and collections, the Image API 3.0 services
// of page images, a work as one PDF, and the Content Search API (1 and 2)
// inside a book. Every read goes through the repository with the
// request's caller on its context, so the engine's access policy decides
// what is shown; what the caller may not read is 404, as in the REST API.
package iiif

import (
	"time"

	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/labels"
)

// Handler serves the IIIF routes. It keeps three caches of its own: the
// manifests built for anonymous callers (iiif_cache.go), the words of OCR
// files searched inside books (iiif_search.go) and the parsed directories
// of page images' tile pyramids (iiif_image.go). Build it with New; it is
// safe for concurrent use.
type Handler struct {
	deps     kit.Deps
	catalogs *labels.Catalogs
	// the manifests kept for anonymous callers (see iiif_cache.go)
	manifests iiifCache
	// the words of OCR files searched inside books (see iiif_search.go)
	ocrWords ocrCache
	// the parsed directories of page images' tile pyramids (see iiif_image.go)
	tiles *tileIndexes
	// since is when the handler was built: no answer's Last-Modified is
	// earlier, since what the server is configured with (its base URL)
	// and how it writes its answers may have changed then
	since time.Time
}

// New builds the IIIF face from the shell's dependencies and the message
// catalogs its labels are written in (every language of them).
func New(deps kit.Deps, catalogs *labels.Catalogs) *Handler {
	s := &Handler{deps: deps, catalogs: catalogs, tiles: newTileIndexes(tileIndexCache)}
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

// ForgetOCR empties the cache of OCR words, so the next searches read
// their files again (the count of OCRReads goes on).
func (s *Handler) ForgetOCR() { s.ocrWords.forget() }
