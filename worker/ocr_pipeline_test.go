package worker

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench/gen"
	"github.com/shelfmark/shelfmark/siegfried"
)

// TestPipelineOCRFormats: a page image's OCR is kept as hOCR and as ALTO;
// a PDF whose later pages are scans (no text layer) goes from the text
// queue to the ocr queue, which reads those pages, keeps their hOCR and
// ALTO, and keeps the text of every page (layer and OCR) for search.
func TestPipelineOCRFormats(t *testing.T) {
	tools := FindTools()
	tools.OCRNice = testOCRNice
	requirePipelineTools(t, tools)
	id, err := siegfried.New()
	if err != nil {
		t.Fatal(err)
	}
	mixed := toolTestMixedPDF(t, "The harbour master keeps a register of every vessel in the roads.")
	backends(t, func(t *testing.T, s *stack) {
		ctx := context.Background()
		work, err := s.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork,
			Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral("Harbour register")}}})
		if err != nil {
			t.Fatal(err)
		}
		pdfSet, _ := s.addFile(t, work.ID, "register.pdf", "application/pdf", mixed)
		pageSet, _ := s.addFile(t, work.ID, "page.png", "image/png", gen.PageImage(7, 1, []string{"LIGHTHOUSE", "COMPASS"}))
		p := &Pipeline{Repo: s.repo, Blobs: s.blobs, Identify: id, Tools: tools}
		r := NewRunner(s.repo, p.Handlers(), Options{Queues: DefaultQueues(2), Total: 2, Poll: 50 * time.Millisecond})
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- r.Run(rctx) }()
		s.waitIdle(t, 3*time.Minute)
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		failed, err := s.repo.ListJobs(ctx, shelfmark.JobFilter{State: shelfmark.JobFailed})
		if err != nil || len(failed) > 0 {
			t.Fatalf("failed jobs %+v, %v", failed, err)
		}
		read := func(f *shelfmark.File) []byte {
			rc, err := s.blobs.Open(ctx, f.SHA256)
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			b, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			return b
		}

		page := s.filesOf(t, pageSet)
		if f := page[shelfmark.UseALTO]; f == nil || f.MediaType != ALTOMediaType || f.Name != "page.alto.xml" {
			t.Fatalf("page.png: ALTO derivative %+v", f)
		}
		toolTestALTO(t, read(page[shelfmark.UseALTO]), 1)
		if f := page[shelfmark.UseOCR]; f == nil || f.MediaType != HOCRMediaType {
			t.Fatalf("page.png: hOCR derivative %+v", f)
		}

		files := s.filesOf(t, pdfSet)
		for _, use := range []string{shelfmark.UseOCR, shelfmark.UseALTO, shelfmark.UseText} {
			if files[use] == nil {
				t.Fatalf("register.pdf: no %s derivative: %v", use, files)
			}
		}
		d := toolTestALTO(t, read(files[shelfmark.UseALTO]), 2)
		if d.Layout.Pages[0].Number != 2 || d.Layout.Pages[1].Number != 3 {
			t.Errorf("ALTO pages %d, %d; want the scanned pages 2 and 3", d.Layout.Pages[0].Number, d.Layout.Pages[1].Number)
		}
		if n := bytes.Count(read(files[shelfmark.UseOCR]), []byte("class='ocr_page'")); n != 2 {
			t.Errorf("hOCR has %d pages, want 2", n)
		}
		text := string(read(files[shelfmark.UseText]))
		if !strings.Contains(text, "harbour master") || len(toolTestMissing(text, toolTestScanWords[1])) > 1 {
			t.Errorf("the PDF's text lacks its text layer or its OCR: %q", text)
		}

		indexer := shelfmark.NewSearchIndexer(s.store, shelfmark.IndexerOptions{})
		if err := indexer.CatchUp(ctx); err != nil {
			t.Fatal(err)
		}
		wantKey, _ := s.repo.IDs().Key(pdfSet)
		for _, q := range []string{"register vessel", "catalogue folio"} {
			var res *shelfmark.SearchResult
			err := s.store.View(ctx, func(tx shelfmark.ReadTx) error {
				var err error
				res, err = tx.Search(ctx, shelfmark.SearchQuery{Text: q, Now: time.Now(), Limit: 10})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) == 0 || res.Hits[0].Key != wantKey {
				t.Errorf("search %q: hits %+v, want the PDF's page", q, res.Hits)
			}
		}
	})
}
