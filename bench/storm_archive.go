package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"math/rand/v2"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench/gen"
)

// stormVocabulary holds the words of the storm archive's works and of its
// book's OCR text; the storm and the reader search for them.
var stormVocabulary = strings.Fields(`harbour ledger survey tide anchor beacon cargo
charter customs dock estuary ferry granary haven inlet jetty keel lantern mariner
merchant navigation pilot quay rigging salvage schooner shipwright signal steamer
tonnage vessel warehouse wharf yard almanac bosun chart compass`)

// StormArchive is what LoadStormArchive stored: a collection of works,
// and a book with OCR text that is a member of it.
type StormArchive struct {
	Collection string   `json:"collection"`
	Book       string   `json:"book"`
	Works      []string `json:"works"`
	BookPages  int      `json:"book_pages"`
	// Words are the words the works and the book hold.
	Words []string `json:"words"`
}

// Targets are the storm's targets in the archive.
func (a *StormArchive) Targets() StormTargets {
	return StormTargets{Words: a.Words, Collection: a.Collection, Book: a.Book}
}

// LoadStormArchive stores, through the engine, a public collection of
// works works (titles and descriptions of stormVocabulary's words) and a
// public book of pages pages, each a page image (a PNG of
// gen.PageWidth×gen.PageHeight, its format given) with hOCR of its words
// (use ocr), so that search inside the book answers without the
// pipeline; it indexes everything for search and drops the
// characterization jobs the page images enqueued, so that a server
// started on the store afterwards has no background work. Its cost is
// the works' and pages' writes and one PNG encoding per page.
func LoadStormArchive(ctx context.Context, repo *shelfmark.Repository, blobs shelfmark.BlobStore, works, pages int, seed uint64) (*StormArchive, error) {
	if works <= 0 || pages <= 0 {
		return nil, errors.New("storm archive: works and pages must be positive")
	}
	r := rand.New(rand.NewPCG(seed, 0x5707))
	pick := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = stormVocabulary[r.IntN(len(stormVocabulary))]
		}
		return out
	}
	dc := shelfmark.NSDC
	coll, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection,
		Metadata: []shelfmark.Statement{{Predicate: dc + "title", Object: shelfmark.NewLiteral("The harbour board's records")},
			{Predicate: dc + "description", Object: shelfmark.NewLiteral("Ledgers, surveys and charts of a harbour.")}}})
	if err != nil {
		return nil, fmt.Errorf("storm archive: the collection: %w", err)
	}
	a := &StormArchive{Collection: string(coll.ID), BookPages: pages, Words: stormVocabulary}
	nrs := make([]*shelfmark.NewResource, works)
	for i := range nrs {
		w := pick(3)
		nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}, Metadata: []shelfmark.Statement{
			{Predicate: dc + "title", Object: shelfmark.NewLangLiteral(fmt.Sprintf("The %s %s of the %s, volume %d", w[0], w[1], w[2], i+1), "en")},
			{Predicate: dc + "description", Object: shelfmark.NewLangLiteral(strings.Join(pick(24), " "), "en")},
			{Predicate: dc + "creator", Object: shelfmark.NewLiteral(fmt.Sprintf("Clerk %d", i%7))},
			{Predicate: dc + "date", Object: shelfmark.NewLiteral(fmt.Sprint(1850 + i))},
			{Predicate: dc + "type", Object: shelfmark.NewLiteral("Text")},
		}}
	}
	out, errs := repo.CreateResources(ctx, nrs)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("storm archive: the works: %w", err)
	}
	for _, w := range out {
		a.Works = append(a.Works, string(w.ID))
	}

	book, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}, Metadata: []shelfmark.Statement{
		{Predicate: dc + "title", Object: shelfmark.NewLangLiteral("The harbour master's day book", "en")},
		{Predicate: dc + "description", Object: shelfmark.NewLangLiteral(fmt.Sprintf("A day book of %d pages, its text read by OCR.", pages), "en")},
		{Predicate: dc + "type", Object: shelfmark.NewLiteral("Book")},
	}})
	if err != nil {
		return nil, fmt.Errorf("storm archive: the book: %w", err)
	}
	a.Book = string(book.ID)
	order := make([]shelfmark.ID, 0, pages)
	for i := range pages {
		lines := make([][]string, 12)
		var all []string
		for k := range lines {
			lines[k] = pick(6)
			all = append(all, lines[k]...)
		}
		img, err := blobs.Put(ctx, bytes.NewReader(gen.PageImage(seed, i, all)), shelfmark.PutOptions{})
		if err != nil {
			return nil, fmt.Errorf("storm archive: page %d: %w", i+1, err)
		}
		ocr, err := blobs.Put(ctx, strings.NewReader(stormHOCR(gen.PageWidth, gen.PageHeight, lines)), shelfmark.PutOptions{})
		if err != nil {
			return nil, fmt.Errorf("storm archive: page %d: %w", i+1, err)
		}
		ids, err := repo.MintIDs(ctx, 3)
		if err != nil {
			return nil, err
		}
		_, errs := repo.CreateResources(ctx, []*shelfmark.NewResource{
			{ID: ids[0], Kind: shelfmark.KindFileSet, Parent: book.ID, Metadata: []shelfmark.Statement{
				{Predicate: dc + "title", Object: shelfmark.NewLiteral(fmt.Sprintf("Page %d", i+1))}}},
			{ID: ids[1], Kind: shelfmark.KindFile, Parent: ids[0], File: &shelfmark.File{Name: fmt.Sprintf("page_%04d.png", i+1),
				MediaType: "image/png", Size: img.Size, SHA256: img.Digests[shelfmark.SHA256], Use: shelfmark.UseOriginal,
				Format: &shelfmark.Format{PRONOM: "fmt/13", Name: "Portable Network Graphics", MediaType: "image/png", Width: gen.PageWidth, Height: gen.PageHeight}}},
			{ID: ids[2], Kind: shelfmark.KindFile, Parent: ids[0], File: &shelfmark.File{Name: fmt.Sprintf("page_%04d.hocr", i+1),
				MediaType: "application/xhtml+xml", Size: ocr.Size, SHA256: ocr.Digests[shelfmark.SHA256], Use: shelfmark.UseOCR}},
		})
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("storm archive: page %d: %w", i+1, err)
		}
		order = append(order, ids[0])
	}
	if _, err := repo.SetOrder(ctx, book.ID, order, 0); err != nil {
		return nil, fmt.Errorf("storm archive: order the book's pages: %w", err)
	}

	indexer := shelfmark.NewSearchIndexer(repo.Storage(), shelfmark.IndexerOptions{})
	for {
		n, err := indexer.Step(ctx)
		if err != nil {
			return nil, fmt.Errorf("storm archive: index: %w", err)
		}
		if n == 0 {
			break
		}
	}
	if _, err := dropQueued(ctx, repo, shelfmark.QueueCharacterize); err != nil {
		return nil, err
	}
	return a, nil
}

// stormHOCR writes hOCR of a page of w×h pixels holding lines of words,
// each word in a box of a grid of 6 words a line.
func stormHOCR(w, h int, lines [][]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>
<html xmlns="http://www.w3.org/1999/xhtml"><head><title></title></head><body>
<div class='ocr_page' id='page_1' title='image "page.png"; bbox 0 0 %d %d; ppageno 0'>
`, w, h)
	cell, row := (w-120)/6, (h-120)/len(lines)
	for k, line := range lines {
		y0 := 60 + k*row
		fmt.Fprintf(&b, "<span class='ocr_line' id='line_%d' title='bbox 60 %d %d %d'>", k, y0, w-60, y0+row/2)
		for j, word := range line {
			x0 := 60 + j*cell
			fmt.Fprintf(&b, "<span class='ocrx_word' title='bbox %d %d %d %d; x_wconf 92'>%s</span> ", x0, y0, x0+cell*4/5, y0+row/2, html.EscapeString(word))
		}
		b.WriteString("</span>\n")
	}
	b.WriteString("</div></body></html>\n")
	return b.String()
}
