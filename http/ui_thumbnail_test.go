package http

// Tests of the choice of the page that represents a work, from the pages
// page: the chosen page's thumbnail is the work's in search results and
// in "My works", the first page's again once the choice is taken back; a
// page the reader may not see is never shown (the first page's instead);
// a page of another work, a page that is no id, a form without its
// version and a stale version are refused with nothing changed, as is
// someone who may not change the work; and a search page whose work has
// a chosen page costs the statements of one without.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

func TestUIThumbnailPage(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		be := newBulkEnv(t, backend, Options{})
		ctx := context.Background()
		atlas := book(t, be.policyEnv, 3, shelfmark.Public, titled("Atlas of the Rhine"))
		other := book(t, be.policyEnv, 1, shelfmark.Public, titled("Atlas of the Main"))
		pages := children(t, be.testEnv, atlas.ID)
		if err := shelfmark.NewSearchIndexer(be.store, shelfmark.IndexerOptions{}).CatchUp(ctx); err != nil {
			t.Fatal(err)
		}
		thumbOf := func(work, page shelfmark.ID) string {
			t.Helper()
			files, err := be.repo.ChildFiles(ctx, work, []shelfmark.ID{page})
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
		first, third := thumbOf(atlas.ID, pages[0]), thumbOf(atlas.ID, pages[2])
		img := regexp.MustCompile(`<img class="thumb" src="([^"]+)" alt="" loading="lazy">`)
		found := func(b *visitor) (string, []string) {
			t.Helper()
			p := b.get("/search?q=title:rhine")
			if p.Status != http.StatusOK {
				t.Fatalf("search: %d", p.Status)
			}
			stmts := be.do("GET", "/search?q=title:rhine", nil, as("", "Accept", "text/html")...).want(t, http.StatusOK).Stmts
			m := img.FindStringSubmatch(p.Body)
			if m == nil {
				return "", stmts
			}
			return m[1], stmts
		}
		anon := newVisitor(t, be.testEnv)
		admin := be.signedIn("admin")
		_, before := found(anon)
		version := func() string { return strconv.FormatInt(find(t, be.testEnv, atlas.ID).Version, 10) }
		action := "/works/" + string(atlas.ID) + "/thumbnail"
		pagesPage := admin.get("/works/" + string(atlas.ID) + "/pages")
		if !strings.Contains(pagesPage.Body, `formaction="`+action+`"`) || !strings.Contains(pagesPage.Body, `value="`+string(pages[2])+`"`) {
			t.Fatalf("the pages page has no button to choose the thumbnail: %d", pagesPage.Status)
		}

		// refused: nothing changes
		v := version()
		for _, tc := range []struct {
			name   string
			form   url.Values
			status int
		}{
			{"a page of another work", url.Values{"version": {v}, "page": {string(children(t, be.testEnv, other.ID)[0])}}, 400},
			{"the work itself", url.Values{"version": {v}, "page": {string(atlas.ID)}}, 400},
			{"a page that is no id", url.Values{"version": {v}, "page": {"no id"}}, 400},
			{"no version", url.Values{"page": {string(pages[2])}}, 400},
			{"a stale version", url.Values{"version": {"1000"}, "page": {string(pages[2])}}, 409},
		} {
			if p := admin.post(action, tc.form); p.Status != tc.status {
				t.Errorf("%s: %d, want %d: %.300s", tc.name, p.Status, tc.status, p.Body)
			}
		}
		stranger := be.signedIn("other")
		stranger.get("/workspace")
		if p := stranger.post(action, url.Values{"version": {v}, "page": {string(pages[2])}}); p.Status != 404 && p.Status != 403 {
			t.Errorf("someone who may not change the work: %d", p.Status)
		}
		if got := version(); got != v {
			t.Fatalf("refused forms changed the work: version %s, was %s", got, v)
		}
		if got, _ := found(anon); got != first {
			t.Fatalf("before a choice: %q, want the first page's %s", got, first)
		}

		// chosen: the third page's thumbnail in search, for everyone who may see it
		p := admin.post(action, url.Values{"version": {v}, "page": {string(pages[2])}})
		if p.Status != 303 || !strings.Contains(p.Header.Get("Location"), "notice=thumbnailsaved") {
			t.Fatalf("choosing: %d %s %.300s", p.Status, p.Header.Get("Location"), p.Body)
		}
		if p := admin.get(p.Header.Get("Location")); !strings.Contains(p.Body, "The work’s thumbnail was chosen.") {
			t.Errorf("the notice is not shown")
		}
		got, after := found(anon)
		if got != third {
			t.Fatalf("after the choice: %q, want the third page's %s", got, third)
		}
		if len(after) != len(before) {
			t.Errorf("a search page ran %d statements with a chosen page, %d without:\n%s", len(after), len(before), strings.Join(after, "\n"))
		}
		if r := be.do("GET", "/api/v1/search?q=title:rhine", nil, as("")...).want(t, http.StatusOK); !strings.Contains(string(r.Body), strings.TrimSuffix(strings.TrimPrefix(third, "/api/v1/resources/"), "/content")) {
			t.Errorf("the API's hit does not name the chosen page's thumbnail: %s", r.Body)
		}
		// the work page leaves the choice out of the metadata it lists, and
		// describes the work with the chosen page's thumbnail
		wp := anon.get("/works/" + string(atlas.ID))
		if strings.Contains(wp.Body, "urn:shelfmark:") {
			t.Errorf("the work page shows the chosen page's IRI")
		}
		var ld struct {
			Thumbnail string `json:"thumbnailUrl"`
		}
		if m := regexp.MustCompile(`(?s)<script type="application/ld\+json"[^>]*>(.*?)</script>`).FindStringSubmatch(wp.Body); m == nil {
			t.Errorf("the work page has no JSON-LD")
		} else if err := json.Unmarshal([]byte(m[1]), &ld); err != nil || !strings.HasSuffix(ld.Thumbnail, third) {
			t.Errorf("the work page's JSON-LD thumbnail: %q (%v), want the chosen page's %s", ld.Thumbnail, err, third)
		}
		// the edit form neither shows the choice nor drops it
		if p := admin.get("/works/" + string(atlas.ID) + "/edit"); p.Status != 200 || strings.Contains(p.Body, "urn:shelfmark:") || strings.Contains(p.Body, shelfmark.PredThumbnailPage) {
			t.Errorf("the edit form shows the chosen page: %d", p.Status)
		}
		if p := admin.post("/works/"+string(atlas.ID)+"/edit", url.Values{"version": {version()}, "field": {shelfmark.NSDC + "title"},
			"value": {"Atlas of the Rhine, revised"}, "kind": {""}}); p.Status != 303 {
			t.Fatalf("saving the edit form: %d %.300s", p.Status, p.Body)
		}
		if res := find(t, be.testEnv, atlas.ID); shelfmark.ThumbnailPageOf(res.Metadata) != pages[2] || titleValue(res) != "Atlas of the Rhine, revised" {
			t.Errorf("after the edit form: title %q, chosen page %q", titleValue(res), shelfmark.ThumbnailPageOf(res.Metadata))
		}

		// the chosen page made private: the first page's to who may not see it
		private := shelfmark.Private
		if _, err := be.repo.UpdateResource(ctx, pages[2], shelfmark.ResourceUpdate{Visibility: &private}); err != nil {
			t.Fatal(err)
		}
		if got, _ := found(anon); got != first {
			t.Errorf("a private chosen page to an anonymous reader: %q, want the first page's %s", got, first)
		}
		if got, _ := found(admin); got != third {
			t.Errorf("a private chosen page to the administrator: %q, want %s", got, third)
		}

		// taken back: the first page again
		if p := admin.post(action, url.Values{"version": {version()}, "page": {""}}); p.Status != 303 {
			t.Fatalf("taking the choice back: %d %.300s", p.Status, p.Body)
		}
		if got, _ := found(admin); got != first {
			t.Errorf("after the choice was taken back: %q, want %s", got, first)
		}
	})
}
