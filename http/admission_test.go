package http

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark/http/admission"
)

// browserUA is a browser's user agent (not on the robots list).
const browserUA = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"

// from returns the headers of an anonymous browser at addr (named by
// the trusted proxy on loopback).
func from(addr string, hdrs ...string) []string {
	return as("", append([]string{"X-Forwarded-For", addr, "User-Agent", browserUA}, hdrs...)...)
}

func admissionSnap(s *Server, cl admission.Class, g admission.Group) admission.Stats {
	for _, st := range s.Admission().Snapshot() {
		if st.Class == cl && st.Group == g {
			return st
		}
	}
	return admission.Stats{}
}

// TestAdmissionStorm fills the anonymous search budget with a storm's
// requests (held through the controller, as requests still running
// would) and twenty more of the storm waiting; then, counted in queue
// positions and not in time:
//   - a signed-in search is admitted at once (its group's budget is its
//     own: admitted, never queued);
//   - cheap requests and pages are served;
//   - the storm's next search is refused 429 (past its client's share)
//     and another anonymous client's 503 (the budget stayed full), both
//     with Retry-After, as JSON to the API and as a page to a browser;
//   - a robot's search is held to the robots' budget;
//   - when a storm slot frees, a reader's waiting search goes ahead of
//     the twenty the storm queued.
func TestAdmissionStorm(t *testing.T) {
	e := newEnv(t, Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Admission: admission.Settings{Budgets: map[admission.Class]int{admission.Search: 2},
			Shares: map[admission.Class]int{admission.Search: 1}, Rates: map[admission.Class]float64{admission.Search: 0},
			Expensive: 100, QueueWait: 50 * time.Millisecond, ShareWait: 50 * time.Millisecond}})
	e.create("/api/v1/works", `{"visibility": "public"}`)
	s := e.live.Load()
	ctx := context.Background()
	var storm []admission.Ticket
	for _, a := range []string{"ip:10.9.0.1", "ip:10.9.0.2"} {
		tk, err := s.Admission().Admit(ctx, admission.Search, admission.Anonymous, a)
		if err != nil {
			t.Fatal(err)
		}
		storm = append(storm, tk)
	}
	// the dashboard shows the shared budget of the expensive classes,
	// the storm's two searches running in it
	if p := adminVisitor(t, e).get("/admin"); !strings.Contains(p.Body, "share 100 slots besides each class&#39;s budget: 2 running, 0 waiting.") {
		t.Errorf("dashboard lacks the shared budget: %s", regexp.MustCompile(`(?s)<section aria-labelledby="h-requests">.*?</section>`).FindString(p.Body))
	}

	// signed in: admitted at once
	before := admissionSnap(s, admission.Search, admission.SignedIn)
	e.do("GET", "/api/v1/search?q=whales", nil).want(t, 200)
	after := admissionSnap(s, admission.Search, admission.SignedIn)
	if after.Admitted != before.Admitted+1 || after.Queued != before.Queued {
		t.Errorf("signed-in search: admitted %d→%d, queued %d→%d", before.Admitted, after.Admitted, before.Queued, after.Queued)
	}
	// cheap requests and pages: served; a cheap one is not timed (it
	// is never held), an admitted one is
	if h := e.do("GET", "/healthz", nil, from("10.9.0.1")...).want(t, 200).Header.Get("Server-Timing"); h != "" {
		t.Errorf("a cheap request has Server-Timing %q", h)
	}
	if h := e.do("GET", "/api/v1/search?q=whales", nil).want(t, 200).Header.Get("Server-Timing"); !regexp.MustCompile(`^admit;dur=\d+\.\d{3}, app;dur=\d+\.\d{3}$`).MatchString(h) {
		t.Errorf("a search admitted at once has Server-Timing %q", h)
	}
	e.do("GET", "/static/app.css", nil, from("10.9.0.1")...).want(t, 200)
	e.do("GET", "/", nil, from("10.9.0.1", "Accept", "text/html")...).want(t, 200)

	// the storm past its share: 429; another anonymous client: 503
	r := e.do("GET", "/api/v1/search?q=whales", nil, from("10.9.0.1")...)
	r.wantError(t, 429, "too_many")
	if r.Header.Get("Retry-After") == "" || r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("429 headers %v", r.Header)
	}
	r = e.do("GET", "/api/v1/search?q=whales", nil, from("10.9.0.3")...)
	r.wantError(t, 503, "unavailable")
	if r.Header.Get("Retry-After") == "" {
		t.Errorf("503 without Retry-After: %v", r.Header)
	}
	// a browser gets a page
	r = e.do("GET", "/search?q=whales", nil, from("10.9.0.3", "Accept", "text/html")...)
	if r.Status != 503 || r.Header.Get("Retry-After") == "" || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") {
		t.Errorf("browser: %d %v", r.Status, r.Header)
	}
	// a robot (by its user agent) has a budget of its own, of half
	if st := admissionSnap(s, admission.Search, admission.Robot); st.Limit != 1 {
		t.Errorf("robots' search budget %d, want 1", st.Limit)
	}
	e.do("GET", "/api/v1/search?q=whales", nil, as("", "X-Forwarded-For", "10.9.0.9", "User-Agent", "python-requests/2.31")...).want(t, 200)
	if st := admissionSnap(s, admission.Search, admission.Robot); st.Admitted != 1 {
		t.Errorf("robot's search not counted as a robot's: %+v", st)
	}

	// twenty of the storm wait (long: only a slot lets them in)
	long := admission.Settings{Budgets: map[admission.Class]int{admission.Search: 2}, Shares: map[admission.Class]int{admission.Search: 2},
		Rates: map[admission.Class]float64{admission.Search: 0}, Expensive: 100, QueueWait: time.Hour, ShareWait: time.Hour}
	e.reconfigure(func(o *Options) { o.Admission = long })
	s = e.live.Load()
	storm = storm[:0]
	for _, a := range []string{"ip:10.9.0.1", "ip:10.9.0.2"} { // each alone in the pool as it arrives
		tk, err := s.Admission().Admit(ctx, admission.Search, admission.Anonymous, a)
		if err != nil {
			t.Fatal(err)
		}
		storm = append(storm, tk)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var queued []admission.Ticket
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tk, err := s.Admission().Admit(ctx, admission.Search, admission.Anonymous, "ip:10.9.0.1")
			if err == nil {
				mu.Lock()
				queued = append(queued, tk)
				mu.Unlock()
			}
		}()
	}
	waitUntil(t, func() bool { return admissionSnap(s, admission.Search, admission.Anonymous).Waiting == 20 })
	reader := make(chan *response)
	go func() {
		reader <- e.do("GET", "/api/v1/search?q=whales", nil, from("192.0.2.7")...)
	}()
	waitUntil(t, func() bool { return admissionSnap(s, admission.Search, admission.Anonymous).Waiting == 21 })
	storm[0].Done()
	select {
	case r := <-reader:
		if r.Status != 200 {
			t.Errorf("the reader's search: %d", r.Status)
		}
		// its Server-Timing tells its wait for the slot from its handler's time
		m := regexp.MustCompile(`^admit;dur=(\d+\.\d{3}), app;dur=(\d+\.\d{3})$`).FindStringSubmatch(r.Header.Get("Server-Timing"))
		if m == nil || m[1] == "0.000" {
			t.Errorf("the reader's search waited, but its Server-Timing is %q", r.Header.Get("Server-Timing"))
		}
	case <-time.After(time.Minute): // bounded: it would wait behind the storm's twenty
		t.Fatal("the reader's search was not admitted with the first slot freed")
	}
	// the reader took the first slot freed: of the storm's twenty, at
	// most one (given the slot the reader freed) was admitted before the
	// reader had its answer
	mu.Lock()
	ahead := len(queued)
	mu.Unlock()
	if st := admissionSnap(s, admission.Search, admission.Anonymous); ahead > 1 || st.Waiting < 19 {
		t.Errorf("the storm's queued searches went ahead of the reader: %d admitted, %d waiting", ahead, st.Waiting)
	}
	storm[1].Done()
	for done := 0; done < 20; {
		mu.Lock()
		next := queued
		queued = nil
		mu.Unlock()
		for _, tk := range next {
			tk.Done()
			done++
		}
		time.Sleep(time.Millisecond)
	}
	wg.Wait()
}

// TestAdmissionRate: past its rate share an anonymous client waits, then
// is refused 429 with the seconds its next request must wait; the
// signed-in have no rate share; refusals show in the metrics.
func TestAdmissionRate(t *testing.T) {
	e := newEnv(t, Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
		Admission: admission.Settings{Rates: map[admission.Class]float64{admission.Search: 0.2}, Bursts: map[admission.Class]float64{admission.Search: 2},
			ShareWait: 10 * time.Millisecond}})
	for range 2 {
		e.do("GET", "/api/v1/search?q=whales", nil, from("10.9.0.1")...).want(t, 200)
	}
	r := e.do("GET", "/api/v1/search?q=whales", nil, from("10.9.0.1")...)
	r.wantError(t, 429, "too_many")
	if got := r.Header.Get("Retry-After"); got != "5" {
		t.Errorf("Retry-After %q, want 5 (a token every 5 s)", got)
	}
	e.do("GET", "/api/v1/search?q=whales", nil, from("10.9.0.2")...).want(t, 200) // another client
	for range 5 {
		e.do("GET", "/api/v1/search?q=whales", nil).want(t, 200) // the admin, signed in
	}
	m := e.do("GET", "/metrics", nil).want(t, 200)
	for _, want := range []string{
		`shelfmark_admission_requests_total{class="search",group="anonymous",outcome="refused",reason="rate"} 1`,
		`shelfmark_admission_requests_total{class="search",group="signed_in",outcome="admitted",reason=""} 5`,
		`shelfmark_admission_budget{class="search",group="robot"}`,
	} {
		if !strings.Contains(string(m.Body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

// TestRouteClasses: every route has the class its cost says, and the
// probes, static files and sign-in are cheap.
func TestRouteClasses(t *testing.T) {
	for _, c := range []struct {
		method, pattern, query string
		want                   admission.Class
	}{
		{"GET", "/healthz", "", admission.Cheap},
		{"GET", "/static/{file...}", "", admission.Cheap},
		{"POST", "/login", "", admission.Cheap},
		{"GET", "/works/{id}", "", admission.Page},
		{"GET", "/collections/{id}", "", admission.Page},
		{"GET", "/iiif/{id}/manifest", "", admission.Page},
		{"GET", "/search", "q=whales", admission.Search},
		{"GET", "/search", "collection=abc", admission.Facet},
		{"GET", "/api/v1/search", "q=%20", admission.Facet},
		{"GET", "/iiif/{id}/search/2", "q=x", admission.BookSearch},
		{"GET", "/iiif/{id}/pdf", "", admission.PDF},
		{"GET", "/iiif/{id}/zip", "", admission.PDF},
		{"GET", "/iiif/{id}/image/{region}/{size}/{rotation}/{file}", "", admission.Image},
		{"GET", "/api/v1/resources/{id}/content", "", admission.File},
		{"", "/oai", "verb=ListRecords", admission.Harvest},
		{"POST", "/api/v1/works", "", admission.Write},
		{"DELETE", "/api/v1/resources/{id}", "", admission.Write},
	} {
		r := e2eRequest(c.method, "/x?"+c.query)
		if got := routeClass(c.method, c.pattern)(r); got != c.want {
			t.Errorf("%s %s?%s: %s, want %s", c.method, c.pattern, c.query, got, c.want)
		}
	}
}

// e2eRequest is a bare request for target (a path and query).
func e2eRequest(method, target string) *http.Request {
	if method == "" {
		method = "GET"
	}
	return httptest.NewRequest(method, target, nil)
}

// waitUntil waits for cond, which other goroutines make true (bounded:
// a test that never gets there fails after a minute).
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(time.Millisecond)
	}
}
