package storagetest

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// testSearchGroups: a grouped search (SearchQuery.Group) lists each work
// once, however many of its pages match, with its matching pages, best
// first; a work found only in its pages is a hit too, and a private one's
// pages are not; the total and facets count works; without words the
// hits are the works' own documents.
func testSearchGroups(t *testing.T, open Opener) {
	c := newSearchCorpus(t, open)
	res := c.search(t, shelfmark.SearchQuery{Text: "whales", Group: true, Facets: true})
	want := sortedKeys(c.pub, c.bodyOnly, c.embPast, c.gone, c.whaling) // whaling: whale to the stemmer
	if got := sortedKeys(hitKeys(res.Hits)...); !slices.Equal(got, want) {
		t.Fatalf("grouped hits %v, want %v (public works matching, each once)", got, want)
	}
	if res.Total != int64(len(want)) || res.Estimated {
		t.Fatalf("total %d (estimated %v), want %d works", res.Total, res.Estimated, len(want))
	}
	if n := facetCount(res.Collections, keyString(c.pubColl)); n != 3 {
		t.Fatalf("the collection facet counts %d works of the public collection, want 3 (the book once, not once per page)", n)
	}
	for _, h := range res.Hits {
		if h.Key != h.Work {
			t.Fatalf("a grouped hit is not a work: %+v", h)
		}
		if h.Key == c.gone {
			if h.Matches != 1 || len(h.Pages) != 1 || h.Pages[0].Key != c.goneKid {
				t.Fatalf("the work with one matching page: %+v", h)
			}
			continue
		}
		if h.Key != c.pub {
			if len(h.Pages) != 0 || h.Matches != 0 {
				t.Fatalf("work %d has no matching pages but lists %d (%d)", h.Key, h.Matches, len(h.Pages))
			}
			continue
		}
		// pages 1 and 2 of the book say whales (page 1 twice), page 3 does not
		if h.Matches != 2 || len(h.Pages) != 2 || h.Pages[0].Key != c.pages[0] || h.Pages[1].Key != c.pages[1] {
			t.Fatalf("the book's pages: %d matching, listed %v; want 2, pages %v", h.Matches, hitKeys(h.Pages), c.pages[:2])
		}
		if h.Kind != shelfmark.KindWork || !strings.Contains(h.Title, "Whales of the north") || !strings.Contains(h.Snippet, shelfmark.SnippetStart) {
			t.Fatalf("the book's hit: %+v", h)
		}
	}
	// newest first: a work by its newest match (the book by its second
	// page, whose key is higher than its record's and its first page's)
	res = c.search(t, shelfmark.SearchQuery{Text: "whales", Group: true, Sort: shelfmark.SearchSortNewest})
	for i, h := range res.Hits {
		if i > 0 && h.Score >= res.Hits[i-1].Score {
			t.Fatalf("grouped, newest first: hit %d (%v) after %v", i, h.Score, res.Hits[i-1].Score)
		}
		if h.Key == c.pub && h.Score != float64(c.pages[1]) {
			t.Fatalf("grouped, newest first: the book's score %v, want its newest match's key %d", h.Score, c.pages[1])
		}
	}
	// only in the pages of a book: the work is the hit, its best page
	// speaks for it
	res = c.search(t, shelfmark.SearchQuery{Text: "gulls", Group: true})
	if len(res.Hits) != 1 || res.Hits[0].Key != c.pub || res.Hits[0].Matches != 1 || len(res.Hits[0].Pages) != 1 ||
		res.Hits[0].Pages[0].Key != c.pages[1] || !strings.Contains(res.Hits[0].Snippet, "gulls") || res.Hits[0].Title == "" {
		t.Fatalf("a word in one page: %+v", res.Hits)
	}
	// the private work's page is not shown, nor is the work
	for _, h := range c.search(t, shelfmark.SearchQuery{Text: "whales whales", Group: true}).Hits {
		if h.Key == c.priv {
			t.Fatal("a private work is a grouped hit")
		}
	}
	// without words: the works' own documents, newest first
	res = c.search(t, shelfmark.SearchQuery{Group: true, Facets: true})
	for _, h := range res.Hits {
		if h.Key != h.Work {
			t.Fatalf("everything, grouped, lists a page: %+v", h)
		}
	}
	if !slices.Contains(hitKeys(res.Hits), c.pub) {
		t.Fatal("everything, grouped, leaves out the book")
	}
	res = c.search(t, shelfmark.SearchQuery{Collection: c.pubColl, Group: true})
	if got := sortedKeys(hitKeys(res.Hits)...); !slices.Equal(got, sortedKeys(c.pub, c.bodyOnly, c.whaling)) {
		t.Fatalf("a grouped browse lists %v, want the collection's works", got)
	}
}

// testSearchGroupWindows: a word in more documents than one window holds,
// in books of many pages whose pages cross the windows' boundaries and
// whose keys interleave with each other's: walked a work at a time, every
// work comes once, in the window of its newest match, no page reads more
// than SearchGroupWindows windows, and a work's matching pages within its
// window are counted.
func testSearchGroupWindows(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	const books, pagesPer = 9, 500 // 4,500 pages: four and a half windows
	var works []int64
	for range books {
		works = append(works, keyOf(t, rs(t)(e.repo.CreateResource(t.Context(), &shelfmark.NewResource{Kind: shelfmark.KindWork})).ID))
	}
	var docs []shelfmark.SearchDoc
	key := int64(searchBase)
	for i := range books * pagesPer {
		// two books at a time, their pages interleaved, as two
		// depositors' ingests are
		w := works[books-1]
		if pair := i / (2 * pagesPer); pair < books/2 {
			w = works[2*pair+i%2]
		}
		docs = append(docs, shelfmark.SearchDoc{Key: key, Work: w, Kind: shelfmark.KindFileSet, Body: fmt.Sprint("kelp page ", i)})
		key++
	}
	update(t, e, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(t.Context(), docs) })
	s := &searchEnv{e: e}
	q := shelfmark.SearchQuery{Text: "kelp", Group: true, Limit: 1, Facets: true}
	seen := map[int64]int{}
	var matches int64
	for pages := 0; ; pages++ {
		if pages > books*2 {
			t.Fatal("paging does not end")
		}
		var r *shelfmark.SearchResult
		calls := indexCalls(e.rec.capture(func() { r = s.search(t, q) }))
		if len(calls) > shelfmark.SearchGroupWindows+1 {
			t.Fatalf("page %d ran %d statements", pages, len(calls))
		}
		if pages == 0 && (r.Total < books-1 || r.Total > books+1) {
			t.Fatalf("the first page's total: %d works (estimated %v), want about %d", r.Total, r.Estimated, books)
		}
		for _, h := range r.Hits {
			seen[h.Key]++
			matches += h.Matches
			if len(h.Pages) != min(int(h.Matches), shelfmark.SearchGroupPages) {
				t.Fatalf("work %d: %d matching pages, %d listed", h.Key, h.Matches, len(h.Pages))
			}
		}
		if r.Next == nil {
			break
		}
		q.After, q.Facets = r.Next, false
	}
	for _, w := range works {
		if seen[w] != 1 {
			t.Fatalf("work %d came %d times in the walk (all: %v)", w, seen[w], seen)
		}
	}
	if len(seen) != books {
		t.Fatalf("the walk found %d works, want %d", len(seen), books)
	}
	// a book split by a window boundary counts the pages of its newer window
	if matches > books*pagesPer || matches < shelfmark.SearchWindow {
		t.Fatalf("the works' matching pages add up to %d of %d", matches, books*pagesPer)
	}
}
