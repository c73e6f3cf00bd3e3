package http

import (
	"net/http"
	"testing"
)

// TestLagTolerantRoutes: every route marked as tolerant of replica lag is
// a GET route the server registers (a renamed route would otherwise
// silently read the primary only), and none of the routes that prepare a
// write or concern credentials is marked.
func TestLagTolerantRoutes(t *testing.T) {
	e := newEnv(t, Options{})
	registered := map[string]bool{"/oai": true}
	for _, rt := range append(e.srv.routes(), e.srv.uiRoutes()...) {
		if rt.method == http.MethodGet {
			registered[rt.pattern] = true
		}
	}
	for p := range lagTolerant {
		if !registered[p] {
			t.Errorf("lagTolerant names %s, which is no GET route", p)
		}
	}
	for _, p := range []string{"/readyz", "/api/v1/me", "/api/v1/tokens", "/api/v1/roles", "/api/v1/audit", "/api/v1/jobs",
		"/login", "/admin", "/works/{id}/edit", "/works/{id}/access", "/deposit", "/bulk"} {
		if lagTolerant[p] {
			t.Errorf("%s is marked as tolerant of lag", p)
		}
	}
}

// TestNoPositionWithoutReplica: without a replica a write's answer carries
// no write position, and a position sent with a read is ignored.
func TestNoPositionWithoutReplica(t *testing.T) {
	e := newEnv(t, Options{})
	r := e.do("POST", "/api/v1/works", `{}`, "Content-Type", "application/json").want(t, http.StatusCreated)
	if r.Header.Get(PositionHeader) != "" || len(r.Header.Values("Set-Cookie")) != 0 {
		t.Errorf("write answer without a replica: %s %q, cookies %q", PositionHeader, r.Header.Get(PositionHeader), r.Header.Values("Set-Cookie"))
	}
	e.do("GET", "/api/v1/search?q=x", nil, PositionHeader, "not a position").want(t, http.StatusOK)
}
