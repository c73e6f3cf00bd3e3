package ui

// This file serves /robots.txt (RFC 9309): what crawlers may read. The
// default keeps them out of what is endless or expensive to crawl and
// adds nothing a sitemap does not list better (the search page with its
// facets and paging, search inside a book, the book as one PDF, the
// versions of a work, the web archive's replay and queries, OAI-PMH, the
// REST API, sign-in, deposit and administration) and points them at the
// sitemap (work_sitemap.go), by absolute URL (the base URL, else the
// request's host). An operator's file (Options.Robots, serve's
// --robots-file) is served in its place as it is. It is the same for
// every caller and names nothing private.

import (
	"net/http"
	"strconv"
	"time"

	"github.com/shelfmark/shelfmark/http/kit"
)

// robotsMaxAge is how long any cache may keep /robots.txt.
const robotsMaxAge = time.Hour

// MaxRobotsBytes caps an operator's robots.txt: crawlers read no more
// (RFC 9309 asks them to read at least 500 KiB).
const MaxRobotsBytes = 500 << 10

// defaultRobots is the default robots.txt without its Sitemap line. The
// paths use RFC 9309's "*" (any characters), which the major crawlers
// read.
const defaultRobots = "User-agent: *\n" +
	"Disallow: /search\n" +
	"Disallow: /iiif/*/search/\n" +
	"Disallow: /iiif/*/pdf\n" +
	"Disallow: /works/*/history\n" +
	"Disallow: /web?\n" +
	"Disallow: /web/captures/\n" +
	"Disallow: /web/domains/\n" +
	"Disallow: /*?lang=\n" +
	"Disallow: /*&lang=\n" +
	"Disallow: /oai\n" +
	"Disallow: /api/\n" +
	"Disallow: /auth/\n" +
	"Disallow: /login\n" +
	"Disallow: /deposit\n" +
	"Disallow: /bulk\n" +
	"Disallow: /admin\n"

// robotsBody is the robots.txt of a request: the operator's, else the
// default with the sitemap's absolute URL.
func (s *Handler) robotsBody(r *http.Request) []byte {
	if s.opts.Robots != nil {
		return s.opts.Robots
	}
	return []byte(defaultRobots + "\nSitemap: " + s.deps.Base(r) + "/sitemap.xml\n")
}

// robots handles GET /robots.txt.
func (s *Handler) robots(w http.ResponseWriter, r *http.Request) error {
	body := s.robotsBody(r)
	h := w.Header()
	kit.SetCache(h, kit.CachePublic, robotsMaxAge)
	if kit.NotModified(w, r, kit.Validators{ETag: kit.BodyETag(body)}) {
		return nil
	}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	_, err := w.Write(body)
	return err
}
