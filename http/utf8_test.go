package http

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestJSONBodiesMustBeUTF8 sends a byte that is not UTF-8 inside a string of
// every JSON body the API reads: each is refused with 400 naming the
// position, and nothing is stored (encoding/json alone would replace the
// byte with U+FFFD and store that).
func TestJSONBodiesMustBeUTF8(t *testing.T) {
	e := newEnv(t, Options{})
	coll := e.create("/api/v1/collections", `{}`)
	work := e.create("/api/v1/works", `{}`)
	self := "/api/v1/resources/" + string(work.ID)
	const bad = "bad \xff byte"
	cases := []struct {
		method, path, ctype, body string
	}{
		{"POST", "/api/v1/works", "application/json", `{"metadata": {"dcterms:title": "` + bad + `"}}`},
		{"POST", "/api/v1/collections", "application/json; charset=utf-8", `{"metadata": {"dcterms:title": "` + bad + `"}}`},
		{"POST", "/api/v1/works", "application/ld+json", `{"@id": "", "http://purl.org/dc/terms/title": "` + bad + `"}`},
		{"POST", "/api/v1/batch", "application/json", `{"resources": [{"kind": "work", "metadata": {"dcterms:title": "` + bad + `"}}]}`},
		{"POST", "/api/v1/groups", "application/json", `{"groups": [{"resources": [{"ref": "w", "kind": "work", "metadata": {"dcterms:title": "` + bad + `"}}]}]}`},
		{"POST", "/api/v1/groups", "application/json", `{"groups": [{"sourceKey": "` + bad + `", "resources": [{"ref": "w", "kind": "work"}]}]}`},
		{"POST", "/api/v1/sources/lookup", "application/json", `{"keys": ["` + bad + `"]}`},
		{"PUT", self, "application/json", `{"metadata": {"dcterms:title": "` + bad + `"}}`},
		{"PUT", self, "application/ld+json", `{"@id": "", "http://purl.org/dc/terms/title": "` + bad + `"}`},
		{"PATCH", self, "application/json", `{"add": {"dcterms:title": "` + bad + `"}}`},
		{"POST", "/api/v1/resources/" + string(coll.ID) + "/members", "application/json", `{"members": ["` + bad + `"]}`},
		{"PUT", self + "/order", "application/json", `{"children": ["` + bad + `"]}`},
		{"POST", "/api/v1/jobs/ocr/retry", "application/json", `{"ids": [1], "x": "` + bad + `"}`},
	}
	before := e.counts()
	for _, c := range cases {
		var hdrs []string
		if c.ctype != "" {
			hdrs = []string{"Content-Type", c.ctype}
		}
		r := e.do(c.method, c.path, c.body, hdrs...)
		eb := r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
		if !strings.Contains(eb.Message, "UTF-8") {
			t.Errorf("%s %s (%s): message %q does not say UTF-8", c.method, c.path, c.ctype, eb.Message)
		}
		if eb.Details["line"] != float64(1) || eb.Details["column"] == nil {
			t.Errorf("%s %s (%s): details %v do not name the position", c.method, c.path, c.ctype, eb.Details)
		}
		r.wantNoDataWrites(t)
	}
	e.wantCounts(before)
	if got := e.get(work.ID); string(got.Metadata) != `{}` {
		t.Errorf("work metadata %s", got.Metadata)
	}
}
