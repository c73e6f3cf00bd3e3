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
	e.srv.opts.ExternalContentAllow = []string{"https://other.example.org/"}
	r = e.do("GET", f.Links["content"], nil)
	r.wantError(t, http.StatusForbidden, shelfmark.EFORBIDDEN)
	if r.Header.Get("Location") != "" {
		t.Errorf("refused content still redirects to %q", r.Header.Get("Location"))
	}
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }
