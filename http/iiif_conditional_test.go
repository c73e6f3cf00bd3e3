package http

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// TestIIIFConditional: a public work's manifest, read anonymously, is
// public for two minutes with a tag, answered 304 for it (GET and HEAD);
// once the cached manifest has stood a full second unchanged it carries a
// Last-Modified, answered 304 for If-Modified-Since. An edit of the work
// gives a new tag and a later date, so neither old validator is answered
// 304. A collection's IIIF Collection is revalidated by its tag; a
// private work's manifest, read by its administrator, is private and
// still answered 304 for its own tag.
func TestIIIFConditional(t *testing.T) {
	clock := &testClock{}
	e := newPolicyEnv(t, "sqlite", Options{Now: clock.now})
	ctx := context.Background()
	coll := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled("Herbals")}})[0]
	work, _ := scannedBook(t, e, 2, shelfmark.Public, titled("A herbal"), coll.ID)
	manifest := "/iiif/" + string(work.ID) + "/manifest"
	anon := func(method, path string, hdrs ...string) *response {
		return e.do(method, path, nil, append([]string{"Authorization", ""}, hdrs...)...)
	}

	r := anon("GET", manifest)
	tag := r.Header.Get("ETag")
	if r.Status != http.StatusOK || tag == "" || r.Header.Get("Cache-Control") != "public, max-age=120" || r.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("manifest: %d, ETag %q, Cache-Control %q", r.Status, tag, r.Header.Get("Cache-Control"))
	}
	wantVaryNames(t, "manifest", r.Header, "Cookie", "Authorization")
	if lm := r.Header.Get("Last-Modified"); lm != "" {
		t.Errorf("a manifest just built carries a date %q before its second is over", lm)
	}
	clock.advance(3 * time.Second)
	r = anon("GET", manifest)
	lm := r.Header.Get("Last-Modified")
	if r.Status != http.StatusOK || r.Header.Get("ETag") != tag || lm == "" {
		t.Fatalf("the cached manifest: %d, ETag %q (was %q), Last-Modified %q", r.Status, r.Header.Get("ETag"), tag, lm)
	}
	for _, method := range []string{"GET", "HEAD"} {
		for _, cond := range [][]string{{"If-None-Match", tag}, {"If-Modified-Since", lm}} {
			nm := anon(method, manifest, cond...)
			if nm.Status != http.StatusNotModified || len(nm.Body) != 0 || nm.Header.Get("ETag") != tag || nm.Header.Get("Cache-Control") != "public, max-age=120" {
				t.Errorf("%s manifest %s: %d, %v", method, cond[0], nm.Status, nm.Header)
			}
		}
	}

	meta := titled("A herbal, revised")
	if _, err := e.repo.UpdateResource(ctx, work.ID, shelfmark.ResourceUpdate{Replace: &meta}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []time.Duration{0, 3 * time.Second} { // rebuilt, then cached past its second
		clock.advance(step)
		for _, cond := range [][]string{{"If-None-Match", tag}, {"If-Modified-Since", lm}, {"If-None-Match", tag, "If-Modified-Since", lm}} {
			r := anon("GET", manifest, cond...)
			if r.Status != http.StatusOK || r.Header.Get("ETag") == tag || !strings.Contains(string(r.Body), "revised") {
				t.Errorf("after an edit (+%v), %v: %d, ETag %q", step, cond, r.Status, r.Header.Get("ETag"))
			}
			if got := r.Header.Get("Last-Modified"); got == lm {
				t.Errorf("after an edit (+%v): the old date %q", step, got)
			}
		}
	}

	// a IIIF Collection is a list: a tag, no date
	collPath := "/iiif/" + string(coll.ID) + "/collection"
	c := anon("GET", collPath)
	ctag := c.Header.Get("ETag")
	if c.Status != http.StatusOK || ctag == "" || c.Header.Get("Last-Modified") != "" {
		t.Fatalf("collection: %d, ETag %q, Last-Modified %q", c.Status, ctag, c.Header.Get("Last-Modified"))
	}
	if nm := anon("GET", collPath, "If-None-Match", ctag); nm.Status != http.StatusNotModified {
		t.Errorf("collection If-None-Match: %d", nm.Status)
	}
	private := shelfmark.Private
	if _, err := e.repo.UpdateResource(ctx, work.ID, shelfmark.ResourceUpdate{Visibility: &private}); err != nil {
		t.Fatal(err)
	}
	if r := anon("GET", collPath, "If-None-Match", ctag); r.Status != http.StatusOK || r.Header.Get("ETag") == ctag {
		t.Errorf("collection after its member was made private: %d, ETag %q", r.Status, r.Header.Get("ETag"))
	}
	if r := anon("GET", manifest, "If-None-Match", tag); r.Status != http.StatusNotFound {
		t.Errorf("the private work's manifest, anonymously: %d", r.Status)
	}
	// the administrator's view of the private work: private, with a tag
	a := e.do("GET", manifest, nil)
	if a.Status != http.StatusOK || !strings.HasPrefix(a.Header.Get("Cache-Control"), "private") || a.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("the private manifest: %d, Cache-Control %q", a.Status, a.Header.Get("Cache-Control"))
	}
	if nm := e.do("GET", manifest, nil, "If-None-Match", a.Header.Get("ETag")); nm.Status != http.StatusNotModified || strings.Contains(nm.Header.Get("Cache-Control"), "public") {
		t.Errorf("the private manifest with its tag: %d, Cache-Control %q", nm.Status, nm.Header.Get("Cache-Control"))
	}
}

// TestIIIFImageConditional: info.json carries a tag (one per media type
// it is sent as) and, once the pyramid's row has settled, a
// Last-Modified; both are answered 304, as a tile's tag is. Anonymous
// readers get public answers, revalidated at every use.
func TestIIIFImageConditional(t *testing.T) {
	tools := needVips(t)
	clock := &testClock{}
	e := newPolicyEnv(t, "sqlite", Options{Now: clock.now})
	w := e.createAll(context.Background(), []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Visibility: shelfmark.Public, Metadata: titled("Gradient")}})[0]
	fs, _ := tiledPage(t, e, tools, w.ID, gradient(t, 1200, 700))
	info := "/iiif/" + string(fs.ID) + "/image/info.json"
	anon := func(path string, hdrs ...string) *response {
		return e.do("GET", path, nil, append([]string{"Authorization", ""}, hdrs...)...)
	}
	r := anon(info)
	tag := r.Header.Get("ETag")
	if r.Status != http.StatusOK || tag == "" || r.Header.Get("Cache-Control") != "public, no-cache" || r.Header.Get("Last-Modified") != "" {
		t.Fatalf("info.json: %d, ETag %q, Cache-Control %q, Last-Modified %q", r.Status, tag, r.Header.Get("Cache-Control"), r.Header.Get("Last-Modified"))
	}
	wantVaryNames(t, "info.json", r.Header, "Accept")
	if ld := anon(info, "Accept", "application/ld+json"); ld.Header.Get("ETag") == tag || ld.Header.Get("ETag") == "" {
		t.Errorf("info.json as JSON-LD has the tag of plain JSON: %q", ld.Header.Get("ETag"))
	}
	clock.advance(3 * time.Second)
	r = anon(info)
	lm := r.Header.Get("Last-Modified")
	if r.Header.Get("ETag") != tag || lm == "" {
		t.Fatalf("info.json later: ETag %q, Last-Modified %q", r.Header.Get("ETag"), lm)
	}
	for _, cond := range [][]string{{"If-None-Match", tag}, {"If-Modified-Since", lm}} {
		if nm := anon(info, cond...); nm.Status != http.StatusNotModified || len(nm.Body) != 0 || nm.Header.Get("Content-Type") != "" {
			t.Errorf("info.json %s: %d %v", cond[0], nm.Status, nm.Header)
		}
	}
	if nm := anon(info, "If-None-Match", `"other"`, "If-Modified-Since", lm); nm.Status != http.StatusOK {
		t.Errorf("info.json, another tag with its date: %d, want 200", nm.Status)
	}
	tile := "/iiif/" + string(fs.ID) + "/image/0,0,512,512/512,/0/default.jpg"
	tr := anon(tile)
	if tr.Status != http.StatusOK || tr.Header.Get("ETag") == "" || tr.Header.Get("Cache-Control") != "public, no-cache" {
		t.Fatalf("tile: %d, ETag %q, Cache-Control %q", tr.Status, tr.Header.Get("ETag"), tr.Header.Get("Cache-Control"))
	}
	for _, cond := range [][]string{{"If-None-Match", tr.Header.Get("ETag")}, {"If-Modified-Since", tr.Header.Get("Last-Modified")}} {
		if nm := anon(tile, cond...); nm.Status != http.StatusNotModified || len(nm.Body) != 0 {
			t.Errorf("tile %s %q: %d", cond[0], cond[1], nm.Status)
		}
	}
	// a signed-in reader of the public page: the same bytes, not public
	if s := e.do("GET", tile, nil); s.Status != http.StatusOK || strings.Contains(s.Header.Get("Cache-Control"), "public") {
		t.Errorf("tile for the administrator: %d, Cache-Control %q", s.Status, s.Header.Get("Cache-Control"))
	}
}
