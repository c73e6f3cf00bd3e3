package http

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestExternalContentAllowList checks that external content is an open
// redirect to nowhere: refused without an allow-list, refused to internal
// addresses, and refused at GET when the list no longer allows a link.
func TestExternalContentAllowList(t *testing.T) {
	link := func(target string) string {
		return `<` + target + `>; rel="http://fedora.info/definitions/fcrepo#ExternalContent"`
	}
	// The default: no external content at all.
	e := newEnv(t, Options{})
	up := "/api/v1/resources/" + string(e.fileset(t)) + "/files"
	before := e.counts()
	r := e.do("POST", up, nil, "Link", link("https://images.example.org/a.jp2"))
	if r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID); !contains(r.Body, "external-content-allow") {
		t.Errorf("refusal does not name the setting: %s", r.Body)
	}
	e.wantCounts(before)

	allow := []string{"https://images.example.org/iiif/", "https://"}
	e = newEnv(t, Options{ExternalContentAllow: allow})
	up = "/api/v1/resources/" + string(e.fileset(t)) + "/files"
	before = e.counts()
	for _, target := range []string{
		"http://169.254.169.254/latest/meta-data/", "https://169.254.169.254/latest/meta-data/",
		"http://127.0.0.1/", "https://127.0.0.1/admin", "https://[::1]/", "https://10.0.0.1/x",
		"file:///etc/passwd", "https://localhost/x", "https://images.example.org/iiif/../x",
	} {
		r := e.do("POST", up, nil, "Link", link(target))
		r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
		r.wantNoWrites(t)
	}
	e.wantCounts(before)
	r = e.do("POST", up, nil, "Link", link("https://images.example.org/iiif/a.jp2")).want(t, http.StatusCreated)
	var f resource
	r.json(t, &f)
	if r = e.do("GET", f.Links["content"], nil); r.Status != http.StatusTemporaryRedirect || r.Header.Get("Location") != "https://images.example.org/iiif/a.jp2" {
		t.Errorf("allowed content: %d, Location %q", r.Status, r.Header.Get("Location"))
	}
	// The operator narrows the list: the stored link is no longer
	// followed.
	e.reconfigure(func(o *Options) { o.ExternalContentAllow = []string{"https://other.example.org/"} })
	r = e.do("GET", f.Links["content"], nil)
	r.wantError(t, http.StatusForbidden, shelfmark.EFORBIDDEN)
	if r.Header.Get("Location") != "" {
		t.Errorf("refused content still redirects to %q", r.Header.Get("Location"))
	}
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }

// TestExternalContentNotGlobal: behind a prefix that names no host, a
// link to an address that is not globally routable (shared, benchmarking,
// IETF, reserved; loopback or private inside NAT64, 6to4, IPv4-mapped or
// IPv4-compatible IPv6; full-width digits) is refused with 400 and
// nothing written; a prefix naming the host allows it.
func TestExternalContentNotGlobal(t *testing.T) {
	link := func(target string) string {
		return `<` + target + `>; rel="http://fedora.info/definitions/fcrepo#ExternalContent"`
	}
	e := newEnv(t, Options{ExternalContentAllow: []string{"https://", "http://", "https://100.64.0.7/named/"}})
	up := "/api/v1/resources/" + string(e.fileset(t)) + "/files"
	before := e.counts()
	for _, target := range []string{
		"https://100.64.0.1/a", "https://192.0.0.170/a", "https://198.18.0.1/a", "https://240.0.0.1/a", "https://255.255.255.255/a",
		"https://[64:ff9b::7f00:1]/a", "https://[64:ff9b::a9fe:a9fe]/latest/meta-data/", "https://[::ffff:7f00:1]/a",
		"https://[::127.0.0.1]/a", "https://[2002:7f00:1::1]/a", "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/a",
		"https://[fe80::1%25eth0]/a", "https://１２７.０.０.１/a", "https://[64:ff9b:1::a00:1]/a",
	} {
		r := e.do("POST", up, nil, "Link", link(target))
		if r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID); !contains(r.Body, "not globally routable") {
			t.Errorf("%s: the refusal does not say why: %s", target, r.Body)
		}
		r.wantNoWrites(t)
	}
	e.wantCounts(before)
	r := e.do("POST", up, nil, "Link", link("https://100.64.0.7/named/a.jp2")).want(t, http.StatusCreated)
	var f resource
	r.json(t, &f)
	if r = e.do("GET", f.Links["content"], nil); r.Status != http.StatusTemporaryRedirect || r.Header.Get("Location") != "https://100.64.0.7/named/a.jp2" {
		t.Errorf("a host its prefix names: %d, Location %q", r.Status, r.Header.Get("Location"))
	}
}
