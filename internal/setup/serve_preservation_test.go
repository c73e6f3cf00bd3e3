package setup

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
)

// TestServePreservation: `serve` keeps the preservation copy in DATA/ocfl
// by default: a work created over the REST API gets its first version
// there once its window has passed, a valid OCFL object; /readyz and
// /metrics report the copy.
func TestServePreservation(t *testing.T) {
	base, data := serveInTemp(t, ServeConfig{preservation: preservationFlags{window: 50 * time.Millisecond}})
	waitServing(t, base)
	hc := withBearer(&http.Client{Timeout: 10 * time.Second}, adminToken(t, data))
	w := createWork(t, hc, base, "kept")
	fsys, err := ocfl.NewDirFS(filepath.Join(data, "ocfl"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := ocfl.OpenRoot(context.Background(), fsys)
	if err != nil {
		t.Fatal(err)
	}
	var obj *ocfl.Object
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		obj, err = root.Open(context.Background(), preserve.ObjectID(shelfmark.ID(w.ID)))
		if err == nil {
			break
		}
		if !errors.Is(err, ocfl.ErrNotFound) || time.Since(start) > 20*time.Second {
			t.Fatalf("the work's object never appeared: %v", err)
		}
	}
	if rep := ocfl.ValidateObject(context.Background(), fsys, obj.Dir()); !rep.Valid() {
		t.Fatalf("object: %s", rep)
	}
	state, err := obj.State(obj.Head())
	if err != nil || state[preserve.RecordPath] == "" || state[preserve.MetadataPath] == "" {
		t.Fatalf("state %v, %v", state, err)
	}
	status, body, err := do(hc, http.MethodGet, base+"/readyz", "", nil, nil)
	if err != nil || status != 200 || !strings.Contains(string(body), "preservation copy: ok") {
		t.Fatalf("readyz: %d %s %v", status, body, err)
	}
	status, body, err = do(hc, http.MethodGet, base+"/metrics", "", nil, nil)
	if err != nil || status != 200 || !strings.Contains(string(body), "shelfmark_preservation_lag_seconds") ||
		!strings.Contains(string(body), "shelfmark_preservation_versions_total") {
		t.Fatalf("metrics: %d %v", status, err)
	}
}
