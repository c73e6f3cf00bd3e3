package sqlite

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// BenchmarkSearchGroup: the first page of a search for a word on every
// page of 200 books of 500 pages (100,000 page documents), and for a word
// on one page of each, as documents and grouped by work; and a grouped
// page ten pages deep, whose windows leave out the works of newer ones.
// A grouped page reads up to SearchGroupWindows windows where a page of
// documents reads one or two; this measures what that costs. And, over
// the books' records (a creator of ten and a year each), what a field
// term, a date range and the date sorts cost.
//
//	go test -tags sqlite_fts5 -run '^$' -bench SearchGroup ./sqlite/
func BenchmarkSearchGroup(b *testing.B) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "shelfmark.db"), Options{Relaxed: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	defer repo.Close()
	const books, pages = 200, 500
	nrs := make([]*shelfmark.NewResource, books)
	for i := range nrs {
		nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork}
	}
	works, errs := repo.CreateResources(ctx, nrs)
	if err := errors.Join(errs...); err != nil {
		b.Fatal(err)
	}
	key := int64(1 << 30)
	for i, w := range works {
		wk, _ := repo.IDs().Key(w.ID)
		docs := make([]shelfmark.SearchDoc, 0, pages+1)
		// its record: a creator of ten, a year of two hundred
		docs = append(docs, shelfmark.SearchDoc{Key: wk, Work: wk, Kind: shelfmark.KindWork, Title: fmt.Sprintf("Book %d", i),
			Body: "kelp", Creator: fmt.Sprintf("Author%d", i%10), DateLo: 1800 + i, DateHi: 1800 + i})
		for p := range pages {
			body := fmt.Sprintf("kelp on page %d of book %d", p, i)
			if p == 250 {
				body += " narwhal"
			}
			docs = append(docs, shelfmark.SearchDoc{Key: key, Work: wk, Kind: shelfmark.KindFileSet, Format: "PDF", Body: body})
			key++
		}
		if err := db.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) }); err != nil {
			b.Fatal(err)
		}
	}
	now := time.Now()
	search := func(b *testing.B, q shelfmark.SearchQuery) *shelfmark.SearchResult {
		var res *shelfmark.SearchResult
		if err := db.View(ctx, func(tx shelfmark.ReadTx) (err error) {
			res, err = tx.Search(ctx, q)
			return err
		}); err != nil {
			b.Fatal(err)
		}
		return res
	}
	deep := shelfmark.SearchQuery{Text: "kelp", Group: true, Now: now}
	for range 10 {
		deep.After = search(b, deep).Next
	}
	for _, c := range []struct {
		name string
		q    shelfmark.SearchQuery
	}{
		{"every-page/documents", shelfmark.SearchQuery{Text: "kelp", Now: now, Facets: true}},
		{"every-page/works", shelfmark.SearchQuery{Text: "kelp", Now: now, Facets: true, Group: true}},
		{"every-page/works-10-pages-deep", deep},
		{"one-page-a-book/documents", shelfmark.SearchQuery{Text: "narwhal", Now: now, Facets: true}},
		{"one-page-a-book/works", shelfmark.SearchQuery{Text: "narwhal", Now: now, Facets: true, Group: true}},
		// the date sort looks up each window document's record
		{"every-page/works-by-date", shelfmark.SearchQuery{Text: "kelp", Now: now, Facets: true, Group: true, Sort: shelfmark.SearchSortDate}},
		{"records/creator", shelfmark.SearchQuery{Text: "creator:author3", Now: now, Facets: true, Group: true}},
		{"records/date-range", shelfmark.SearchQuery{Text: "date:1850..1949", Now: now, Facets: true, Group: true}}, // 10 tokens
		{"records/date-all", shelfmark.SearchQuery{Text: "date:1..9999", Now: now, Facets: true, Group: true}},      // 36 tokens
		{"records/everything", shelfmark.SearchQuery{Now: now, Facets: true, Group: true}},
		{"records/everything-by-date", shelfmark.SearchQuery{Now: now, Facets: true, Group: true, Sort: shelfmark.SearchSortDateDesc}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var hits int
			for b.Loop() {
				hits = len(search(b, c.q).Hits)
			}
			b.ReportMetric(float64(hits), "hits")
		})
	}
}
