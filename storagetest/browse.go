package storagetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// Browsing a collection (SearchQuery.Browse): a search without words but
// with a collection filter lists every visible document of the
// collection's direct members, newest member first, keyset-paged, with
// facets exact over a small collection and estimated over a large one at
// the same cost.

// browseEnv is a collection with public, private and embargoed members
// and documents written directly.
type browseEnv struct {
	e                         *env
	now                       time.Time
	coll, other               int64
	hidden, embColl           int64 // a private and an embargoed collection holding a
	a, b, priv, emb, outsider int64
	pages                     []int64 // a's, then priv's
}

func newBrowseEnv(t *testing.T, open Opener) *browseEnv {
	t.Helper()
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	create := func(nr *shelfmark.NewResource) int64 {
		t.Helper()
		return keyOf(t, rs(t)(e.repo.CreateResource(ctx, nr)).ID)
	}
	s := &browseEnv{e: e, now: time.Now().UTC()}
	s.coll = create(&shelfmark.NewResource{Kind: shelfmark.KindCollection})
	s.other = create(&shelfmark.NewResource{Kind: shelfmark.KindCollection})
	in := []shelfmark.ID{e.repo.IDs().Encode(s.coll)}
	future := s.now.Add(365 * 24 * time.Hour)
	s.hidden = create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Visibility: shelfmark.Private})
	s.embColl = create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Embargo: &future})
	s.a = create(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: append(in, e.repo.IDs().Encode(s.other),
		e.repo.IDs().Encode(s.hidden), e.repo.IDs().Encode(s.embColl))})
	s.priv = create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Private, MemberOf: in})
	s.emb = create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Embargo: &future, MemberOf: in})
	s.b = create(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: in})
	s.outsider = create(&shelfmark.NewResource{Kind: shelfmark.KindWork})
	docs := []shelfmark.SearchDoc{
		{Key: s.a, Work: s.a, Kind: shelfmark.KindWork, Title: "Work A", Body: "About A."},
		{Key: s.b, Work: s.b, Kind: shelfmark.KindWork, Title: "Work B"},
		{Key: s.priv, Work: s.priv, Kind: shelfmark.KindWork, Title: "Private"},
		{Key: s.emb, Work: s.emb, Kind: shelfmark.KindWork, Title: "Embargoed"},
		{Key: s.outsider, Work: s.outsider, Kind: shelfmark.KindWork, Title: "Outsider"},
	}
	for i, f := range []string{"PDF", "TIFF", "PDF"} {
		k := int64(searchBase + i)
		s.pages = append(s.pages, k)
		docs = append(docs, shelfmark.SearchDoc{Key: k, Work: s.a, Kind: shelfmark.KindFileSet, Format: f, Body: "page text of A"})
	}
	s.pages = append(s.pages, searchBase+10)
	docs = append(docs,
		shelfmark.SearchDoc{Key: searchBase + 10, Work: s.priv, Kind: shelfmark.KindFileSet, Format: "JPEG", Body: "private page"},
		shelfmark.SearchDoc{Key: searchBase + 11, Work: s.outsider, Kind: shelfmark.KindFileSet, Format: "PNG", Body: "outside"})
	update(t, e, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) })
	return s
}

func (s *browseEnv) search(t *testing.T, q shelfmark.SearchQuery) *shelfmark.SearchResult {
	t.Helper()
	if q.Now.IsZero() {
		q.Now = s.now
	}
	var res *shelfmark.SearchResult
	view(t, s.e, func(tx shelfmark.ReadTx) (err error) {
		res, err = tx.Search(context.Background(), q)
		return err
	})
	return res
}

// testSearchBrowse: the documents of a collection's visible members in
// order, paged, filtered and counted; hidden members left out, and every
// member of a collection out of public view; a text
// without words is still refused, and so is an empty one without a
// collection.
func testSearchBrowse(t *testing.T, open Opener) {
	s := newBrowseEnv(t, open)
	fc := func(v string, n int64) shelfmark.FacetCount { return shelfmark.FacetCount{Value: v, Count: n} }

	all := []int64{s.b, s.a, s.pages[0], s.pages[1], s.pages[2]}
	r := s.search(t, shelfmark.SearchQuery{Collection: s.coll, Facets: true})
	if !slices.Equal(hitKeys(r.Hits), all) || r.Next != nil {
		t.Fatalf("browse: hits %v (next %v), want %v", hitKeys(r.Hits), r.Next, all)
	}
	if r.Total != 5 || r.Estimated {
		t.Fatalf("browse: total %d, estimated %v; want 5, exact", r.Total, r.Estimated)
	}
	if want := []shelfmark.FacetCount{fc("fileset", 3), fc("work", 2)}; !slices.Equal(r.Kinds, want) {
		t.Fatalf("browse: kinds %v, want %v", r.Kinds, want)
	}
	if want := []shelfmark.FacetCount{fc("PDF", 2), fc("TIFF", 1)}; !slices.Equal(r.Formats, want) {
		t.Fatalf("browse: formats %v, want %v (nothing of the private member)", r.Formats, want)
	}
	if facetCount(r.Collections, keyString(s.coll)) != 5 || facetCount(r.Collections, keyString(s.other)) != 4 || len(r.Collections) != 2 {
		t.Fatalf("browse: collections %v", r.Collections)
	}
	for _, h := range r.Hits {
		if h.Score != 0 || h.Work == 0 || (h.Work == s.a) != (h.Title == "Work A") {
			t.Fatalf("browse hit %+v", h)
		}
	}
	if h := r.Hits[2]; h.Kind != shelfmark.KindFileSet || h.Format != "PDF" || h.Snippet != "page text of A" {
		t.Fatalf("browse: a page's hit %+v", h)
	}
	if h := r.Hits[1]; h.Kind != shelfmark.KindWork || h.Snippet != "About A." {
		t.Fatalf("browse: a work's hit %+v", h)
	}
	// spaces are no text; without facets no total
	if r := s.search(t, shelfmark.SearchQuery{Text: "  ", Collection: s.coll}); !slices.Equal(hitKeys(r.Hits), all) || r.Total != 0 || r.Kinds != nil {
		t.Fatalf("browse without facets: %v, total %d, kinds %v", hitKeys(r.Hits), r.Total, r.Kinds)
	}

	// paging: every limit walks the same order, each hit once
	for limit := 1; limit <= 3; limit++ {
		var walked []int64
		q := shelfmark.SearchQuery{Collection: s.coll, Limit: limit}
		for range 10 {
			r := s.search(t, q)
			walked = append(walked, hitKeys(r.Hits)...)
			if r.Next == nil {
				break
			}
			if len(r.Hits) != limit || r.Next.Window != r.Hits[limit-1].Work || r.Next.Key != r.Hits[limit-1].Key {
				t.Fatalf("limit %d: page %v, next %+v", limit, hitKeys(r.Hits), r.Next)
			}
			q.After = r.Next
		}
		if !slices.Equal(walked, all) {
			t.Fatalf("limit %d: walked %v, want %v", limit, walked, all)
		}
	}

	// filters, a lapsed embargo, another collection
	later := s.now.Add(2 * 365 * 24 * time.Hour)
	for _, f := range []struct {
		q    shelfmark.SearchQuery
		want []int64
	}{
		{shelfmark.SearchQuery{Collection: s.coll, Kind: shelfmark.KindWork}, []int64{s.b, s.a}},
		{shelfmark.SearchQuery{Collection: s.coll, Kind: shelfmark.KindFileSet}, s.pages[:3]},
		{shelfmark.SearchQuery{Collection: s.coll, Format: "PDF"}, []int64{s.pages[0], s.pages[2]}},
		{shelfmark.SearchQuery{Collection: s.coll, Format: "JPEG"}, nil},
		{shelfmark.SearchQuery{Collection: s.coll, Kind: shelfmark.KindWork, Format: "PDF"}, nil},
		{shelfmark.SearchQuery{Collection: s.coll, Kind: shelfmark.KindWork, Now: later}, []int64{s.b, s.emb, s.a}},
		{shelfmark.SearchQuery{Collection: s.other}, []int64{s.a, s.pages[0], s.pages[1], s.pages[2]}},
		{shelfmark.SearchQuery{Collection: s.outsider}, nil},
		{shelfmark.SearchQuery{Collection: 1 << 40}, nil},
		// a collection out of public view lists nothing
		{shelfmark.SearchQuery{Collection: s.hidden}, nil},
		{shelfmark.SearchQuery{Collection: s.hidden, Now: later}, nil},
		{shelfmark.SearchQuery{Collection: s.embColl}, nil},
		{shelfmark.SearchQuery{Collection: s.embColl, Now: later}, []int64{s.a, s.pages[0], s.pages[1], s.pages[2]}},
	} {
		r := s.search(t, f.q)
		if got := hitKeys(r.Hits); !slices.Equal(got, f.want) && len(got)+len(f.want) > 0 {
			t.Fatalf("%+v: hits %v, want %v", f.q, got, f.want)
		}
	}
	// a text query in the collection is still a text query
	if r := s.search(t, shelfmark.SearchQuery{Text: "page", Collection: s.coll}); len(r.Hits) != 3 {
		t.Fatalf("a word in the collection: %v", hitKeys(r.Hits))
	}
	// a text without words: refused, in a collection or not (no text at
	// all without a collection lists everything: testSearchSortNewest)
	for _, q := range []shelfmark.SearchQuery{{Text: "*"}, {Text: `""`, Kind: shelfmark.KindWork}, {Text: "*", Collection: s.coll}, {Text: `""`, Collection: s.coll}} {
		var err error
		view(t, s.e, func(tx shelfmark.ReadTx) error {
			_, err = tx.Search(context.Background(), q)
			return nil
		})
		if shelfmark.ErrorCode(err) != shelfmark.EINVALID {
			t.Fatalf("%+v: %v, want EINVALID", q, err)
		}
	}
}

func keyString(k int64) string { return fmt.Sprint(k) }

// browseCollection makes a public collection of n public works, each
// with its metadata document and one page (TIFF), and returns its key and
// its members' keys, oldest first.
func browseCollection(t *testing.T, e *env, n int) (int64, []int64) {
	t.Helper()
	ctx := context.Background()
	coll := keyOf(t, rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection})).ID)
	in := []shelfmark.ID{e.repo.IDs().Encode(coll)}
	var members []int64
	for len(members) < n {
		var nrs []*shelfmark.NewResource
		for range min(500, n-len(members)) {
			nrs = append(nrs, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: in})
		}
		created, errs := e.repo.CreateResources(ctx, nrs)
		var docs []shelfmark.SearchDoc
		for i, r := range created {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			k := keyOf(t, r.ID)
			members = append(members, k)
			docs = append(docs, shelfmark.SearchDoc{Key: k, Work: k, Kind: shelfmark.KindWork, Title: "work"},
				shelfmark.SearchDoc{Key: searchBase + k, Work: k, Kind: shelfmark.KindFileSet, Format: "TIFF", Body: "page"})
		}
		update(t, e, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) })
	}
	return coll, members
}

// testCostSearchBrowse: browsing a collection of 100 members and one of
// 2,500 (5,000 documents: the facets estimated, and close) runs the same
// statements returning the same rows, for the first page with its facets
// and for a page at 90% depth.
func testCostSearchBrowse(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	const small, large = 100, 2500
	sc, sm := browseCollection(t, e, small)
	lc, lm := browseCollection(t, e, large)
	search := func(q shelfmark.SearchQuery) ([]call, *shelfmark.SearchResult) {
		q.Now = time.Now()
		var r *shelfmark.SearchResult
		calls := e.rec.capture(func() {
			view(t, e, func(tx shelfmark.ReadTx) (err error) {
				r, err = tx.Search(context.Background(), q)
				return err
			})
		})
		return calls, r
	}
	cs, rsm := search(shelfmark.SearchQuery{Collection: sc, Facets: true})
	cl, rl := search(shelfmark.SearchQuery{Collection: lc, Facets: true})
	sameWork(t, "the first page of a browse with facets (100 members vs 2,500)", cs, cl)
	if rsm.Estimated || rsm.Total != 2*small || facetCount(rsm.Kinds, "work") != small || facetCount(rsm.Formats, "TIFF") != small {
		t.Fatalf("100 members: total %d (estimated %v), kinds %v, formats %v", rsm.Total, rsm.Estimated, rsm.Kinds, rsm.Formats)
	}
	near := func(what string, got, want int64) {
		t.Helper()
		if d := got - want; d*20 > want || -d*20 > want {
			t.Fatalf("%s: estimated %d, true %d (off by more than 5%%)", what, got, want)
		}
	}
	if !rl.Estimated {
		t.Fatalf("2,500 members: total %d not estimated", rl.Total)
	}
	near("2,500 members, total", rl.Total, 2*large)
	near("2,500 members, works", facetCount(rl.Kinds, "work"), large)
	near("2,500 members, TIFF", facetCount(rl.Formats, "TIFF"), large)
	if got, want := hitKeys(rl.Hits)[:4], []int64{lm[large-1], searchBase + lm[large-1], lm[large-2], searchBase + lm[large-2]}; !slices.Equal(got, want) {
		t.Fatalf("2,500 members: first hits %v, want %v", got, want)
	}
	// a page at 90% depth
	deep := func(members []int64) *shelfmark.SearchCursor {
		k := members[len(members)/10]
		return &shelfmark.SearchCursor{Window: k, Key: k}
	}
	cs, _ = search(shelfmark.SearchQuery{Collection: sc, After: deep(sm)})
	cl, rl = search(shelfmark.SearchQuery{Collection: lc, After: deep(lm)})
	sameWork(t, "a browse page at 90% depth (100 members vs 2,500)", cs, cl)
	if k := lm[large/10]; rl.Hits[0].Key != searchBase+k || rl.Hits[1].Key != lm[large/10-1] {
		t.Fatalf("2,500 members at 90%%: %v", hitKeys(rl.Hits))
	}
}
