package http

import (
	"net/http"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestWrongMethod: a path that exists answers another method with 405 and
// an Allow header; a path that does not exist answers 404; both as JSON.
func TestWrongMethod(t *testing.T) {
	e := newEnv(t, Options{})
	r := e.do("PATCH", "/api/v1/collections", nil)
	r.wantError(t, http.StatusMethodNotAllowed, EMETHOD)
	if got := r.Header.Get("Allow"); got != "POST" {
		t.Errorf("Allow %q, want POST", got)
	}
	r = e.do("POST", "/api/v1/resources/"+string(e.repo.IDs().Encode(1)), nil)
	r.wantError(t, http.StatusMethodNotAllowed, EMETHOD)
	if got := r.Header.Get("Allow"); !strings.Contains(got, "GET") || !strings.Contains(got, "DELETE") || !strings.Contains(got, "HEAD") {
		t.Errorf("Allow %q", got)
	}
	r.wantNoStatements(t)
	e.do("GET", "/api/v2/nothing", nil).wantError(t, http.StatusNotFound, shelfmark.ENOTFOUND)
}
