package ui

// This file holds how the interface's reading pages (home, collection,
// work) are revalidated and cached. A page's entity tag is the hash of
// the page as rendered (kit.BodyETag), without the viewer's style nonce,
// which is fresh in every response: so the tag changes whenever anything
// the page shows does (the work, a page or file of it, a collection it is
// in, the caller's view of them, its language, the release's templates),
// and a page whose rows have not changed is answered 304 without its
// bytes. The page is still read and rendered to know its tag: what a 304
// saves is the transfer, and the crawler's or cache's work. These pages
// send no Last-Modified: what they list can change without any time the
// page reads moving (a member made private leaves the list and leaves no
// trace in the rows still shown), so If-Modified-Since alone is never
// answered 304 here.
//
// A page built for an anonymous caller about what is in public view is
// public for pageMaxAge (a shared cache may keep it that long and then
// revalidates it); an anonymous page that sets a cookie (a language
// chosen with ?lang=, a session that ended) is private; a signed-in
// caller's page is no-store, as every other page is, and still carries
// its own tag (the page names the caller and carries its form token).

import (
	"bytes"
	"net/http"
	"time"

	"github.com/shelfmark/shelfmark/http/kit"
)

// pageMaxAge is how long a shared cache may keep a public page before it
// revalidates it: a page made private, or changed, may be shown from such
// a cache this long after.
const pageMaxAge = 2 * time.Minute

// pageVary are the request headers every page differs by: the caller
// (session cookie or token), and the language (its cookie, or
// Accept-Language).
var pageVary = []string{"Cookie", "Authorization", "Accept-Language"}

// revalidated sets the validator and Cache-Control of a cached page whose
// rendered bytes are body, and answers 304 (reporting true) when the
// request's If-None-Match names it.
func (s *Handler) revalidated(w http.ResponseWriter, r *http.Request, p *uiPage, body []byte) bool {
	h := w.Header()
	switch {
	case p.Caller.Authenticated():
		kit.SetCache(h, kit.CacheNoStore, 0)
	case p.public:
		kit.SetCache(h, kit.CachePublic, pageMaxAge)
	default:
		kit.SetCache(h, kit.CachePrivate, 0)
	}
	return kit.NotModified(w, r, kit.Validators{ETag: pageETag(body, p.StyleNonce)})
}

// pageETag is the entity tag of a rendered page: the hash of its bytes
// without the style nonce (random in every response, and no part of what
// the page shows).
func pageETag(body []byte, nonce string) string {
	if nonce == "" {
		return kit.BodyETag(body)
	}
	return kit.BodyETag(bytes.Split(body, []byte(nonce))...)
}
