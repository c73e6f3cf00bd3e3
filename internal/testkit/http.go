// Package testkit holds the helpers the test suites of the commands share
// (the server's own tests, the commands' tests and the end-to-end suites):
// requests with a token, waiting for a server, free ports, test content,
// PostgreSQL schemas and S3 listings. Only tests import it.
package testkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// Do sends a request and reads the whole answer.
func Do(hc *http.Client, method, url, ctype string, body []byte, hdr http.Header) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return 0, nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, err
	}
	return resp.StatusCode, b, nil
}

// FreePort returns a loopback port free at the moment (another process may
// take it before the caller listens).
func FreePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// WorkMetadata is the metadata of the work with a token: 54 statements,
// literals plain, tagged and typed, and IRIs.
func WorkMetadata(token string) []byte {
	subjects := make([]string, 40)
	for i := range subjects {
		subjects[i] = fmt.Sprintf("subject %d of %s", i, token)
	}
	relations := make([]map[string]string, 6)
	for i := range relations {
		relations[i] = map[string]string{"@id": fmt.Sprintf("https://example.org/crash/%s/%d", token, i)}
	}
	descriptions := make([]string, 5)
	for i := range descriptions {
		descriptions[i] = fmt.Sprintf("Beschreibung %d für %s ✓ \"quoted\"\nline two", i, token)
	}
	b, err := json.Marshal(map[string]any{
		"dcterms:identifier": token,
		"dcterms:title":      map[string]string{"@value": "Work " + token, "@language": "en"},
		"dcterms:date":       map[string]string{"@value": "2024-02-29", "@type": "xsd:date"},
		"dcterms:subject":    subjects,
		"dcterms:relation":   relations,
		"dc:description":     descriptions,
	})
	if err != nil {
		panic(err)
	}
	return b
}

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

// WithBearer returns a copy of hc that sends token with every request.
func WithBearer(hc *http.Client, token string) *http.Client {
	c := *hc
	c.Transport = bearerTransport{token: token, next: hc.Transport}
	return &c
}

// WaitServing polls base/readyz until it answers 200 (a minute at most, as
// the machine may be busy).
func WaitServing(t testing.TB, base string) {
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

// CreateWork creates a work over the REST API once the server answers.
func CreateWork(t *testing.T, hc *http.Client, base, token string) struct{ ID string } {
	t.Helper()
	var status int
	var resp []byte
	var err error
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(50 * time.Millisecond) {
		status, resp, err = Do(hc, http.MethodPost, base+"/api/v1/works", "application/json", []byte(`{"metadata": `+string(WorkMetadata(token))+`}`), nil)
		if err == nil {
			break
		}
	}
	if status != http.StatusCreated {
		t.Fatalf("create work: %d %s %v", status, resp, err)
	}
	var w struct{ ID string }
	if err := json.Unmarshal(resp, &w); err != nil {
		t.Fatal(err)
	}
	return w
}
