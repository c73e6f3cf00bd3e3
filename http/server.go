// Package http is Shelfmark's web shell: it serves the REST API's OpenAPI
// document and sign-in routes, health and readiness probes and Prometheus
// metrics over net/http, and composes the faces of the packages beneath it
// (the REST API of package api, the web interface of package ui, IIIF, the
// web archive), wrapping every route in one envelope.
package http

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/admission"
	"github.com/shelfmark/shelfmark/http/api"
	"github.com/shelfmark/shelfmark/http/iiif"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/ui"
	"github.com/shelfmark/shelfmark/http/webarchive"
	"github.com/shelfmark/shelfmark/preserve"
)

// Options configure a Server.
type Options struct {
	// Resources is the repository.
	Resources shelfmark.ResourceService
	// Blobs keeps file bytes.
	Blobs shelfmark.BlobStore
	// BlobRedirect, when above 0 and Blobs is a shelfmark.BlobPresigner,
	// answers a full download (GET without Range) of a file's content
	// with a 307 to a presigned URL valid this long, instead of streaming
	// the bytes through the server.
	BlobRedirect time.Duration
	// Storage is probed by /readyz and reported in /metrics.
	Storage shelfmark.Storage
	// Preservation, when set, is the preservation copy, whose state
	// /readyz reports without ever failing on it: the copy catches up
	// once its storage root is back, and nothing else depends on it.
	Preservation shelfmark.ReadinessChecker
	// History, when set, serves the preservation copy's versions of each
	// resource (Memento, RFC 7089; see api/versions.go); nil: the
	// versions routes answer 404 and Accept-Datetime is ignored.
	History *preserve.History
	// Usage, when set, counts the uses of works (usage.go): the pages,
	// files, PDFs and ZIPs readers are sent.
	Usage *shelfmark.UsageCounter
	// Versions, when set, reads the versions of objects in the
	// preservation copy, which the resources' events list.
	Versions shelfmark.PreservedVersions
	// Logger receives one line per failed request (and per request at
	// debug level).
	Logger *slog.Logger
	// BaseURL is the public URL of the server (for example
	// "https://repo.example.org"), used for resource IRIs; when empty it
	// is taken from each request's Host.
	BaseURL string
	// Robots, when set, is served as /robots.txt in place of the default
	// (ui/robots.go), as it is.
	Robots []byte
	// SiteName and Institution name the repository and the institution
	// that runs it on the web interface's pages (ui.Options).
	SiteName, Institution string
	// SearchFacets is the repository's list of search facets
	// (shelfmark.SearchFacet: the search page and GET /api/v1/search
	// count and filter by them); nil is shelfmark.DefaultSearchFacets.
	// The search indexer must be given the same list.
	SearchFacets []shelfmark.SearchFacet
	// MaxBodyBytes caps metadata request bodies (default 16 MiB).
	MaxBodyBytes int64
	// MaxUploadBytes caps uploaded files (default 4 GiB).
	MaxUploadBytes int64
	// MaxParseBytes caps the bytes of metadata and JSON bodies read and
	// parsed at once, across requests (default 64 MiB, and never less than
	// MaxBodyBytes); a body that cannot be admitted within ParseWait
	// (default 5 s) is 503 with Retry-After. See parse.go.
	MaxParseBytes int64
	ParseWait     time.Duration
	// IIIFImageCacheBytes is the size of the cache of images the IIIF
	// Image API composes from page pyramids (default 64 MiB; below 0,
	// none): memory spent to answer a repeated region without decoding
	// its tiles again.
	IIIFImageCacheBytes int64
	// ExternalContentAllow lists the URL prefixes external content
	// (Link rel=ExternalContent) may point into, as
	// shelfmark.CheckExternalURL reads them; empty refuses all external
	// content. It is checked when a link is registered and again each
	// time its content is asked for.
	ExternalContentAllow []string
	// Metrics, when set, is used instead of a new set (so the engine's
	// commit observer and the server share one registry).
	Metrics *Metrics
	// OAI, when set, answers OAI-PMH requests (GET and POST) at /oai
	// (gzipped for clients that accept it, as API responses are).
	OAI http.Handler
	// Jobs, when set, is the background job queue behind /api/v1/jobs.
	Jobs shelfmark.JobQueue
	// Accounts resolves credentials into callers and serves the account
	// routes (login, tokens, roles, audit). Without it every request is
	// anonymous and a credential is refused.
	Accounts shelfmark.AccountService
	// CORSOrigins lists the origins (scheme://host[:port]) whose pages may
	// call the API from a browser (with a token; cookies are not sent
	// across sites). Default none: only the server's own origin.
	CORSOrigins []string
	// AuthFailures, when set, shares the brute-force limiter's failures
	// with the other servers of the database (see auth_shared.go); nil:
	// this server counts alone, in memory.
	AuthFailures shelfmark.AuthFailures
	// TrustedProxies are the addresses of reverse proxies (a load
	// balancer) whose X-Forwarded-For names the client: the brute-force
	// limiter counts per client address, and behind a proxy without this
	// every client would share the proxy's. None by default: the header is
	// ignored, since any client may send one.
	TrustedProxies []netip.Prefix
	// MaxAuthFailures is how many failed logins or token checks a client
	// address (or a user name) may make before each further attempt must
	// wait, 1 s doubled at every failure up to 15 min (default 10).
	MaxAuthFailures int
	// MaxConcurrentUploads caps the uploads (POST /api/v1/blobs and
	// /api/v1/resources/{id}/files) served at once; beyond it the answer
	// is 503 with Retry-After (default 32).
	MaxConcurrentUploads int
	// Backlog, when set, refuses those uploads and the deposit form's
	// files with 503 and Retry-After while a job queue is over its limit
	// (back-pressure that keeps the background up with ingest).
	Backlog *shelfmark.BacklogGate
	// ReadHeaderTimeout bounds the reading of a request's headers
	// (default 10 s); MaxHeaderBytes their size (default 64 KiB).
	ReadHeaderTimeout time.Duration
	MaxHeaderBytes    int
	// IdleTimeout closes a keep-alive connection idle this long (default
	// 120 s).
	IdleTimeout time.Duration
	// WriteTimeout bounds the writing of a response other than file
	// content (default 2 min, counted from the end of the request body).
	WriteTimeout time.Duration
	// BodyTimeout and MinBodyRate: a request body must come at MinBodyRate
	// bytes a second or more (default 4 KiB/s) once BodyTimeout has passed
	// (default 30 s); a slower client is cut off with 408.
	BodyTimeout time.Duration
	MinBodyRate int64
	// OIDC sets up sign-in through an OpenID Connect provider
	// (institutional single sign-on) at /auth/oidc/login; off without an
	// issuer.
	OIDC OIDCOptions
	// StagingDir is where the web interface's bulk ingest keeps what a
	// run was given (its manifest, the files of an uploaded zip): a
	// directory per server process, made on first use and removed by
	// Shutdown, and in it one per run, removed when the run ends or is
	// forgotten. Default: the system's temporary directory.
	StagingDir string
	// ImportRoots are the server directories a bulk ingest from the web
	// interface may take a manifest's files from (a path inside one of
	// them, symbolic links resolved); none: only uploaded zips.
	ImportRoots []string
	// MaxBulkUploadBytes caps the upload of a bulk ingest (manifest and
	// zip together; default MaxUploadBytes); MaxBulkExpandBytes caps what
	// its zip holds unpacked (default 2 × MaxBulkUploadBytes). Past either
	// the upload is 413 and nothing stays staged.
	MaxBulkUploadBytes int64
	MaxBulkExpandBytes int64
	// MaxZipRatio caps how far a bulk ingest's zip may expand: an entry,
	// and the whole archive, may unpack to at most this many times their
	// compressed size (anything up to 1 MiB is not judged), by the sizes
	// the zip declares and by the bytes actually unpacked (default 100).
	// Past it the upload is 413 and nothing stays staged.
	MaxZipRatio int64
	// MaxBulkPreviews caps the bulk ingests staged on this server (being
	// checked, or previews waiting to be started; default 32): beyond it
	// an upload is 507 (quota). MaxBulkPreviewsPerUser caps a user's
	// (default 4): a new upload discards the user's oldest previews.
	MaxBulkPreviews        int
	MaxBulkPreviewsPerUser int
	// UploadQuotaBytes caps, per user, the bytes held for them that no
	// file names yet: their uploads not yet named (kept a day at most)
	// and their bulk ingests staged on this server (default 32 GiB);
	// UploadQuotaFiles caps the number of those uploads (default
	// 100,000); UploadQuotaTotalBytes caps the bytes of all users
	// together (default 128 GiB). Past any, an upload or staging is 507
	// with code quota, refused before its body is read when the quota is
	// already reached, and its bytes removed at once when it goes past.
	UploadQuotaBytes      int64
	UploadQuotaFiles      int64
	UploadQuotaTotalBytes int64
	// Authenticator, when set, resolves every request's caller in place
	// of the credentials the server reads itself (bearer tokens and
	// session cookies). An embedder that authenticates elsewhere sets it;
	// shelfmark serve never does. Its answer is the caller for every
	// access decision, so it carries all of an authentication's weight.
	Authenticator Authenticator
	// Now is the clock the server reads time from (default time.Now): the
	// age of sessions and caches, embargoes and leases, request times.
	Now func() time.Time
	// Admission sets the budgets requests are admitted against, by what
	// they cost and who asks (see admission.go and package admission);
	// unset values take admission.Defaults for Cores processors (default
	// the processors Go uses).
	Admission admission.Settings
	Cores     int
	// RobotAgents are patterns (regular expressions, matched without
	// regard to case) of user agents treated as robots beside those of
	// the COUNTER robots list.
	RobotAgents []string
}

// Authenticator resolves the caller of a request (Options.Authenticator).
// An error is answered as the request's error; its code decides the
// status (EUNAUTHORIZED is 401).
type Authenticator interface {
	Authenticate(r *http.Request) (*shelfmark.Caller, error)
}

// Server is the HTTP face of the repository.
type Server struct {
	opts    Options
	log     *slog.Logger
	mux     *http.ServeMux
	metrics *Metrics
	srv     *http.Server
	space   spaceWatch
	cors    *cors
	limiter *limiter
	uploads chan struct{}
	parse   *bodyGate
	// the ids of requests (kit.RequestIDs)
	ids *kit.RequestIDs
	// single sign-on (see oidc.go): nil when off
	oidc    *oidcClient
	oidcErr error
	// the web interface (package ui; see uishell.go)
	ui *ui.Handler
	// what the faces are given (see faces.go)
	deps kit.Deps
	// the IIIF face (package iiif)
	iiif *iiif.Handler
	// the REST API routes of package api
	api *api.Handler
	// the web archive routes of the API (package webarchive)
	webarchive *webarchive.Handler
	// the read replica behind Storage, if any (see replica.go)
	replica replicaRouting
	// admission of requests by cost and client (see admission.go)
	admission *admission.Controller
	robots    *admission.Robots
}

// NewServer builds a Server and its routes.
func NewServer(opts Options) *Server {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 16 << 20
	}
	if opts.MaxUploadBytes <= 0 {
		opts.MaxUploadBytes = 4 << 30
	}
	uploadDefaults(&opts)
	opts.BaseURL = strings.TrimSuffix(opts.BaseURL, "/")
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics(opts.Storage, opts.Now)
	}
	opts.ReadHeaderTimeout = orDuration(opts.ReadHeaderTimeout, defaultReadHeaderTimeout)
	opts.IdleTimeout = orDuration(opts.IdleTimeout, defaultIdleTimeout)
	opts.WriteTimeout = orDuration(opts.WriteTimeout, defaultWriteTimeout)
	opts.BodyTimeout = orDuration(opts.BodyTimeout, defaultBodyTimeout)
	if opts.MinBodyRate <= 0 {
		opts.MinBodyRate = defaultMinBodyRate
	}
	if opts.MaxHeaderBytes <= 0 {
		opts.MaxHeaderBytes = defaultMaxHeaderBytes
	}
	if opts.MaxConcurrentUploads <= 0 {
		opts.MaxConcurrentUploads = defaultMaxConcurrentUploads
	}
	c, err := newCORS(opts.CORSOrigins, opts.BaseURL)
	if err != nil {
		// CheckOrigins lets callers refuse such origins first.
		opts.Logger.Error("CORS origins ignored", "err", err)
		c, _ = newCORS(nil, opts.BaseURL)
	}
	if opts.MaxParseBytes <= 0 {
		opts.MaxParseBytes = defaultMaxParseBytes
	}
	opts.MaxParseBytes = max(opts.MaxParseBytes, opts.MaxBodyBytes) // one body at the cap always fits
	opts.ParseWait = orDuration(opts.ParseWait, defaultParseWait)
	s := &Server{opts: opts, log: opts.Logger, mux: http.NewServeMux(), metrics: opts.Metrics, cors: c,
		limiter: newSharedLimiter(opts.MaxAuthFailures, opts.AuthFailures, opts.Logger, opts.Now), uploads: make(chan struct{}, opts.MaxConcurrentUploads), ids: kit.NewRequestIDs(),
		parse: newBodyGate(opts.MaxParseBytes, opts.ParseWait)}
	s.setupOIDC()
	s.setupAdmission()
	s.deps = kit.Deps{Resources: opts.Resources, Blobs: opts.Blobs, Storage: opts.Storage, Accounts: opts.Accounts, Jobs: opts.Jobs,
		Logger: opts.Logger, BaseURL: opts.BaseURL, Now: opts.Now, SearchFacets: opts.SearchFacets}
	if s.deps.SearchFacets == nil {
		s.deps.SearchFacets = shelfmark.DefaultSearchFacets()
	}
	s.webarchive = webarchive.New(s.deps)
	u, err := s.newUIHandler()
	if err != nil {
		panic(err) // the embedded templates are faulty: a fault of the build
	}
	s.ui = u
	s.iiif = iiif.New(s.deps, u.Catalogs(), iiif.Options{ImageCacheBytes: opts.IIIFImageCacheBytes})
	s.api = api.New(s.deps, api.Options{MaxBodyBytes: opts.MaxBodyBytes, MaxUploadBytes: opts.MaxUploadBytes,
		ExternalContentAllow: opts.ExternalContentAllow, BlobRedirect: opts.BlobRedirect, Uploads: uploads{s},
		History: opts.History, Versions: opts.Versions})
	gz := newGzip() // see gzip.go
	s.replica = newReplicaRouting(opts.Storage)
	for _, rt := range s.routes() {
		h := s.counting(rt.method, rt.pattern, s.replicaRead(rt.method, rt.pattern, rt.handler))
		if compressed(rt.pattern) {
			h = gz(h)
		}
		if !streamsBody(rt.method, rt.pattern) {
			h = s.parsing(h)
		}
		s.mux.Handle(rt.method+" "+rt.pattern, s.admitting(rt.method, rt.pattern, h))
	}
	for _, rt := range s.uiRoutes() {
		h := gz(s.counting(rt.method, rt.pattern, s.replicaRead(rt.method, rt.pattern, rt.handler)))
		if !streamsBody(rt.method, rt.pattern) {
			h = s.parsing(h)
		}
		s.mux.Handle(rt.method+" "+rt.pattern, s.admitting(rt.method, rt.pattern, h))
	}
	if opts.OAI != nil {
		s.mux.Handle("/oai", s.admitting("", "/oai", gz(s.replicaRead("", "/oai", opts.OAI))))
	}
	s.mux.Handle("/", s.wrap(s.unmatched))
	return s
}

// Metrics returns the server's metrics, so the engine's commit observer can
// feed them.
func (s *Server) Metrics() *Metrics { return s.metrics }

// route is one entry of the API; the same table registers the handlers and
// is checked against the OpenAPI document in tests.
type route struct {
	method, pattern string
	handler         http.Handler
}

func (s *Server) routes() []route {
	h := func(f func(http.ResponseWriter, *http.Request) error) http.Handler { return s.wrap(f) }
	rs := []route{
		{"GET", "/healthz", h(s.healthz)},
		{"GET", "/readyz", h(s.readyz)},
		{"GET", "/metrics", s.admin(s.metrics.Handler())},
		{"GET", "/api/v1/openapi.json", h(s.openapi)},
		{"POST", "/api/v1/login", h(s.login)},
		{"POST", "/api/v1/logout", h(s.logout)},
		{"GET", "/api/v1/me", h(s.me)},
		{"GET", "/auth/oidc/login", h(s.oidcLogin)},
		{"GET", "/auth/oidc/callback", h(s.oidcCallback)},
	}
	rs = append(rs, s.faceRoutes(s.api.Routes())...)          // the REST API's own package
	return append(rs, s.faceRoutes(s.webarchive.Routes())...) // web archives (package webarchive)
}

// ServeHTTP implements http.Handler. Every request passes the security
// envelope before any route: security headers, a request id, CORS, the
// refusal of cross-site writes and of bodies without a media type, the
// pace of its body, and its caller (from its credential, or anonymous),
// which it carries on its context to the handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := s.now()
	h := w.Header()
	securityHeaders(h, isContent(r))
	id := s.ids.Of(r)
	h.Set("X-Request-Id", id)
	s.pace(w, r, start)
	answered, err := s.cors.apply(w, r)
	if answered {
		return
	}
	if err == nil {
		err = s.cors.crossSite(r)
	}
	var c *shelfmark.Caller
	if err == nil {
		c, err = s.authenticate(r, id)
	}
	if err == nil {
		if err = mayWrite(r, c); err == nil {
			err = needMediaType(r)
		}
		// A method no route takes is answered 405 (or the path 404) by
		// the mux, whoever asks and however (looked up only then: a
		// request that passes costs one match, not two).
		if err != nil {
			if _, pattern := s.mux.Handler(r); pattern == "/" || pattern == "" {
				err = nil
			}
		}
	}
	if err != nil {
		s.refuse(w, r, err, start)
		return
	}
	s.mux.ServeHTTP(s.positionWriter(w, r), r.WithContext(shelfmark.WithCaller(r.Context(), c)))
}

// refuse answers a request the envelope or a route's guard turned away.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, err error, start time.Time) {
	status := kit.WriteError(w, r, err)
	if status >= 500 && status != http.StatusServiceUnavailable { // a 503 is the server's choice, not its fault
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	pattern := r.Pattern
	if pattern == "" {
		pattern = "refused"
	}
	s.metrics.observeRequest(r.Method, pattern, status, s.now().Sub(start))
}

// Serve accepts connections on ln until Shutdown, handing requests to
// handler (s itself, or a mux that wraps it). Headers must come within
// ReadHeaderTimeout and fit MaxHeaderBytes; bodies keep the pace
// ServeHTTP sets.
func (s *Server) Serve(ln net.Listener, handler http.Handler) error {
	s.srv = &http.Server{Handler: handler, ReadHeaderTimeout: s.opts.ReadHeaderTimeout, IdleTimeout: s.opts.IdleTimeout,
		MaxHeaderBytes: s.opts.MaxHeaderBytes, ErrorLog: slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)}
	err := s.srv.Serve(ln)
	if err == http.ErrServerClosed {
		return nil
	}
	return err
}

// DebugHandler serves /metrics and Go's profiles at /debug/pprof/ without
// authentication, for a listener of its own that only operators reach
// (serve --metrics-addr 127.0.0.1:9090); the API's own /metrics is for
// administrators.
func (s *Server) DebugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metrics.Handler())
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}

// CheckOrigins reports an origin that is not scheme://host[:port], for
// Options.CORSOrigins.
func CheckOrigins(origins []string) error {
	_, err := newCORS(origins, "")
	return err
}

func orDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Shutdown stops accepting requests and waits for those in flight.
func (s *Server) Shutdown(ctx context.Context) error {
	s.ui.EndStreams()     // the dashboard's event streams end (package ui)
	defer s.ui.Close(ctx) // bulk ingests in progress stop
	if s.srv == nil {
		return nil
	}
	return s.srv.Shutdown(ctx)
}

// statusWriter remembers the status code for metrics and logs.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// wrap turns a handler that returns an error into an http.Handler that
// writes the error as JSON, and records metrics.
func (s *Server) wrap(f func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := s.now()
		sw := &statusWriter{ResponseWriter: w}
		err := f(sw, r)
		s.space.observe(r, err)
		if err != nil {
			if sw.status != 0 {
				s.log.Warn("error after response started", "method", r.Method, "path", r.URL.Path, "err", err)
			} else {
				status := kit.WriteError(sw, r, err)
				switch {
				case r.Context().Err() != nil && errors.Is(err, context.Canceled):
					// the client hung up: not a fault of the server
					s.log.Debug("client went away", "method", r.Method, "path", r.URL.Path)
				case status >= 500:
					s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "err", err)
				}
			}
		}
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		s.metrics.observeRequest(r.Method, r.Pattern, sw.status, s.now().Sub(start))
		if s.log.Enabled(r.Context(), slog.LevelDebug) {
			s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "status", sw.status, "duration", s.now().Sub(start))
		}
	})
}

// unmatched answers requests no route takes: 405 with Allow when the path
// exists for other methods, 404 otherwise; both as JSON.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request) error {
	var allow []string
	for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		if slices.Contains(allow, "GET") {
			allow = append(allow, "HEAD")
		}
		w.Header().Set("Allow", strings.Join(allow, ", "))
		return &shelfmark.Error{Code: EMETHOD, Message: fmt.Sprintf("%s is not allowed on %s; use %s.", r.Method, r.URL.Path, strings.Join(allow, ", ")),
			Details: map[string]any{"allow": allow}}
	}
	if wantsHTML(r) {
		return s.ui.Error(w, r, shelfmark.Errorf(shelfmark.ENOTFOUND, "There is no page at %s.", r.URL.Path))
	}
	return shelfmark.Errorf(shelfmark.ENOTFOUND, "No such path: %s %s. The API is under /api/v1 (see /api/v1/openapi.json).", r.Method, r.URL.Path)
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, err := w.Write([]byte("ok\n"))
	return err
}

// now is the time by the server's clock (Options.Now).
func (s *Server) now() time.Time { return s.opts.Now() }
