package storagetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// testSearchSortNewest: sorted newest first, a search's hits come in key
// order, newest first, each once, across pages and across windows (more
// matches than one window holds), whatever their relevance; the total and
// the facets are the relevance order's; a query without words lists every
// document the same way; a sort that is not offered is refused, naming
// those that are.
func testSearchSortNewest(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	n := shelfmark.SearchWindow + 150
	nrs := make([]*shelfmark.NewResource, n)
	for i := range nrs {
		nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork}
	}
	works, errs := e.repo.CreateResources(ctx, nrs)
	var docs []shelfmark.SearchDoc
	var want []int64
	for i, w := range works {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		k := keyOf(t, w.ID)
		d := shelfmark.SearchDoc{Key: k, Work: k, Kind: shelfmark.KindWork, Title: "work", Body: "alpha"}
		if i%7 == 0 { // some rank above the others by relevance
			d.Title = "alpha alpha"
		}
		docs = append(docs, d)
		want = append(want, k)
	}
	slices.Sort(want)
	slices.Reverse(want)
	update(t, e, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) })
	now := time.Now()
	search := func(q shelfmark.SearchQuery) *shelfmark.SearchResult {
		t.Helper()
		q.Now = now
		var res *shelfmark.SearchResult
		view(t, e, func(tx shelfmark.ReadTx) (err error) {
			res, err = tx.Search(ctx, q)
			return err
		})
		return res
	}
	// walk pages through q from its first, which it returns, with the
	// keys of every hit (stopping at twice the documents, should the
	// cursor never end)
	walk := func(q shelfmark.SearchQuery) (*shelfmark.SearchResult, []int64) {
		t.Helper()
		first := search(q)
		var got []int64
		for r := first; ; {
			got = append(got, hitKeys(r.Hits)...)
			if r.Next == nil || len(got) > 2*n {
				return first, got
			}
			q.After, q.Facets = r.Next, false
			r = search(q)
		}
	}
	first, got := walk(shelfmark.SearchQuery{Text: "alpha", Sort: shelfmark.SearchSortNewest, Limit: shelfmark.MaxSearchLimit, Facets: true})
	if !slices.Equal(got, want) {
		t.Fatalf("newest first: %d hits, want %d; first %v, want %v", len(got), len(want), got[:min(5, len(got))], want[:5])
	}
	for i, h := range first.Hits {
		if h.Score != float64(h.Key) || (i > 0 && h.Key >= first.Hits[i-1].Key) {
			t.Fatalf("hit %d: %+v", i, h)
		}
	}
	rel := search(shelfmark.SearchQuery{Text: "alpha", Limit: shelfmark.MaxSearchLimit, Facets: true})
	if rel.Total != first.Total || rel.Estimated != first.Estimated || !slices.Equal(rel.Kinds, first.Kinds) {
		t.Errorf("newest first counts %d (estimated %v) %v, relevance %d (%v) %v", first.Total, first.Estimated, first.Kinds, rel.Total, rel.Estimated, rel.Kinds)
	}
	if slices.Equal(hitKeys(rel.Hits), hitKeys(first.Hits)) {
		t.Error("relevance and newest first give the same first page: the test does not tell them apart")
	}
	// no words: everything, newest first, whatever the sort asked, each
	// hit with the beginning of its text
	all, got := walk(shelfmark.SearchQuery{Text: " ", Sort: shelfmark.SearchSortRelevance, Limit: shelfmark.MaxSearchLimit, Facets: true})
	if !slices.Equal(got, want) || all.Total != first.Total || all.Hits[0].Snippet != "alpha" || all.Hits[0].Title != "work" {
		t.Fatalf("everything: %d hits (total %d, first %+v), want %d newest first", len(got), all.Total, all.Hits[0], len(want))
	}
	if r := search(shelfmark.SearchQuery{Kind: shelfmark.KindCollection, Facets: true}); len(r.Hits) != 0 || r.Total != 0 {
		t.Errorf("everything of a kind there is none of: %v, total %d", hitKeys(r.Hits), r.Total)
	}
	for _, s := range []string{"", shelfmark.SearchSortRelevance, shelfmark.SearchSortNewest} {
		if err := shelfmark.CheckSearchSort(s); err != nil {
			t.Errorf("sort %q: %v", s, err)
		}
	}
	if err := shelfmark.CheckSearchSort("author"); shelfmark.ErrorCode(err) != shelfmark.EINVALID || !strings.Contains(shelfmark.ErrorMessage(err), "relevance, newest") {
		t.Errorf("sort author: %v", err)
	}
}
