package http

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestJSONLoneSurrogates sends a \u escape of half a UTF-16 surrogate pair,
// which encoding/json would silently store as U+FFFD, in the JSON bodies of
// the API: each is refused with 400 naming the position; a whole pair (an
// emoji) is stored as its character.
func TestJSONLoneSurrogates(t *testing.T) {
	e := newEnv(t, Options{})
	work := e.create("/api/v1/works", `{}`)
	self := "/api/v1/resources/" + string(work.ID)
	before := e.counts()
	for _, bad := range []string{`a\ud800b`, `a\udc00`, `\ud800\u0041`, `\\\ud800`} {
		for _, c := range []struct{ method, path, ctype, body string }{
			{"POST", "/api/v1/works", "application/json", `{"metadata": {"dcterms:title": "` + bad + `"}}`},
			{"POST", "/api/v1/works", "application/ld+json", `{"@id": "", "http://purl.org/dc/terms/title": "` + bad + `"}`},
			{"POST", "/api/v1/batch", "application/json", `{"resources": [{"kind": "work", "metadata": {"dcterms:title": "` + bad + `"}}]}`},
			{"POST", "/api/v1/groups", "application/json", `{"groups": [{"sourceKey": "` + bad + `", "resources": [{"ref": "w", "kind": "work"}]}]}`},
			{"POST", "/api/v1/sources/lookup", "application/json", `{"keys": ["` + bad + `"]}`},
			{"PATCH", self, "application/json", `{"add": {"dcterms:title": "` + bad + `"}}`},
		} {
			r := e.do(c.method, c.path, c.body, "Content-Type", c.ctype)
			eb := r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
			if !strings.Contains(eb.Message, "surrogate") || eb.Details["line"] != float64(1) {
				t.Errorf("%s %s %s: %s", c.method, c.path, bad, r.Body)
			}
			r.wantNoDataWrites(t)
		}
	}
	e.wantCounts(before)
	// An escaped backslash before "ud800" is no escape; a whole pair is a
	// character.
	got := e.create("/api/v1/works", `{"metadata": {"dcterms:title": "\\ud800 \ud83d\ude00"}}`)
	if string(got.Metadata) != `{"dcterms:title":"\\ud800 😀"}` {
		t.Errorf("stored %s", got.Metadata)
	}
}
