package setup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
	shttp "github.com/shelfmark/shelfmark/http"
	"github.com/shelfmark/shelfmark/http/ui"
	"github.com/shelfmark/shelfmark/libjpeg"
	"github.com/shelfmark/shelfmark/oai"
	"github.com/shelfmark/shelfmark/postgres"
	"github.com/shelfmark/shelfmark/sqlite"
)

// usageFlushEvery is how often a server writes the uses it counted.
const usageFlushEvery = 10 * time.Second

// ServeConfig holds the settings of `shelfmark serve`, which ServeCommand's
// flags set; only Extra is set by other code.
// defaultIIIFImageCache is the size of the IIIF Image API's cache of
// composed images when --iiif-image-cache is not given (or is empty).
const defaultIIIFImageCache = "64MiB"

type ServeConfig struct {
	addr, data, database, durability, baseURL, maxUpload, logLevel string
	// iiifImageCache is the size of the IIIF Image API's cache of
	// composed images (--iiif-image-cache)
	iiifImageCache        string
	robotsFile            string
	siteName, institution string
	searchFacets          string
	dbMaxConns            int
	pprof                 bool
	metricsAddr           string
	corsOrigins           []string
	externalAllow         []string
	trustedProxies        []string
	importRoots           []string
	blobGC                time.Duration
	content               BlobFlags
	oai                   oaiConfig
	workers               bool
	webLinksPublic        bool
	committers            int
	jobs                  WorkerConfig
	sso                   shttp.OIDCOptions
	replica               replicaFlags      // see replica.go
	uploads               uploadFlags       // see uploads.go
	admission             admissionFlags    // see admission.go
	preservation          preservationFlags // see preservation.go
	fixity                FixityFlags       // see fixity.go
	// Extra, when set, starts more listeners once the server is made,
	// from its options; they stop when ctx ends. No flag of serve sets
	// it: it is the comparison listener of shelfmark-bench rest-server
	// (cmd/shelfmark-bench/restserver.go).
	Extra func(ctx context.Context, opts shttp.Options, log *slog.Logger) error
}

// oaiConfig holds the OAI-PMH settings of `shelfmark serve`.
type oaiConfig struct {
	name, domain string
	emails       []string
	pageSize     int
}

// ServeCommand returns the serve command and the settings its flags set;
// the command serves until its context ends.
func ServeCommand() (*cobra.Command, *ServeConfig) {
	c := &ServeConfig{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the repository (REST API, metrics) until interrupted",
		Long: `Run the repository. With no flags it listens on 127.0.0.1:8080 and keeps
everything in ./shelfmark-data (SQLite database and content store).

With --database postgres://… the metadata lives in PostgreSQL, and several
serve processes may share it; files still go to --data (a shared volume).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := ApplyEnv(cmd.Flags()); err != nil {
				return err
			}
			return serve(cmd.Context(), *c)
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.addr, "addr", "127.0.0.1:8080", "address to listen on (use 0.0.0.0:8080 to accept connections from other machines)")
	f.StringVar(&c.data, "data", "shelfmark-data", "directory for the SQLite database and the content store")
	f.StringVar(&c.database, "database", "", "PostgreSQL URL (postgres://user@host/db); empty means SQLite in --data")
	f.StringVar(&c.durability, "durability", "safe", `"safe": every acknowledged write is on disk; "relaxed": faster, but a power loss (SQLite) or crash (PostgreSQL) may lose the last acknowledged writes`)
	f.StringVar(&c.baseURL, "base-url", "", "public URL of this server, used in resource IRIs (default: from each request's Host)")
	f.StringVar(&c.robotsFile, "robots-file", "", "a text file served as /robots.txt as it is, in place of the default (which keeps crawlers out of search, the API and other endless or expensive pages, and names the sitemap); at most 500 KiB")
	f.StringVar(&c.maxUpload, "max-upload", "4GiB", "largest file accepted by upload")
	f.StringVar(&c.iiifImageCache, "iiif-image-cache", defaultIIIFImageCache, "memory for the IIIF Image API's cache of composed images (regions, sizes, rotations and qualities that are not a stored tile or a listed size; a repeated one is then a copy, not 10 to 60 ms of a core); 0: none kept")
	f.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	f.IntVar(&c.dbMaxConns, "db-max-conns", 0, "database connections (0: derived from the number of cores)")
	f.DurationVar(&c.blobGC, "blob-gc", 24*time.Hour, "remove stored bytes no file refers to, and last stored over a day ago, at this interval (as shelfmark blobs gc does); 0 never")
	f.StringArrayVar(&c.externalAllow, "external-content-allow", nil, "a URL prefix (https://images.example.org/iiif/) that external content links may point into; repeat for several; none: external content is refused. An address that is not globally routable (loopback, private, shared, link-local, reserved, also inside IPv6) is allowed only by a prefix naming it")
	f.StringArrayVar(&c.importRoots, "import-root", nil, "a server folder (/srv/incoming) inside which the web interface's bulk ingest may take a manifest's files; repeat for several (in the environment, separate them with "+string(filepath.ListSeparator)+"); none: only uploaded zips")
	f.StringArrayVar(&c.trustedProxies, "trusted-proxy", nil, "the address or network (10.0.0.0/24) of a reverse proxy or load balancer whose X-Forwarded-For names the client, so that failed sign-ins are counted per client rather than for everyone behind the proxy; repeat for several (in the environment, separate them with commas); none: the header is ignored")
	f.BoolVar(&c.pprof, "pprof", false, "serve Go profiles (now always on --metrics-addr)")
	f.MarkDeprecated("pprof", "profiles are served at /debug/pprof/ on --metrics-addr")
	f.StringVar(&c.metricsAddr, "metrics-addr", "", "a second address (for example 127.0.0.1:9090) that serves /metrics and Go profiles at /debug/pprof/ without authentication, for operators only; on --addr, /metrics needs an admin token and there are no profiles")
	f.StringArrayVar(&c.corsOrigins, "cors-origin", nil, "an origin (https://app.example.org) whose web pages may call the API from a browser, with a token; repeat for several; none by default (only the server's own pages may write)")
	f.StringVar(&c.siteName, "site-name", "Shelfmark", "the repository's name, shown in the header and the title of every page of the web interface")
	f.StringVar(&c.institution, "institution", "", "the name of the institution that runs the repository, shown in the footer of every page of the web interface (empty: none)")
	f.StringVar(&c.searchFacets, "search-facets", "", "the facets of search, in the order shown: facets separated by semicolons, each a name (creator, subject, language, type; or the built-in collection, decade, format, kind), name=IRI|IRI (the values of those metadata predicates) or name(Label)=IRI|IRI; empty: creator;subject;language;type;collection;decade;format;kind (the first four from dc: and dcterms:). A changed list is applied to every record by the search indexer in the background (every server of one database must be given the same list)")
	f.StringVar(&c.oai.name, "oai-name", "Shelfmark repository", "OAI-PMH: the repository name Identify gives")
	f.StringVar(&c.oai.domain, "oai-domain", "", "OAI-PMH: the domain in record identifiers oai:DOMAIN:id (default: the host of --base-url, else "+oai.DefaultDomain+"); keep it stable, harvesters key records by it")
	f.StringSliceVar(&c.oai.emails, "oai-admin-email", nil, "OAI-PMH: administrator email(s) Identify gives (default admin@DOMAIN)")
	f.IntVar(&c.oai.pageSize, "oai-page-size", 100, "OAI-PMH: records or headers per list page")
	f.IntVar(&c.committers, "committers", 0, "group commits open at once (0: 1 on SQLite, whose writer is one; one per two cores on PostgreSQL, where batches of new works commit side by side while every other write takes its turn)")
	f.BoolVar(&c.webLinksPublic, "web-links-public", false, "show the web archives' link index (inbound counts, links, top pages and domains) to everyone; it spans every crawl, so by default only users with a role on the whole repository see it: set this when every crawl is public")
	f.BoolVar(&c.workers, "workers", true, "run the background jobs (identification, derivatives, text, OCR) in this process; --workers=false leaves them to \"shelfmark worker\" processes")
	f.StringVar(&c.sso.Issuer, "oidc-issuer", "", "OpenID Connect single sign-on: the identity provider's issuer URL (https://login.example.edu/realms/staff); empty: off, and /auth/oidc/* answer 404")
	f.StringVar(&c.sso.ClientID, "oidc-client-id", "", "OpenID Connect: this server's client id at the provider")
	f.StringVar(&c.sso.ClientSecret, "oidc-client-secret", "", "OpenID Connect: the client secret (better given in the environment, so that it does not show in the process list; empty for a public client)")
	f.StringVar(&c.sso.RedirectURL, "oidc-redirect-url", "", "OpenID Connect: the callback registered with the provider (default: --base-url + /auth/oidc/callback)")
	f.StringVar(&c.sso.UsernameClaim, "oidc-username-claim", "preferred_username", "OpenID Connect: the ID token claim that names the user (preferred_username falls back to sub)")
	f.StringVar(&c.sso.GroupsClaim, "oidc-groups-claim", "groups", `OpenID Connect: the claim that lists the user's groups (a list of strings or one string; they replace the user's groups at each sign-in); "-": none`)
	f.StringSliceVar(&c.sso.Scopes, "oidc-scopes", nil, "OpenID Connect: the scopes asked for (default openid,profile,email, and the groups claim's name when the provider offers it as a scope)")
	c.jobs.Register(f)
	c.content.Register(f)
	c.replica.register(f)
	c.uploads.register(f)
	c.admission.register(f)
	c.preservation.register(f)
	c.fixity.Register(f)
	AnnotateEnv(f)
	return cmd, c
}

// OpenStorage opens the backend a config names: database a postgres://
// (or postgresql://) URL opens PostgreSQL, an empty one SQLite in
// data/shelfmark.db; durability is "safe" or "relaxed"; maxConns 0 derives
// the connections from the number of cores. The caller closes it.
func OpenStorage(ctx context.Context, database, data, durability string, maxConns int) (shelfmark.Storage, error) {
	return OpenStorageTuned(ctx, database, data, durability, maxConns, StoreTuning{})
}

// StoreTuning is what a command opens a local store with beyond serve's
// settings; the zero value is serve's. The settings are SQLite's.
type StoreTuning struct {
	WriteCache    int64 // bytes of the write connection's page cache (0: sqlite.DefaultWriteCache)
	WebMergeLinks int   // shelfmark.RepositoryOptions.WebMergeLinks (0: the default)
	// CheckpointEvery, when above 0, leaves the write-ahead log to grow
	// to that many bytes before it is copied into the database file
	// (sqlite.Options.CheckpointAtLimit); 0 copies it after every commit.
	CheckpointEvery int64
}

// For returns the tuning for the store database names: t for SQLite
// (""), the zero value for PostgreSQL, which keeps the defaults.
func (t StoreTuning) For(database string) StoreTuning {
	if database != "" {
		return StoreTuning{}
	}
	return t
}

// OpenStorageTuned opens the backend as OpenStorage does, with t's page
// cache on SQLite's write connection and its checkpoints. PostgreSQL
// keeps its pages in the server's shared buffers and its log to itself,
// and takes no such settings from a client.
func OpenStorageTuned(ctx context.Context, database, data, durability string, maxConns int, t StoreTuning) (shelfmark.Storage, error) {
	relaxed, err := relaxedDurability(durability)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(database, "postgres://") || strings.HasPrefix(database, "postgresql://") {
		return postgres.Open(ctx, database, postgres.Options{Relaxed: relaxed, MaxConns: maxConns})
	} else if database != "" {
		return nil, fmt.Errorf("--database must be a postgres:// URL (or empty for SQLite), not %q", database)
	}
	return sqlite.Open(ctx, filepath.Join(data, "shelfmark.db"), sqlite.Options{Relaxed: relaxed, ReadConns: maxConns, WriteCache: t.WriteCache,
		WALLimit: t.CheckpointEvery, CheckpointAtLimit: t.CheckpointEvery > 0})
}

func serve(ctx context.Context, c ServeConfig) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	maxUpload, err := ParseSize(c.maxUpload)
	if err != nil {
		return fmt.Errorf("--max-upload: %w", err)
	}
	imageCache := int64(-1) // "0": none kept
	if strings.TrimSpace(c.iiifImageCache) == "" {
		c.iiifImageCache = defaultIIIFImageCache
	}
	if strings.TrimSpace(c.iiifImageCache) != "0" {
		if imageCache, err = ParseSize(c.iiifImageCache); err != nil {
			return fmt.Errorf("--iiif-image-cache: %w", err)
		}
	}
	if err := shttp.CheckOIDC(c.sso); err != nil {
		return fmt.Errorf("--oidc-*: %w", err)
	}
	if c.sso.Issuer != "" && c.sso.RedirectURL == "" && c.baseURL == "" {
		log.Warn("single sign-on: without --base-url or --oidc-redirect-url the callback URL sent to the provider follows each request's Host; the provider must have it registered")
	}
	if err := shttp.CheckOrigins(c.corsOrigins); err != nil {
		return fmt.Errorf("--cors-origin: %w", err)
	}
	roots, err := importRoots(c.importRoots)
	if err != nil {
		return err
	}
	proxies, err := trustedProxies(c.trustedProxies)
	if err != nil {
		return err
	}
	store, err := c.replica.OpenStorage(ctx, c.database, c.data, c.durability, c.dbMaxConns)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer store.Close()
	blobs, err := OpenBlobs(ctx, c.content, c.data, store)
	if err != nil {
		return err
	}
	defer blobs.Close()
	ids, err := shelfmark.LoadIDCodec(ctx, store)
	if err != nil {
		return err
	}
	metrics := shttp.NewMetrics(store, nil)
	RegisterBlobMetrics(blobs, metrics.Registry())
	formats := oai.DefaultRegistry()
	projector := oai.NewProjector(store, blobs, formats, oai.ProjectorOptions{Logger: log, IDs: ids})
	facets, err := shelfmark.ParseSearchFacets(c.searchFacets)
	if err != nil {
		return fmt.Errorf("--search-facets: %w", err)
	}
	indexer := shelfmark.NewSearchIndexer(store, shelfmark.IndexerOptions{Logger: log, Facets: facets})
	wake := notifier{commits: []interface{ Notify() }{projector, indexer}}
	loops := map[string]runner{"oai": projector, "search": indexer}
	var repo *shelfmark.Repository
	var jobs JobRunner
	repo = shelfmark.NewRepository(store, shelfmark.RepositoryOptions{Observer: commitObservers{metrics, &wake}, IDs: ids, Logger: log, WebLinksPublic: c.webLinksPublic, Committers: c.committers})
	// lapsed embargoes and leases are written down once a minute, and the
	// WARC files of deleted works leave the web index (every server may
	// run it: a change already written is not written again)
	loops["access"] = &shelfmark.AccessSweeper{Repo: repo, OnError: func(err error) { log.Warn("access sweep failed", "err", err) }}
	backlog, err := c.jobs.BacklogGate(repo)
	if err != nil {
		return err
	}
	if c.workers {
		if jobs, err = NewRunner(repo, blobs, c.jobs, backlog, metrics, log); err != nil {
			return err
		}
		wake.jobs = append(wake.jobs, jobs)
		loops["jobs"] = jobs
	}
	accounts, err := NewAccounts(ctx, repo, c.data, c.database, log, os.Stderr)
	if err != nil {
		return err
	}
	provider, err := newOAIProvider(store, formats, ids, c, log)
	if err != nil {
		return err
	}
	opts := shttp.Options{Resources: repo, Blobs: blobs, Storage: store, Logger: log, CORSOrigins: c.corsOrigins,
		BaseURL: c.baseURL, MaxUploadBytes: maxUpload, ExternalContentAllow: c.externalAllow, Metrics: metrics, OAI: provider, Jobs: repo,
		Accounts: accounts, OIDC: c.sso, StagingDir: filepath.Join(c.data, "staging"), ImportRoots: roots, TrustedProxies: proxies,
		IIIFImageCacheBytes: imageCache}
	opts.BlobRedirect = c.content.redirectTTL()
	opts.Backlog = backlog
	opts.SiteName, opts.Institution, opts.SearchFacets = c.siteName, c.institution, facets
	if err := c.admission.apply(&opts); err != nil {
		return err
	}
	if opts.Robots, err = readRobots(c.robotsFile); err != nil {
		return err
	}
	if err := c.uploads.apply(&opts); err != nil {
		return err
	}
	opts.AuthFailures = sharedAuthFailures(store) // leader.go
	keeper, err := c.preservation.preserver(ctx, c.data, c.content, store, blobs, ids, log)
	if err != nil {
		return err
	}
	opts.History = history(keeper) // history.go
	if keeper != nil {
		loops["preserve"] = keeper
		opts.Preservation = keeper
		if err := registerPreservationMetrics(keeper, metrics.Registry()); err != nil {
			return err
		}
		opts.Versions = keeper // the resources' events
	}
	if err := c.fixity.start(store, blobs, keeper, ids, loops, metrics.Registry(), log); err != nil {
		return err
	}
	// the uses of works, counted by every server for its own requests and
	// flushed as additions (usage_counter.go), the last time when serve
	// stops, before the database closes
	if usage, err := repo.NewUsageCounter(); err == nil {
		opts.Usage = usage
		uctx, ustop := context.WithCancel(context.Background())
		udone := make(chan struct{})
		go func() { usage.Run(uctx, usageFlushEvery); close(udone) }()
		defer func() { ustop(); <-udone }()
	}
	srv := shttp.NewServer(opts)
	if c.Extra != nil {
		if err := c.Extra(ctx, opts, log); err != nil {
			return err
		}
	}
	if refs, ok := store.(shelfmark.BlobReferences); ok && c.blobGC > 0 {
		loops["blobgc"] = blobCollector{blobs: blobs, store: store, refs: refs, every: c.blobGC, log: log}
	}
	// the loops that must run once among the servers of one database run
	// where this server leads them (leader.go)
	leaders, err := electLoops(store, loops, metrics.Registry(), log)
	if err != nil {
		return err
	}
	defer leaders.Close() // after bg.stop: the loops resign first
	bg := startBackground(ctx, log, loops)
	// stopped before the repository closes: the runner stores its last
	// results through it
	defer bg.stop()

	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.addr, err)
	}
	if c.metricsAddr != "" {
		// metrics and profiles without authentication: for a loopback or
		// otherwise private address only
		mln, err := net.Listen("tcp", c.metricsAddr)
		if err != nil {
			ln.Close()
			return fmt.Errorf("--metrics-addr: listen on %s: %w", c.metricsAddr, err)
		}
		msrv := &http.Server{Handler: srv.DebugHandler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
		go msrv.Serve(mln)
		defer msrv.Close()
		log.Info("metrics and profiles", "url", "http://"+mln.Addr().String()+"/metrics", "profiles", "http://"+mln.Addr().String()+"/debug/pprof/")
	}
	if !libjpeg.Turbo {
		log.Warn("built without libjpeg-turbo (the nolibjpeg tag): IIIF images composed from tiles and thumbnails decode and encode with Go's image/jpeg, several times slower; install libjpeg-dev and rebuild")
	}
	log.Info("shelfmark serving", "version", shelfmark.Version, "url", "http://"+ln.Addr().String()+"/", "api", "http://"+ln.Addr().String()+"/api/v1",
		"backend", store.Backend(), "data", c.data, "durability", c.durability, "gc", CurrentGC(os.Getenv).String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln, srv) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		log.Info("shutting down: finishing requests in flight")
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = srv.Shutdown(sctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("requests still running after 30 s")
		}
	}
	bg.stop()    // running jobs are handed back to their queues
	repo.Close() // commits whatever is queued
	return err
}

// importRoots reads --import-root: each value may hold several folders
// separated by the list separator (as SHELFMARK_IMPORT_ROOT does), and
// each must be an existing folder.
func importRoots(values []string) ([]string, error) {
	var roots []string
	for _, v := range values {
		for _, p := range filepath.SplitList(v) {
			if p == "" {
				continue
			}
			abs, err := filepath.Abs(p)
			if err != nil {
				return nil, fmt.Errorf("--import-root %s: %w", p, err)
			}
			fi, err := os.Stat(abs)
			if err != nil {
				return nil, fmt.Errorf("--import-root: %w", err)
			}
			if !fi.IsDir() {
				return nil, fmt.Errorf("--import-root %s is not a folder", p)
			}
			roots = append(roots, abs)
		}
	}
	return roots, nil
}

// trustedProxies reads --trusted-proxy: addresses (10.0.0.5) or networks
// (10.0.0.0/24), each value possibly a comma-separated list (as
// SHELFMARK_TRUSTED_PROXY gives them).
func trustedProxies(values []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v := range values {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			if p, err := netip.ParsePrefix(f); err == nil {
				out = append(out, p.Masked())
			} else if a, err := netip.ParseAddr(f); err == nil {
				out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			} else {
				return nil, fmt.Errorf("--trusted-proxy: %q is neither an address nor a network (10.0.0.5 or 10.0.0.0/24)", f)
			}
		}
	}
	return out, nil
}

// newOAIProvider configures the OAI-PMH provider from the serve settings.
func newOAIProvider(store shelfmark.Storage, formats *oai.Registry, ids *shelfmark.IDCodec, c ServeConfig, log *slog.Logger) (*oai.Provider, error) {
	cfg := oai.Config{RepositoryName: c.oai.name, Domain: c.oai.domain, AdminEmails: c.oai.emails,
		PageSize: c.oai.pageSize, Logger: log, IDs: ids}
	if c.baseURL != "" {
		u, err := url.Parse(c.baseURL)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("--base-url %q is not an absolute URL", c.baseURL)
		}
		cfg.BaseURL = strings.TrimSuffix(c.baseURL, "/") + "/oai"
		if cfg.Domain == "" && u.Hostname() != "" && net.ParseIP(u.Hostname()) == nil && strings.Contains(u.Hostname(), ".") {
			cfg.Domain = u.Hostname()
		}
	}
	p, err := oai.NewProvider(store, formats, cfg)
	if err != nil {
		return nil, fmt.Errorf("OAI-PMH settings: %w", err)
	}
	return p, nil
}

// commitObservers passes each group commit to several observers.
type commitObservers []shelfmark.CommitObserver

// ObserveCommit implements shelfmark.CommitObserver.
func (os commitObservers) ObserveCommit(ops int, d time.Duration, err error) {
	for _, o := range os {
		o.ObserveCommit(ops, d, err)
	}
}

// ObserveJobs implements shelfmark.JobsObserver: it tells those of the
// observers that are JobsObservers.
func (os commitObservers) ObserveJobs() {
	for _, o := range os {
		if jo, ok := o.(shelfmark.JobsObserver); ok {
			jo.ObserveJobs()
		}
	}
}

// relaxedDurability reads a --durability value: "safe" (every commit
// synced, the default) or "relaxed" (opt-in, may lose the last commits in
// a crash); anything else is an error naming the flag.
func relaxedDurability(durability string) (bool, error) {
	switch durability {
	case "safe":
		return false, nil
	case "relaxed":
		return true, nil
	}
	return false, fmt.Errorf("--durability must be safe or relaxed, not %q", durability)
}

// readRobots reads the file of --robots-file ("": none, nil): at most
// ui.MaxRobotsBytes of UTF-8 text.
func readRobots(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--robots-file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, ui.MaxRobotsBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("--robots-file %s: %w", path, err)
	case len(b) > ui.MaxRobotsBytes:
		return nil, fmt.Errorf("--robots-file %s is larger than %d bytes, more than crawlers read", path, ui.MaxRobotsBytes)
	case !utf8.Valid(b):
		return nil, fmt.Errorf("--robots-file %s is not UTF-8 text", path)
	}
	return b, nil
}
