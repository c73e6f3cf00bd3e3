package preserve

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// BenchmarkHistoryBook measures the History's reads of a 1,200-page book
// with five versions (on SQLite): the book's TimeMap (the first record
// entry of each version), the TimeMap of its last page's file (each
// version's record read up to it), and a memento of the book (one whole
// record and its metadata).
func BenchmarkHistoryBook(b *testing.B) {
	ctx := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("bench"))
	bs := newBenchStack(b, "")
	repo, blobs, clk, p := bs.repo, bs.blobs, bs.clk, bs.p
	work, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: titled("A book")})
	if err != nil {
		b.Fatal(err)
	}
	const pages = 1200
	var sets []shelfmark.ID
	for done := 0; done < pages; done += 600 {
		nrs := make([]*shelfmark.NewResource, 600)
		for i := range nrs {
			nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work.ID, Metadata: titled(fmt.Sprintf("Page %d", done+i+1))}
		}
		res, errs := repo.CreateResources(ctx, nrs)
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		for _, r := range res {
			sets = append(sets, r.ID)
		}
	}
	var last shelfmark.ID
	for done := 0; done < pages; done += 600 {
		nrs := make([]*shelfmark.NewResource, 600)
		for i := range nrs {
			bl, err := blobs.Put(ctx, strings.NewReader(fmt.Sprintf("page %d", done+i)), shelfmark.PutOptions{})
			if err != nil {
				b.Fatal(err)
			}
			nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: sets[done+i], File: &shelfmark.File{Name: "page.tif",
				MediaType: "image/tiff", Size: bl.Size, SHA256: bl.Digests[shelfmark.SHA256], Use: shelfmark.UseOriginal}}
		}
		res, errs := repo.CreateResources(ctx, nrs)
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
		last = res[len(res)-1].ID
	}
	for v := 0; v < 5; v++ {
		if v > 0 {
			if _, err := repo.UpdateResource(ctx, work.ID, shelfmark.ResourceUpdate{Replace: ptr(titled(fmt.Sprintf("A book, edition %d", v)))}); err != nil {
				b.Fatal(err)
			}
		}
		clk.Add(time.Minute)
		if _, _, err := p.CatchUp(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	h := p.History(HistoryOptions{})
	m, err := h.Memento(ctx, work.ID, 1)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("the book's record has %d resources; %d file sets", len(m.Children), pages)
	b.Run("timemap-book", func(b *testing.B) {
		for b.Loop() {
			if tl, err := h.Timeline(ctx, work.ID); err != nil || len(tl.Versions) != 5 {
				b.Fatal(tl, err)
			}
		}
	})
	b.Run("timemap-last-page", func(b *testing.B) {
		for b.Loop() {
			if tl, err := h.Timeline(ctx, last); err != nil || len(tl.Versions) != 5 {
				b.Fatal(tl, err)
			}
		}
	})
	b.Run("memento-book", func(b *testing.B) {
		for b.Loop() {
			if _, err := h.Memento(ctx, work.ID, 3); err != nil {
				b.Fatal(err)
			}
		}
	})
}
