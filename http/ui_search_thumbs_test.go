package http

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// TestUISearchThumbnails: each hit of the search page shows a thumbnail:
// a work found by its record its first page's, a work found in its pages
// its best page's; none where the reader may not see it (the first page
// made private: hidden from an anonymous reader, shown to an
// administrator), on both backends; and a page of 20 works with
// thumbnails costs the statements of a page of one.
func TestUISearchThumbnails(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		ctx := context.Background()
		atlas := book(t, e, 3, shelfmark.Public, titled("Atlas of the Rhine"))
		kids, err := e.repo.ListChildren(ctx, atlas.ID, shelfmark.PageRequest{})
		if err != nil || len(kids.Items) != 3 {
			t.Fatalf("pages: %v", err)
		}
		thumbOf := func(page shelfmark.ID) string {
			t.Helper()
			files, err := e.repo.ChildFiles(ctx, atlas.ID, []shelfmark.ID{page})
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files[page] {
				if f.File.Use == shelfmark.UseThumbnail {
					return kit.ContentURL(f.ID)
				}
			}
			t.Fatalf("page %s has no thumbnail", page)
			return ""
		}
		first, second := thumbOf(kids.Items[0].ID), thumbOf(kids.Items[1].ID)
		for i := range 20 {
			book(t, e, 1, shelfmark.Public, titled("Survey sheet "+string(rune('a'+i))))
		}
		if err := shelfmark.NewSearchIndexer(e.store, shelfmark.IndexerOptions{}).CatchUp(ctx); err != nil {
			t.Fatal(err)
		}
		// the text of the second page
		if err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
			return tx.PutSearchDocs(ctx, []shelfmark.SearchDoc{{Key: key(t, kids.Items[1].ID), Work: key(t, atlas.ID),
				Kind: shelfmark.KindFileSet, Format: "TIFF", Body: "the weir at Kembs"}})
		}); err != nil {
			t.Fatal(err)
		}
		img := regexp.MustCompile(`<img class="thumb" src="([^"]+)" alt="" loading="lazy">`)
		thumbs := func(b *visitor, q string) []string {
			t.Helper()
			p := b.get("/search?q=" + q)
			if p.Status != http.StatusOK {
				t.Fatalf("%s: %d", q, p.Status)
			}
			var out []string
			for _, m := range img.FindAllStringSubmatch(p.Body, -1) {
				out = append(out, m[1])
			}
			return out
		}
		anon := newVisitor(t, e.testEnv)
		if got := thumbs(anon, "title:rhine"); len(got) != 1 || got[0] != first {
			t.Errorf("found by its record: %v, want the first page's %s", got, first)
		}
		if got := thumbs(anon, "kembs"); len(got) != 1 || got[0] != second {
			t.Errorf("found in its second page: %v, want that page's %s", got, second)
		}
		// the first page made private: its thumbnail is not shown to who
		// may not see it, and is to an administrator
		private := shelfmark.Private
		if _, err := e.repo.UpdateResource(ctx, kids.Items[0].ID, shelfmark.ResourceUpdate{Visibility: &private}); err != nil {
			t.Fatal(err)
		}
		if got := thumbs(anon, "title:rhine"); len(got) != 0 {
			t.Errorf("a private page's thumbnail shown to an anonymous reader: %v", got)
		}
		if r := anon.get(first); r.Status == http.StatusOK {
			t.Errorf("the private page's thumbnail itself answers %d", r.Status)
		}
		admin := newVisitor(t, e.testEnv)
		admin.signIn("admin", adminPassword)
		if got := thumbs(admin, "title:rhine"); len(got) != 1 || got[0] != first {
			t.Errorf("the administrator: %v, want %s", got, first)
		}
		// the REST search names the same files
		var body struct {
			Hits []struct {
				ID, Thumbnail string
			}
		}
		r := e.do("GET", "/api/v1/search?group=work&q=kembs", nil, as("")...).want(t, http.StatusOK)
		if err := json.Unmarshal(r.Body, &body); err != nil || len(body.Hits) != 1 || kit.ContentURL(shelfmark.ID(body.Hits[0].Thumbnail)) != second {
			t.Errorf("the API's hit: %s, want the thumbnail of %s", r.Body, second)
		}
		r = e.do("GET", "/api/v1/search?q=title:rhine", nil, as("")...).want(t, http.StatusOK)
		body.Hits = nil
		if err := json.Unmarshal(r.Body, &body); err != nil || len(body.Hits) != 1 || body.Hits[0].Thumbnail != "" {
			t.Errorf("the API's hit of a private first page to an anonymous caller: %s", r.Body)
		}
		// 20 hits with thumbnails cost what one does
		stmts := func(q string) []string {
			r := e.do("GET", "/search?q="+q, nil, as("", "Accept", "text/html")...).want(t, http.StatusOK)
			return r.Stmts
		}
		many, one := stmts("survey"), stmts("title:rhine")
		if n := len(thumbs(anon, "survey")); n != 20 {
			t.Errorf("survey: %d thumbnails, want 20", n)
		}
		if len(many) != len(one) {
			t.Errorf("a page of 20 hits ran %d statements, a page of one %d:\n%s", len(many), len(one), strings.Join(many, "\n"))
		}
	})
}
