package http

import (
	"context"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

var (
	viewerMountRE  = regexp.MustCompile(`<div id="viewer-mount" class="viewer-mount" data-manifest="([^"]+)"(?: data-canvas="([^"]+)")? hidden></div>`)
	viewerScriptRE = regexp.MustCompile(`<script src="/static/viewer\.js\?v=[0-9a-f]+" nonce="([^"]+)" defer></script>`)
	styleNonceRE   = regexp.MustCompile(`style-src 'self' 'nonce-([^']+)';`)
)

// TestUIWorkViewer: a work page whose pages have images mounts the viewer
// (its script and Mirador linked, the manifest given, the page ?page=
// names opened) and allows style elements with a nonce of its own, fresh
// each response and given to the viewer's script only; a work page without
// images, and every other page, keeps the policy without one.
func TestUIWorkViewer(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	ctx := context.Background()
	w := book(t, e, 3, shelfmark.Public, titled("Atlas"))
	kids, err := e.repo.ListChildren(ctx, w.ID, shelfmark.PageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	b := newVisitor(t, e.testEnv)

	var nonces []string
	for range 2 {
		p := b.get("/works/" + string(w.ID))
		if p.Status != http.StatusOK {
			t.Fatalf("work page: %d %.300s", p.Status, p.Body)
		}
		m := viewerMountRE.FindStringSubmatch(p.Body)
		if m == nil {
			t.Fatalf("a work with page images has no viewer: %.2000s", p.Body)
		}
		if !strings.HasSuffix(m[1], "/iiif/"+string(w.ID)+"/manifest") || m[2] != "" {
			t.Errorf("viewer of the first pages: manifest %q, canvas %q", m[1], m[2])
		}
		if !strings.Contains(p.Body, `<script src="/static/vendor/mirador.min.js?v=`) || !strings.Contains(p.Body, `<link rel="stylesheet" href="/static/viewer.css?v=`) {
			t.Error("the work page with a viewer does not load Mirador and viewer.css")
		}
		csp := p.Header.Get("Content-Security-Policy")
		cm, sm := styleNonceRE.FindStringSubmatch(csp), viewerScriptRE.FindStringSubmatch(p.Body)
		if cm == nil || sm == nil || cm[1] != html.UnescapeString(sm[1]) {
			t.Fatalf("the policy's style nonce %v is not the viewer script's %v: %s", cm, sm, csp)
		}
		if !strings.Contains(csp, "script-src 'self';") || strings.Contains(csp, "unsafe") {
			t.Errorf("the viewer's policy relaxes more than style elements: %s", csp)
		}
		if strings.Count(p.Body, cm[1]) != 1 {
			t.Errorf("the nonce is on the page %d times, want once (the viewer's script)", strings.Count(p.Body, cm[1]))
		}
		nonces = append(nonces, cm[1])
	}
	if nonces[0] == nonces[1] || len(nonces[0]) < 16 {
		t.Errorf("nonces %q: want a fresh random one each response", nonces)
	}

	// ?page= opens the viewer at that page's canvas
	p := b.get("/works/" + string(w.ID) + "?page=" + string(kids.Items[1].ID))
	if m := viewerMountRE.FindStringSubmatch(p.Body); m == nil || !strings.HasSuffix(m[2], "/iiif/"+string(w.ID)+"/canvas/"+string(kids.Items[1].ID)) {
		t.Errorf("?page= of the second page: viewer %v", m)
	}
	// a page of another work (or none) opens the first
	other := book(t, e, 1, shelfmark.Public, titled("Other"))
	okids, err := e.repo.ListChildren(ctx, other.ID, shelfmark.PageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, pg := range []string{string(okids.Items[0].ID), "nosuchpage"} {
		p := b.get("/works/" + string(w.ID) + "?page=" + pg)
		if m := viewerMountRE.FindStringSubmatch(p.Body); m == nil || m[2] != "" {
			t.Errorf("?page=%s: viewer %v, want one at the first page", pg, m)
		}
	}

	// no images: the placeholder, no Mirador, the pages' usual policy
	plain := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Visibility: shelfmark.Public, Metadata: titled("Notes")}})[0]
	fs := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: plain.ID}})[0]
	txt := e.putBytes("notes.txt", "text/plain", []byte("some notes"))
	e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFile, Parent: fs.ID, File: txt}})
	for _, path := range []string{"/works/" + string(plain.ID), "/", "/search?q=atlas"} {
		p := b.get(path)
		if p.Status != http.StatusOK {
			t.Fatalf("%s: %d", path, p.Status)
		}
		if strings.Contains(p.Body, "mirador") || strings.Contains(p.Body, "viewer-mount") {
			t.Errorf("%s: a viewer on a page without page images", path)
		}
		if csp := p.Header.Get("Content-Security-Policy"); csp != uiCSP {
			t.Errorf("%s: policy %q, want %q", path, csp, uiCSP)
		}
	}
	if p := b.get("/works/" + string(plain.ID)); !strings.Contains(p.Body, "The page viewer is not available for this work yet") {
		t.Error("a work without page images lacks the viewer's placeholder")
	}
}
