package http

// This file puts every route behind admission (package admission): each
// route's requests are classed by what they cost, each caller by group
// and client, and an expensive request past its budget waits briefly and
// then is refused with 429 or 503 and Retry-After, before it costs the
// server more than a refusal.

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/admission"
	"github.com/shelfmark/shelfmark/http/kit"
)

// routeClass returns the class of a route's requests: by its method and
// pattern, and for the searches by whether they carry text (a search) or
// only filters (a listing by facet).
func routeClass(method, pattern string) func(*http.Request) admission.Class {
	fixed := func(c admission.Class) func(*http.Request) admission.Class {
		return func(*http.Request) admission.Class { return c }
	}
	if method != "" && method != http.MethodGet && method != http.MethodHead {
		switch pattern {
		case "/api/v1/login", "/api/v1/logout", "/login", "/logout":
			return fixed(admission.Cheap) // sign-in has its own limiter (auth.go)
		case "/oai":
			return fixed(admission.Harvest)
		}
		return fixed(admission.Write)
	}
	switch {
	case pattern == "/oai":
		return fixed(admission.Harvest)
	case pattern == "/search" || pattern == "/api/v1/search":
		return func(r *http.Request) admission.Class {
			if strings.TrimSpace(r.URL.Query().Get("q")) == "" {
				return admission.Facet
			}
			return admission.Search
		}
	case pattern == "/web" || strings.HasPrefix(pattern, "/api/v1/web/"):
		return fixed(admission.Search) // the web archive's lookups by address
	case strings.HasPrefix(pattern, "/iiif/{id}/search/"):
		return fixed(admission.BookSearch)
	case pattern == "/iiif/{id}/pdf" || pattern == "/iiif/{id}/zip": // a whole work as one file
		return fixed(admission.PDF)
	case pattern == "/iiif/{id}/image/{region}/{size}/{rotation}/{file}":
		return fixed(admission.Image)
	case strings.HasSuffix(pattern, "/content") || pattern == "/web/files/{id}":
		return fixed(admission.File)
	case cheapRoute(pattern):
		return fixed(admission.Cheap)
	}
	return fixed(admission.Page)
}

// cheapRoute reports the routes that cost next to nothing and are never
// held: probes, static files, robots.txt and the sitemap, sign-in,
// the caller's own account, the API's description, the dashboard's event
// stream (long-lived, for administrators only) and the metrics.
func cheapRoute(pattern string) bool {
	switch pattern {
	case "/healthz", "/readyz", "/metrics", "/api/v1/openapi.json", "/api/v1/me", "/static/{file...}", "/login",
		"/robots.txt", "/sitemap.xml", "/sitemaps/{file}", "/auth/oidc/login", "/auth/oidc/callback", "/admin/events", "/bulk/{run}/progress":
		return true
	}
	return false
}

// setupAdmission makes the server's admission controller and robots list
// (Options.Admission, Cores, RobotAgents) and reports them in the metrics.
func (s *Server) setupAdmission() {
	cores := s.opts.Cores
	if cores <= 0 {
		cores = runtime.GOMAXPROCS(0)
	}
	s.admission = admission.New(s.opts.Admission, cores, s.opts.Now)
	robots, err := admission.NewRobots(s.opts.RobotAgents...)
	if err != nil {
		s.log.Error("robot user agents ignored", "err", err)
		robots, _ = admission.NewRobots()
	}
	s.robots = robots
	// a registry shared by several servers (tests) keeps the first's
	_ = s.metrics.reg.Register(newAdmissionCollector(s.admission))
	if s.opts.Backlog != nil {
		_ = s.metrics.reg.Register(newBacklogCollector(s.opts.Backlog))
	}
}

// Admission returns the server's admission controller (its state, for
// the dashboard and tests).
func (s *Server) Admission() *admission.Controller { return s.admission }

// admitting holds a route's requests to their budgets.
func (s *Server) admitting(method, pattern string, h http.Handler) http.Handler {
	class := routeClass(method, pattern)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cl := class(r)
		if cl == admission.Cheap || s.admission == nil {
			h.ServeHTTP(w, r)
			return
		}
		g, key := s.admissionClient(r)
		t, err := s.admission.Admit(r.Context(), cl, g, key)
		if err != nil {
			s.refuseAdmission(w, r, err)
			return
		}
		defer t.Done()
		h.ServeHTTP(newTimingWriter(w, s.now, s.now(), t.Waited), r)
	})
}

// admissionClient returns a request's group and client: a signed-in
// caller by user (a token's owner too), anyone else by address (or the
// address a trusted proxy names), as a robot when the user agent is on
// the COUNTER list.
func (s *Server) admissionClient(r *http.Request) (admission.Group, string) {
	c := shelfmark.CallerFrom(r.Context())
	if c.Authenticated() {
		if c.User != 0 {
			return admission.SignedIn, fmt.Sprintf("u:%d", c.User)
		}
		return admission.SignedIn, "n:" + c.Name
	}
	addr := s.client(r)
	if s.robots != nil && s.robots.Is(r.UserAgent()) {
		return admission.Robot, addr
	}
	return admission.Anonymous, addr
}

// refuseAdmission answers a request admission refused: 429 or 503 with
// Retry-After, as JSON, or as a short page to a browser.
func (s *Server) refuseAdmission(w http.ResponseWriter, r *http.Request, err error) {
	ref, ok := err.(*admission.Refusal)
	if !ok {
		s.refuse(w, r, err, s.now())
		return
	}
	code := shelfmark.ETOOMANY
	if ref.Status == http.StatusServiceUnavailable {
		code = shelfmark.EUNAVAILABLE
	}
	msg := "The server is busy with requests like this one; please retry in a moment."
	if ref.Status == http.StatusTooManyRequests {
		msg = "You are sending requests like this one faster than the server serves one client; please retry in a moment."
	}
	e := &shelfmark.Error{Code: code, Message: msg, Details: map[string]any{
		"retry_after": ref.RetryAfterSeconds(), "class": ref.Class.String(), "reason": ref.Reason.String(), "limit_name": "admission"}}
	if wantsHTML(r) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("Retry-After", fmt.Sprint(ref.RetryAfterSeconds()))
		w.WriteHeader(ref.Status)
		fmt.Fprintf(w, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\"><title>Busy</title></head><body><main id=\"main\"><h1>Busy</h1><p>%s</p><p><a href=\"%s\">Try again</a></p></main></body></html>\n",
			msg, htmlAttr(r.URL.RequestURI()))
		s.metrics.observeRequest(r.Method, r.Pattern, ref.Status, 0)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	// not logged: under a storm a refusal is the server working as meant,
	// and the metrics count each
	status := kit.WriteError(w, r, e)
	s.metrics.observeRequest(r.Method, r.Pattern, status, 0)
}

// htmlAttr escapes s for an attribute.
func htmlAttr(s string) string {
	return strings.NewReplacer("&", "&amp;", "\"", "&quot;", "<", "&lt;", ">", "&gt;", "'", "&#39;").Replace(s)
}

// admissionCollector reports the budgets' state at each scrape: requests
// admitted (at once or after queueing) and refused by reason, and those
// running and waiting now, by class and group.
type admissionCollector struct {
	c                                *admission.Controller
	requests, running, waiting, size *prometheus.Desc
}

func newAdmissionCollector(c *admission.Controller) *admissionCollector {
	l := []string{"class", "group"}
	return &admissionCollector{c: c,
		requests: prometheus.NewDesc("shelfmark_admission_requests_total", "Requests of the expensive classes by class, group and outcome (admitted at once, queued then admitted, refused) and the reason of a refusal (rate, share, saturated).", append(l, "outcome", "reason"), nil),
		running:  prometheus.NewDesc("shelfmark_admission_running", "Requests of a class and group running now.", l, nil),
		waiting:  prometheus.NewDesc("shelfmark_admission_waiting", "Requests of a class and group waiting for a slot now.", l, nil),
		size:     prometheus.NewDesc("shelfmark_admission_budget", "Requests of a class and group served at once at most.", l, nil),
	}
}

func (a *admissionCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- a.requests
	ch <- a.running
	ch <- a.waiting
	ch <- a.size
}

func (a *admissionCollector) Collect(ch chan<- prometheus.Metric) {
	for _, st := range a.c.Snapshot() {
		cl, g := st.Class.String(), st.Group.String()
		ch <- prometheus.MustNewConstMetric(a.requests, prometheus.CounterValue, float64(st.Admitted), cl, g, "admitted", "")
		ch <- prometheus.MustNewConstMetric(a.requests, prometheus.CounterValue, float64(st.Queued), cl, g, "queued", "")
		for _, r := range admission.Reasons() {
			ch <- prometheus.MustNewConstMetric(a.requests, prometheus.CounterValue, float64(st.Refused[r]), cl, g, "refused", r.String())
		}
		ch <- prometheus.MustNewConstMetric(a.running, prometheus.GaugeValue, float64(st.Running), cl, g)
		ch <- prometheus.MustNewConstMetric(a.waiting, prometheus.GaugeValue, float64(st.Waiting), cl, g)
		ch <- prometheus.MustNewConstMetric(a.size, prometheus.GaugeValue, float64(st.Limit), cl, g)
	}
	// the budget the expensive classes share (class "expensive")
	for _, g := range []admission.Group{admission.Anonymous, admission.Robot} {
		st := a.c.SharedStats(g)
		ch <- prometheus.MustNewConstMetric(a.running, prometheus.GaugeValue, float64(st.Running), "expensive", g.String())
		ch <- prometheus.MustNewConstMetric(a.waiting, prometheus.GaugeValue, float64(st.Waiting), "expensive", g.String())
		ch <- prometheus.MustNewConstMetric(a.size, prometheus.GaugeValue, float64(st.Limit), "expensive", g.String())
	}
}
