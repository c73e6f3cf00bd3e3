package main

import (
	"io"
	"net/http"
	"testing"
	"time"
)

// bearerTransport sends an API token as "Authorization: Bearer …" with
// every request, as a client of a server that requires credentials for
// writes does.
type bearerTransport struct {
	token string
	next  http.RoundTripper // http.DefaultTransport when nil
}

// RoundTrip sends a copy of r with the token.
func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	next := b.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

// withBearer returns a copy of hc that sends token with every request.
func withBearer(hc *http.Client, token string) *http.Client {
	c := *hc
	c.Transport = bearerTransport{token: token, next: hc.Transport}
	return &c
}

// waitServing polls base/readyz until it answers 200 (a minute at most, as
// the machine may be busy).
func waitServing(t testing.TB, base string) {
	t.Helper()
	hc := &http.Client{Timeout: 5 * time.Second}
	defer hc.CloseIdleConnections()
	var last string
	for start := time.Now(); time.Since(start) < time.Minute; time.Sleep(20 * time.Millisecond) {
		resp, err := hc.Get(base + "/readyz")
		if err != nil {
			last = err.Error()
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return
		}
		last = resp.Status
	}
	t.Fatalf("%s/readyz never answered 200: %s", base, last)
}
