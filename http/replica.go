package http

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shelfmark/shelfmark"
)

// Read replicas
//
// When the storage answers reads from a replica (shelfmark.ReplicaRouter,
// postgres with --read-database), the server
//
//   - marks the GET and HEAD requests of the routes that tolerate a little
//     lag (lagTolerant: OAI-PMH, search, listings, resources and their
//     files, IIIF, the public pages of the web interface, web archives)
//     with shelfmark.WithReplicaRead, so their reads may go to the replica;
//   - gives every write it answers with success (a status below 400 to a
//     request other than GET, HEAD and OPTIONS) the primary's write
//     position after it, in the response header Shelfmark-Position and the
//     cookie shelfmark_pos;
//   - requires that position of the marked reads of a client that sends it
//     back (the request header Shelfmark-Position, which an API client
//     copies from the last write's answer, or the cookie, which a browser
//     returns by itself): a replica that has not replayed it is not used,
//     so a client always reads its own writes, on any server.
//
// Credential lookups (sessions, API tokens) run before a route is chosen,
// unmarked, so on the primary: a session or token revoked a moment ago is
// refused at once everywhere, and a new one is found at once.
// Pages that prepare a write (edit forms, role and access editors, the
// administrators' pages, deposit and bulk ingest) read the primary too,
// so the version a form carries for If-Match is the latest.

// Names of the write position's header and cookie.
const (
	PositionHeader = "Shelfmark-Position"
	PositionCookie = "shelfmark_pos"
)

// positionMaxAge is the lifetime of the position cookie: longer than any
// sensible lag bound, after which a replica that is used at all has
// replayed the write anyway.
const positionMaxAge = 10 * 60

// lagTolerant lists the GET routes whose reads may come from a replica.
var lagTolerant = map[string]bool{
	// REST API
	"/api/v1/resources/{id}":          true,
	"/api/v1/resources/{id}/members":  true,
	"/api/v1/resources/{id}/children": true,
	"/api/v1/resources/{id}/content":  true,
	"/api/v1/search":                  true,
	"/api/v1/web/captures":            true,
	"/api/v1/web/captures/{id}":       true,
	"/api/v1/web/record":              true,
	"/api/v1/web/links":               true,
	"/api/v1/web/top":                 true,
	// OAI-PMH (GET and POST: both only read)
	"/oai": true,
	// web interface: public pages
	"/{$}":                  true,
	"/search":               true,
	"/works/{id}":           true,
	"/works/{id}/cite.bib":  true,
	"/works/{id}/cite.ris":  true,
	"/collections/{id}":     true,
	"/sitemap.xml":          true,
	"/sitemaps/{file}":      true,
	"/web":                  true,
	"/web/domains/{domain}": true,
	"/web/captures/{id}":    true,
	// IIIF
	"/iiif/{id}/manifest":                                true,
	"/iiif/{id}/collection":                              true,
	"/iiif/{id}/image":                                   true,
	"/iiif/{id}/image/info.json":                         true,
	"/iiif/{id}/image/{region}/{size}/{rotation}/{file}": true,
	"/iiif/{id}/pdf":                                     true,
	"/iiif/{id}/zip":                                     true,
	"/iiif/{id}/search/1":                                true,
	"/iiif/{id}/search/2":                                true,
}

// replicaRouting is the server's view of a storage with a read replica;
// router is nil without one.
type replicaRouting struct {
	router shelfmark.ReplicaRouter
}

// newReplicaRouting finds the replica router behind storage, if any.
func newReplicaRouting(storage shelfmark.Storage) replicaRouting {
	if r, ok := storage.(shelfmark.ReplicaRouter); ok && r.ReplicaStats().Configured {
		return replicaRouting{router: r}
	}
	return replicaRouting{}
}

// replicaRead returns h marked as tolerant of replica lag when the route
// (method and pattern as registered; method "" for any) is one of
// lagTolerant and a replica is configured, else h itself.
func (s *Server) replicaRead(method, pattern string, h http.Handler) http.Handler {
	if s.replica.router == nil || (method != "" && method != http.MethodGet) || !lagTolerant[pattern] {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pos := r.Header.Get(PositionHeader)
		if pos != "" && !validPosition(pos) {
			s.refuse(w, r, shelfmark.Errorf(shelfmark.EINVALID, "The %s header must be a position as a write's answer gave it (such as 16/B374D848), not %q.", PositionHeader, truncate(pos, 40)), s.now())
			return
		}
		if pos == "" {
			if c, err := r.Cookie(PositionCookie); err == nil {
				// A malformed cookie is passed on: the storage cannot
				// compare it, so the read goes to the primary.
				pos = c.Value
			}
		}
		h.ServeHTTP(w, r.WithContext(shelfmark.WithReplicaRead(r.Context(), pos)))
	})
}

// truncate shortens s to at most n bytes for a message.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// validPosition reports whether s looks like a write position: two groups
// of at most 8 hexadecimal digits joined by a slash.
func validPosition(s string) bool {
	hi, lo, ok := strings.Cut(s, "/")
	return ok && hexDigits(hi) && hexDigits(lo)
}

func hexDigits(s string) bool {
	if s == "" || len(s) > 8 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// positionWriter returns w wrapped so that a successful answer to a write
// carries the write position (see the top of this file); w itself for
// reads, for /oai (whose POST only reads) and without a replica.
func (s *Server) positionWriter(w http.ResponseWriter, r *http.Request) http.ResponseWriter {
	if s.replica.router == nil || r.URL.Path == "/oai" {
		return w
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return w
	}
	return &positionResponse{ResponseWriter: w, r: r, s: s}
}

// positionResponse adds the write position to a successful answer.
type positionResponse struct {
	http.ResponseWriter
	r       *http.Request
	s       *Server
	written bool
}

// WriteHeader implements http.ResponseWriter.
func (p *positionResponse) WriteHeader(code int) {
	if !p.written {
		p.written = true
		if code < 400 && code >= 200 {
			p.addPosition()
		}
	}
	p.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (p *positionResponse) Write(b []byte) (int, error) {
	if !p.written {
		p.WriteHeader(http.StatusOK)
	}
	return p.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (p *positionResponse) Unwrap() http.ResponseWriter { return p.ResponseWriter }

// addPosition asks the primary for its write position (one small query)
// and sets the header and the cookie. Without an answer the client just
// gets none: its next reads may then come from a replica that has not yet
// replayed its write, within the lag bound.
func (p *positionResponse) addPosition() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(p.r.Context()), 2*time.Second)
	defer cancel()
	pos, err := p.s.replica.router.WritePosition(ctx)
	if err != nil || pos == "" {
		if err != nil {
			p.s.log.Warn("no write position for the answer", "method", p.r.Method, "path", p.r.URL.Path, "err", err)
		}
		return
	}
	h := p.Header()
	h.Set(PositionHeader, pos)
	http.SetCookie(p.ResponseWriter, &http.Cookie{Name: PositionCookie, Value: pos, Path: "/", MaxAge: positionMaxAge,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: p.r.TLS != nil || strings.HasPrefix(p.s.opts.BaseURL, "https://")})
}

// registerReplicaMetrics adds the replica's metrics to reg when storage
// has a replica.
func registerReplicaMetrics(reg *prometheus.Registry, storage shelfmark.Storage) {
	if rr := newReplicaRouting(storage); rr.router != nil {
		reg.MustRegister(&replicaCollector{router: rr.router})
	}
}

// replicaCollector reports the replica's state, read once per scrape.
type replicaCollector struct{ router shelfmark.ReplicaRouter }

var (
	replicaLagDesc       = prometheus.NewDesc("shelfmark_db_replica_lag_seconds", "How long ago the primary first had a change the read replica has not replayed (absent while unknown).", nil, nil)
	replicaLagBytesDesc  = prometheus.NewDesc("shelfmark_db_replica_lag_bytes", "Write-ahead log bytes the read replica has not replayed (absent while unknown).", nil, nil)
	replicaMaxLagDesc    = prometheus.NewDesc("shelfmark_db_replica_max_lag_seconds", "The lag above which reads go to the primary.", nil, nil)
	replicaHealthyDesc   = prometheus.NewDesc("shelfmark_db_replica_healthy", "1 when the read replica answered its last probe as a standby.", nil, nil)
	primaryReachableDesc = prometheus.NewDesc("shelfmark_db_primary_reachable", "1 when the primary answered its last probe.", nil, nil)
	readsDesc            = prometheus.NewDesc("shelfmark_db_reads_total", "Read transactions by the server they ran on (primary, replica).", []string{"target"}, nil)
	fallbacksDesc        = prometheus.NewDesc("shelfmark_db_replica_fallbacks_total", "Reads that could have run on the replica but ran on the primary, by reason (unhealthy, lag, position, error).", []string{"reason"}, nil)
	replicaPoolDescs     = map[string]*prometheus.Desc{
		"max":        prometheus.NewDesc("shelfmark_db_replica_pool_max_connections", "Connections the replica's pool may open.", nil, nil),
		"in_use":     prometheus.NewDesc("shelfmark_db_replica_pool_in_use", "Replica connections in use.", nil, nil),
		"idle":       prometheus.NewDesc("shelfmark_db_replica_pool_idle", "Idle replica connections.", nil, nil),
		"wait_count": prometheus.NewDesc("shelfmark_db_replica_pool_wait_count", "Times a read waited for a replica connection (cumulative).", nil, nil),
		"wait_secs":  prometheus.NewDesc("shelfmark_db_replica_pool_wait_seconds", "Time spent waiting for replica connections (cumulative).", nil, nil),
	}
)

// Describe implements prometheus.Collector.
func (c *replicaCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{replicaLagDesc, replicaLagBytesDesc, replicaMaxLagDesc, replicaHealthyDesc, primaryReachableDesc, readsDesc, fallbacksDesc} {
		ch <- d
	}
	for _, d := range replicaPoolDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector.
func (c *replicaCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.router.ReplicaStats()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	if st.LagKnown {
		gauge(replicaLagDesc, st.Lag.Seconds())
		gauge(replicaLagBytesDesc, float64(st.LagBytes))
	}
	gauge(replicaMaxLagDesc, st.MaxLag.Seconds())
	gauge(replicaHealthyDesc, b2f(st.Healthy))
	gauge(primaryReachableDesc, b2f(st.PrimaryReachable))
	counter(readsDesc, float64(st.ReadsPrimary), "primary")
	counter(readsDesc, float64(st.ReadsReplica), "replica")
	for _, reason := range []string{shelfmark.FallbackUnhealthy, shelfmark.FallbackLag, shelfmark.FallbackPosition, shelfmark.FallbackError} {
		counter(fallbacksDesc, float64(st.Fallbacks[reason]), reason)
	}
	gauge(replicaPoolDescs["max"], float64(st.Pool.MaxOpen))
	gauge(replicaPoolDescs["in_use"], float64(st.Pool.InUse))
	gauge(replicaPoolDescs["idle"], float64(st.Pool.Idle))
	gauge(replicaPoolDescs["wait_count"], float64(st.Pool.WaitCount))
	gauge(replicaPoolDescs["wait_secs"], st.Pool.WaitDuration.Seconds())
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
