package kit

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/shelfmark/shelfmark"
)

// Deps is what a face is given by the shell instead of reaching into one
// server: the repository's services, the logger, the public URL and the
// clock. The shell fills every field (Logger and Now never nil); a face
// keeps a copy and reads it without locking, since nothing changes it
// after the shell has built the faces.
type Deps struct {
	// Resources is the repository; every read and write of a face goes
	// through it, with the request's caller on the context, so the
	// engine's access policy decides.
	Resources shelfmark.ResourceService
	// Blobs keeps file bytes.
	Blobs shelfmark.BlobStore
	// Storage is the database behind Resources (the change sequence, for
	// caches that follow it).
	Storage shelfmark.Storage
	// Accounts resolves credentials and serves accounts; nil without
	// accounts.
	Accounts shelfmark.AccountService
	// Jobs is the background job queue; nil without one.
	Jobs shelfmark.JobQueue
	// Logger receives what a face reports beside its answers.
	Logger *slog.Logger
	// BaseURL is the public URL of the server without a trailing slash;
	// empty: taken from each request (Base).
	BaseURL string
	// Now is the clock every face reads time from.
	Now func() time.Time
	// SearchFacets is the repository's list of search facets, in the
	// order they are shown (shelfmark.SearchFacet); a search counts and
	// filters by its metadata facets.
	SearchFacets []shelfmark.SearchFacet
}

// Base is the public URL prefix of the server for a request: BaseURL when
// set, else the request's scheme and Host. It allocates only without
// BaseURL.
func (d *Deps) Base(r *http.Request) string {
	if d.BaseURL != "" {
		return d.BaseURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}
