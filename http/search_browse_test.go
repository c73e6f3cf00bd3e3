package http

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestSearchBrowse: GET /api/v1/search without q but with a collection
// lists what the collection holds in public view (the work's record, then
// its pages), with the total and facets, paged by the cursor; without q
// and without a collection it lists everything the caller may read,
// newest first; a q without words is a 400.
func TestSearchBrowse(t *testing.T) {
	f := newSearchFixture(t)
	want := append([]shelfmark.ID{f.work}, f.pages...)
	for _, q := range []string{"collection=" + string(f.coll), "q=+&collection=" + string(f.coll)} {
		b, _ := f.search(t, q)
		var ids []shelfmark.ID
		for _, h := range b.Hits {
			ids = append(ids, h.ID)
			if h.Work != f.work || h.Score != 0 || h.Title != "Whales & <whalers>" {
				t.Fatalf("%s: hit %+v", q, h)
			}
		}
		if !slices.Equal(ids, want) {
			t.Fatalf("%s: hits %v, want %v", q, ids, want)
		}
		if b.Total == nil || *b.Total != 4 || *b.Estimated ||
			!slices.Equal(b.Facets.Format, []facetJSON{{Value: "PDF", Count: 2}, {Value: "TIFF", Count: 1}}) {
			t.Fatalf("%s: total %v, facets %+v", q, b.Total, b.Facets)
		}
	}
	if b, _ := f.search(t, "collection="+string(f.coll)+"&format=TIFF"); len(b.Hits) != 1 || b.Hits[0].ID != f.pages[2] {
		t.Fatalf("a format filter: %+v", b.Hits)
	}
	// paging: the next link walks the same order
	var walked []shelfmark.ID
	query := "collection=" + string(f.coll) + "&limit=3"
	for range 5 {
		b, _ := f.search(t, query)
		for _, h := range b.Hits {
			walked = append(walked, h.ID)
		}
		if b.Next == "" {
			break
		}
		query = "collection=" + string(f.coll) + "&limit=3&cursor=" + url.QueryEscape(b.Next)
	}
	if !slices.Equal(walked, want) {
		t.Fatalf("paged: %v, want %v", walked, want)
	}
	for _, q := range []string{"q=*", "q=%22%22&kind=work", "q=*&collection=" + string(f.coll)} {
		f.e.do("GET", "/api/v1/search?"+q, nil).wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	}
	// everything, newest first: the pages (made after the work) from the
	// last, then the work, then the collection
	for _, q := range []string{"", "q=", "q=+", "kind=fileset"} {
		var b searchBody
		f.e.do("GET", "/api/v1/search?"+q, nil, as("")...).want(t, http.StatusOK).json(t, &b)
		var ids []shelfmark.ID
		for _, h := range b.Hits {
			ids = append(ids, h.ID)
		}
		want := []shelfmark.ID{f.pages[2], f.pages[1], f.pages[0], f.work, f.coll}
		if q == "kind=fileset" {
			want = want[:3]
		}
		if !slices.Equal(ids, want) || b.Total == nil || *b.Total != int64(len(want)) {
			t.Errorf("%q: %v (total %v), want %v", q, ids, b.Total, want)
		}
	}
}
