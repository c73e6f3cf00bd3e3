package http

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// gunzip decompresses a body, failing the test if it is not gzip.
func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("gunzip: %v", err)
	}
	return out
}

func wantVary(t *testing.T, r *response) {
	t.Helper()
	if !strings.Contains(strings.Join(r.Header.Values("Vary"), ","), "Accept-Encoding") {
		t.Errorf("%s %s: Vary %q", r.Method, r.Path, r.Header.Values("Vary"))
	}
}

// TestGzip: API and OAI-PMH responses are gzipped for clients that accept
// gzip, and are the same bytes once decompressed; others, tiny bodies and
// file content (ranged or whole) are sent as they are.
func TestGzip(t *testing.T) {
	xml := []byte("<?xml version=\"1.0\"?>\n<OAI-PMH>" + strings.Repeat("<record><header><identifier>oai:x:1</identifier></header></record>\n", 400) + "</OAI-PMH>\n")
	e := newEnv(t, Options{OAI: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		w.Write(xml)
	})})
	var subjects []string
	for i := 0; i < 60; i++ {
		subjects = append(subjects, fmt.Sprintf(`"subject number %d of a long list"`, i))
	}
	big := e.create("/api/v1/works", `{"metadata": {"dc:title": "W", "dc:subject": [`+strings.Join(subjects, ",")+`]}}`)
	small := e.create("/api/v1/collections", `{}`)

	for _, path := range []string{"/api/v1/resources/" + string(big.ID), "/oai?verb=ListRecords&metadataPrefix=oai_dc", "/api/v1/openapi.json"} {
		plain := e.do("GET", path, nil).want(t, http.StatusOK)
		wantVary(t, plain)
		if plain.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s without Accept-Encoding: Content-Encoding %q", path, plain.Header.Get("Content-Encoding"))
		}
		for _, ae := range []string{"gzip", "gzip, deflate, br", "deflate;q=0.5, gzip;q=0.8"} {
			z := e.do("GET", path, nil, "Accept-Encoding", ae).want(t, http.StatusOK)
			wantVary(t, z)
			if z.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("%s with Accept-Encoding %q: Content-Encoding %q", path, ae, z.Header.Get("Content-Encoding"))
			}
			if got := gunzip(t, z.Body); !bytes.Equal(got, plain.Body) {
				t.Fatalf("%s: gzipped body differs once decompressed (%d vs %d bytes)", path, len(got), len(plain.Body))
			}
			if len(z.Body) >= len(plain.Body)/2 {
				t.Errorf("%s: %d bytes gzipped from %d", path, len(z.Body), len(plain.Body))
			}
			if z.Header.Get("Content-Type") != plain.Header.Get("Content-Type") {
				t.Errorf("%s: Content-Type %q gzipped, %q plain", path, z.Header.Get("Content-Type"), plain.Header.Get("Content-Type"))
			}
		}
		// gzip refused
		if r := e.do("GET", path, nil, "Accept-Encoding", "gzip;q=0, identity").want(t, http.StatusOK); r.Header.Get("Content-Encoding") != "" {
			t.Errorf("%s with gzip;q=0: Content-Encoding %q", path, r.Header.Get("Content-Encoding"))
		}
	}

	// a body too small to be worth it
	r := e.do("GET", "/api/v1/resources/"+string(small.ID), nil, "Accept-Encoding", "gzip").want(t, http.StatusOK)
	if r.Header.Get("Content-Encoding") != "" || len(r.Body) >= gzipMinSize {
		t.Errorf("small resource (%d bytes): Content-Encoding %q", len(r.Body), r.Header.Get("Content-Encoding"))
	}
	wantVary(t, r)

	// file content: the stored bytes, whole or ranged, even as text
	fs := e.create("/api/v1/filesets", `{"parent": "`+string(big.ID)+`"}`)
	text := strings.Repeat("plain text that would compress well. ", 500)
	up := e.do("POST", "/api/v1/resources/"+string(fs.ID)+"/files?name=a.txt", text, "Content-Type", "text/plain").want(t, http.StatusCreated)
	var f resource
	up.json(t, &f)
	cp := "/api/v1/resources/" + string(f.ID) + "/content"
	whole := e.do("GET", cp, nil, "Accept-Encoding", "gzip").want(t, http.StatusOK)
	if whole.Header.Get("Content-Encoding") != "" || string(whole.Body) != text {
		t.Errorf("content: Content-Encoding %q, %d bytes", whole.Header.Get("Content-Encoding"), len(whole.Body))
	}
	part := e.do("GET", cp, nil, "Accept-Encoding", "gzip", "Range", "bytes=100-2099").want(t, http.StatusPartialContent)
	if part.Header.Get("Content-Encoding") != "" || string(part.Body) != text[100:2100] {
		t.Errorf("ranged content: Content-Encoding %q, %d bytes", part.Header.Get("Content-Encoding"), len(part.Body))
	}

	// errors stay JSON a client can read (gzipped when large enough only)
	nf := e.do("GET", "/api/v1/resources/zzzzzzzzz", nil, "Accept-Encoding", "gzip")
	if nf.Status != http.StatusNotFound || nf.Header.Get("Content-Encoding") != "" {
		t.Errorf("not found: %d, Content-Encoding %q", nf.Status, nf.Header.Get("Content-Encoding"))
	}
}
