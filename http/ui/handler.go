// Package ui serves Shelfmark's web interface: server-rendered HTML pages
// for reading, depositing, editing and administering the repository, the
// forms they post, their style sheet, scripts and message catalogs, and
// the bulk ingests started from the interface. Its templates and static
// files sit beside the handlers (templates/, static/, locales/) and are
// embedded in the binary. Every page calls the same engine operations as
// the REST API, with the request's caller on its context, so the engine's
// access policy decides what a page shows and does.
package ui

import (
	"context"
	"github.com/shelfmark/shelfmark/http/admission"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/labels"
	"github.com/shelfmark/shelfmark/preserve"
	"github.com/shelfmark/shelfmark/warc"
)

// Backlog is the back-pressure of job queues on uploads, as the dashboard
// reads it (shelfmark.BacklogGate).
type Backlog interface {
	// Limit is queue's backlog limit (0: none).
	Limit(queue string) int64
	// Over reports whether uploads wait for queue now.
	Over(queue string) bool
	// Refused counts the uploads refused since the start, by queue.
	Refused() map[string]int64
}

// Options is what the shell hands the interface beside kit.Deps: the
// limits of forms and bulk ingests, and the few services the shell keeps
// (sign-in, the upload quotas, the web archive routes, the job metrics).
// SignIn, Uploads and WebArchive must be set; the limits are taken as
// given (the shell fills in their defaults).
type Options struct {
	// MaxBodyBytes caps a form's fields; MaxUploadBytes a deposited file.
	MaxBodyBytes, MaxUploadBytes int64
	// StagingDir is where bulk ingests keep what a run was given: a
	// directory per server process, made on first use and removed by
	// Close, and in it one per run.
	StagingDir string
	// ImportRoots are the server directories a bulk ingest may take a
	// manifest's files from; none: only uploaded zips.
	ImportRoots []string
	// MaxBulkUploadBytes caps the upload of a bulk ingest,
	// MaxBulkExpandBytes what its zip holds unpacked and MaxZipRatio how
	// far an entry or the archive may expand (past 1 MiB).
	MaxBulkUploadBytes, MaxBulkExpandBytes, MaxZipRatio int64
	// MaxBulkPreviews caps the bulk ingests staged on this server,
	// MaxBulkPreviewsPerUser a user's.
	MaxBulkPreviews, MaxBulkPreviewsPerUser int
	// SignIn opens and ends the sessions of the sign-in form.
	SignIn SignIn
	// SingleSignOn reports whether the sign-in page offers single sign-on
	// (/auth/oidc/login, served by the shell).
	SingleSignOn bool
	// Uploads keeps the account of the bytes users send before a work
	// names them.
	Uploads Uploads
	// WebArchive is what the web archive pages share with the web archive
	// routes.
	WebArchive WebArchive
	// JobSeconds is the histogram of finished jobs by queue and outcome,
	// which the administrators' dashboard reads its rates from (nil: no
	// rates).
	JobSeconds prometheus.Collector
	// Admission, when set, reads the state of the server's admission of
	// requests, which the dashboard shows (nil: not shown).
	Admission func() []admission.Stats
	// AdmissionShared, when set, reads the state of the budget that the
	// expensive classes share for anonymous callers, which the dashboard
	// shows beside Admission's table.
	AdmissionShared func() admission.Stats
	// Backlog, when set, is the backlog limit of each job queue
	// (shelfmark.BacklogGate), which the dashboard shows with each queue:
	// the limit, whether uploads wait for the queue now, and how many
	// it has refused.
	Backlog Backlog
	// History, when set, is the preservation copy's history, which a
	// work's History page shows (work_history.go); nil: the page says the
	// server keeps no copy.
	History *preserve.History
	// Robots, when set, is served as /robots.txt in place of the default
	// (robots.go), as it is (serve's --robots-file refuses a file larger
	// than MaxRobotsBytes).
	Robots []byte
	// SiteName is the repository's name, shown in the header of every
	// page, in each page's title and as the home page's heading (empty:
	// DefaultSiteName).
	SiteName string
	// Institution is the name of the institution that runs the
	// repository, shown in the footer of every page (empty: none shown).
	Institution string
}

// DefaultSiteName is the repository's name when Options.SiteName is
// empty.
const DefaultSiteName = "Shelfmark"

// Defaults of the bulk ingest limits of Options, which the shell fills
// in for a limit left at zero.
const (
	DefaultMaxZipRatio            = 100
	DefaultMaxBulkPreviews        = 32
	DefaultMaxBulkPreviewsPerUser = 4
)

// SignIn is the shell's password sign-in, which counts failures against
// the client's address and the user name (the brute-force limiter).
type SignIn interface {
	// PasswordLogin checks a name and password and opens a session: its
	// secret and caller. A wrong pair is EUNAUTHORIZED, too many failures
	// ETOOMANY.
	PasswordLogin(r *http.Request, name, password string) (string, *shelfmark.Caller, error)
	// EndSession revokes the session the request's cookie names, if any,
	// and clears the cookie.
	EndSession(w http.ResponseWriter, r *http.Request) error
}

// Uploads is the shell's account of the bytes users send before a work
// names them, and of the upload slots the server serves at once; its
// Keep and Discard serve a bulk run's ingest (ingest.Uploads).
type Uploads interface {
	// Store stores body (size bytes, -1 unknown) as the caller's upload
	// under the caller's quotas and opts.MaxSize, and returns the time
	// the store ended (for Discard).
	Store(ctx context.Context, body io.Reader, size int64, opts shelfmark.PutOptions) (*shelfmark.Blob, time.Time, error)
	// Keep records blobs a bulk run stored as the caller's uploads (the
	// staged files already counted towards the quota).
	Keep(ctx context.Context, blobs []*shelfmark.Blob, storedAt time.Time) error
	// Discard forgets the caller's uploads of shas and removes the bytes
	// nothing else holds; a failure is logged.
	Discard(ctx context.Context, shas []string, storedAt time.Time)
	// Room is how many more bytes a caller with usage u may store, or
	// EQUOTA when it may store none.
	Room(c *shelfmark.Caller, u shelfmark.UploadUsage) (int64, error)
	// OverQuota is the EQUOTA error of usage u past a quota, or nil.
	OverQuota(c *shelfmark.Caller, u shelfmark.UploadUsage) error
	// Admit takes one of the server's upload slots without waiting:
	// release gives it back. Its error (EUNAVAILABLE, with retry_after)
	// says that all slots are taken or the background is too far behind.
	Admit(ctx context.Context) (release func(), err error)
}

// WebIndex is what the web archive pages read of the repository's web
// index (shelfmark.Repository has it); every read is the caller's.
type WebIndex interface {
	WebCaptures(ctx context.Context, q shelfmark.WebCaptureQuery) (*shelfmark.WebCapturePage, error)
	WebCapture(ctx context.Context, id int64) (*shelfmark.Capture, error)
	WebLinks(ctx context.Context, q shelfmark.WebLinkQuery) (*shelfmark.WebLinkInfo, error)
	WebTop(ctx context.Context, domain string, n int) ([]shelfmark.WebCount, error)
	MayReadWebLinks(ctx context.Context) (bool, error)
	WebFileState(ctx context.Context, file shelfmark.ID) (*shelfmark.WebFileRow, error)
	WebFileCaptures(ctx context.Context, file shelfmark.ID, after string, limit int) (*shelfmark.WebCapturePage, error)
}

// WebArchive is what the web archive pages share with the web archive
// routes of the API: the index, the reading of a capture's record, and
// the reading of the parameters both take, so that a page and the API
// read a URL, a domain or a capture alike.
type WebArchive interface {
	// Index is the repository's web index; EUNAVAILABLE when it keeps
	// none.
	Index() (WebIndex, error)
	// Open opens the WARC record of a capture (one read of its file's
	// row, then of the record's bytes); call done when finished with it.
	Open(ctx context.Context, c *shelfmark.Capture) (rec *warc.Record, done func(), err error)
	// CaptureQuery reads a capture lookup (url, match, from, to, cursor,
	// limit) as the API's does.
	CaptureQuery(v url.Values) (shelfmark.WebCaptureQuery, error)
	// DomainParam reads the domain parameter name.
	DomainParam(name, raw string) (string, error)
	// Canonical reads and canonicalises the URL parameter name.
	Canonical(name, raw string) (shelfmark.WebURL, error)
	// CaptureID reads a capture's id from a path.
	CaptureID(s string) (int64, error)
}

// Handler serves the interface's routes. Build it with New; it is safe
// for concurrent use.
type Handler struct {
	deps kit.Deps
	opts Options
	log  *slog.Logger
	// the templates, catalogs and static files (see ui.go)
	ui *ui
	// the administrators' dashboard's samples (see admin_stats.go)
	dash adminState
	// the bulk ingests started from the interface (see bulk_runs.go)
	bulk bulkRuns
	// the changes of many works started from the workspace (see
	// workspace_runs.go)
	runs workspaceRuns
}

// New builds the interface: it parses the embedded templates and message
// catalogs (an error there is a fault of the build, which the tests
// find).
func New(deps kit.Deps, opts Options) (*Handler, error) {
	u, err := newUI()
	if err != nil {
		return nil, err
	}
	s := &Handler{deps: deps, opts: opts, log: deps.Logger, ui: u}
	s.bulk.staged, s.bulk.userStaged, s.bulk.now = opts.MaxBulkPreviews, opts.MaxBulkPreviewsPerUser, deps.Now
	s.runs.now = deps.Now
	return s, nil
}

// Catalogs are the interface's message catalogs (IIIF labels its
// manifests from them too).
func (s *Handler) Catalogs() *labels.Catalogs { return s.ui.catalogs }

// StagedBytes is what the bulk ingests staged on this server hold for
// user (mine) and for everyone (all), for the upload quotas; one lock of
// the runs, no I/O.
func (s *Handler) StagedBytes(user int64) (mine, all int64) { return s.bulk.stagedBytes(user) }

// EndStreams ends the dashboard's event streams (a stream would otherwise
// hold a shutdown up for minutes); call it before waiting for the
// requests in flight.
func (s *Handler) EndStreams() { s.dash.stop() }

// Close stops the bulk ingests in progress, removing what they staged,
// and the workspace's changes of many works; it waits for them until ctx
// ends.
func (s *Handler) Close(ctx context.Context) {
	s.runs.close(ctx)
	s.bulk.close(ctx)
}

// now is the time by the shell's clock.
func (s *Handler) now() time.Time { return s.deps.Now() }

// bulkPages are the Handler's bulk ingest pages (bulk*.go), a type of
// their own so that each part of the interface reads as one.
type bulkPages struct{ *Handler }

// adminPages are the Handler's administration pages (admin*.go).
type adminPages struct{ *Handler }
