package worker

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench/gen"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/internal/testkit"
	"github.com/shelfmark/shelfmark/postgres"
	"github.com/shelfmark/shelfmark/siegfried"
	"github.com/shelfmark/shelfmark/sqlite"
)

const dsnEnv = "SHELFMARK_TEST_DATABASE_URL"

// stack is a real repository over one backend with a local blob store.
type stack struct {
	store shelfmark.Storage
	blobs *blob.LocalStore
	repo  *shelfmark.Repository
}

// backends runs f on SQLite, and on PostgreSQL when the test database is
// configured (scripts/test.sh always configures it).
func backends(t *testing.T, f func(t *testing.T, s *stack)) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		store, err := sqlite.Open(context.Background(), filepath.Join(dir, "db.sqlite"), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		f(t, newStack(t, store, dir))
	})
	t.Run("postgres", func(t *testing.T) {
		dsn := os.Getenv(dsnEnv)
		if dsn == "" {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not set", dsnEnv)
			}
			t.Skipf("%s is not set", dsnEnv)
		}
		store, err := postgres.Open(context.Background(), testkit.Schema(t, dsn), postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		f(t, newStack(t, store, t.TempDir()))
	})
}

func newStack(t *testing.T, store shelfmark.Storage, dir string) *stack {
	blobs, err := blob.NewLocal(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	s := &stack{store: store, blobs: blobs, repo: shelfmark.NewRepository(store, shelfmark.RepositoryOptions{})}
	t.Cleanup(func() {
		s.repo.Close()
		blobs.Close()
		store.Close()
	})
	return s
}

// requireTools skips (or, in CI, fails) when the external tools are absent.
func requirePipelineTools(t *testing.T, tools Tools) {
	if tools.Vipsthumbnail != "" && tools.Vips != "" && tools.Pdftoppm != "" && tools.Pdftotext != "" && tools.Tesseract != "" {
		return
	}
	if os.Getenv("SHELFMARK_REQUIRE_TOOLS") != "" {
		t.Fatalf("tools missing: %+v (scripts/testdeps.sh installs them)", tools)
	}
	t.Skipf("tools missing: %+v", tools)
}

// addFile stores data as an original file of a new file set of work.
func (s *stack) addFile(t *testing.T, work shelfmark.ID, name, mediaType string, data []byte) (fs, file shelfmark.ID) {
	t.Helper()
	ctx := context.Background()
	b, err := s.blobs.Put(ctx, bytes.NewReader(data), shelfmark.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := s.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work})
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: set.ID,
		File: &shelfmark.File{Name: name, MediaType: mediaType, Size: b.Size, SHA256: b.Digests[shelfmark.SHA256], Use: shelfmark.UseOriginal}})
	if err != nil {
		t.Fatal(err)
	}
	return set.ID, f.ID
}

// waitIdle waits until no queue has queued or running jobs.
func (s *stack) waitIdle(t *testing.T, limit time.Duration) []shelfmark.QueueCount {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		counts, err := s.repo.QueueCounts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		left := int64(0)
		for _, c := range counts {
			left += c.Queued + c.Running
		}
		if left == 0 {
			return counts
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs still outstanding after %s: %+v", limit, counts)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// filesOf returns the files of a file set by use.
func (s *stack) filesOf(t *testing.T, fs shelfmark.ID) map[string]*shelfmark.File {
	t.Helper()
	ctx := context.Background()
	page, err := s.repo.ListChildren(ctx, fs, shelfmark.PageRequest{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*shelfmark.File{}
	for _, r := range page.Items {
		full, err := s.repo.FindResource(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		out[full.File.Use] = full.File
	}
	return out
}

func (s *stack) imageOf(t *testing.T, f *shelfmark.File) image.Config {
	t.Helper()
	rc, err := s.blobs.Open(context.Background(), f.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	cfg, _, err := image.DecodeConfig(rc)
	if err != nil {
		t.Fatalf("%s is not an image: %v", f.Name, err)
	}
	return cfg
}

// checkTiles checks that a tiles derivative is an archive whose info
// entry describes the original's pixels and lists the thumbnail and
// access copy sizes.
func (s *stack) checkTiles(t *testing.T, f *shelfmark.File, orig *shelfmark.Format) {
	t.Helper()
	rc, err := s.blobs.Open(context.Background(), f.SHA256)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil || f.MediaType != "application/zip" {
		t.Fatalf("%s (%s) is not an archive: %v", f.Name, f.MediaType, err)
	}
	zf, err := zr.Open(shelfmark.TileInfoName)
	if err != nil {
		t.Fatal(err)
	}
	defer zf.Close()
	var info shelfmark.TileInfo
	if err := json.NewDecoder(zf).Decode(&info); err != nil {
		t.Fatal(err)
	}
	if info.Width != orig.Width || info.Height != orig.Height || len(info.Sizes) != 2 || info.Sizes[0].Use != shelfmark.UseThumbnail ||
		info.Sizes[1].Use != shelfmark.UseAccess || len(zr.File) < 2 {
		t.Errorf("%s: %+v, %d entries; want the original's %d × %d", f.Name, info, len(zr.File), orig.Width, orig.Height)
	}
}

// TestPipeline stores real files of every kind the pipeline knows and lets
// a runner with the real identifier and tools process them: formats are
// identified, images and PDFs get thumbnails and access copies, PDFs, XML
// and text give text, page images are OCRed, and search then finds the
// pages by their words; broken files end in failed jobs, not in a loop.
func TestPipeline(t *testing.T) {
	tools := FindTools()
	tools.OCRNice = testOCRNice
	requirePipelineTools(t, tools)
	id, err := siegfried.New()
	if err != nil {
		t.Fatal(err)
	}
	backends(t, func(t *testing.T, s *stack) {
		ctx := context.Background()
		work, err := s.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork,
			Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral("Harbour survey")}}})
		if err != nil {
			t.Fatal(err)
		}
		pdf := gen.PDF(7, 0, "The quick zebra crossed the harbour at dawn")
		type item struct {
			name, mediaType string
			data            []byte
			pronom          []string // acceptable PRONOM ids
			derive          bool
		}
		items := []item{
			{"report.pdf", "application/pdf", pdf, []string{"fmt/18"}, true},
			{"page.png", "image/png", gen.PageImage(7, 1, []string{"LIGHTHOUSE", "HARBOUR", "COMPASS", "FJORD"}), []string{"fmt/11", "fmt/12", "fmt/13"}, true},
			{"scan.tif", "image/tiff", gen.TIFF(7, 2, 600, 800), []string{"fmt/353"}, true},
			{"photo.jpg", "image/jpeg", gen.JPEG(7, 3, 800, 600), []string{"fmt/43", "fmt/44"}, true},
			{"record.xml", "application/xml", gen.PatentXML(7, 4), []string{"fmt/101"}, false},
			{"notes.txt", "text/plain", []byte("Field notes about a narwhal colony.\n"), []string{"x-fmt/111"}, false},
			{"broken.pdf", "application/pdf", pdf[:len(pdf)/3], nil, false},
			{"empty.bin", "application/octet-stream", nil, []string{shelfmark.FormatUnknown}, false},
		}
		sets := make([]shelfmark.ID, len(items))
		for i, it := range items {
			sets[i], _ = s.addFile(t, work.ID, it.name, it.mediaType, it.data)
		}
		p := &Pipeline{Repo: s.repo, Blobs: s.blobs, Identify: id, Tools: tools}
		r := NewRunner(s.repo, p.Handlers(), Options{Queues: DefaultQueues(2), Total: 2, Poll: 50 * time.Millisecond})
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- r.Run(rctx) }()
		indexer := shelfmark.NewSearchIndexer(s.store, shelfmark.IndexerOptions{})
		counts := s.waitIdle(t, 3*time.Minute)
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if err := indexer.CatchUp(ctx); err != nil {
			t.Fatal(err)
		}

		for i, it := range items {
			files := s.filesOf(t, sets[i])
			orig := files[shelfmark.UseOriginal]
			if orig == nil || orig.Format == nil {
				t.Fatalf("%s: not characterized: %+v", it.name, orig)
			}
			if it.pronom != nil && !contains(it.pronom, orig.Format.PRONOM) {
				t.Errorf("%s: identified as %s (%s), want one of %v", it.name, orig.Format.PRONOM, orig.Format.Name, it.pronom)
			}
			if !it.derive {
				continue
			}
			thumb, access := files[shelfmark.UseThumbnail], files[shelfmark.UseAccess]
			if thumb == nil || access == nil {
				t.Fatalf("%s: derivatives %v", it.name, files)
			}
			cfg := s.imageOf(t, thumb)
			if max(cfg.Width, cfg.Height) != ThumbnailSize {
				t.Errorf("%s: thumbnail %dx%d, want the longer side %d", it.name, cfg.Width, cfg.Height, ThumbnailSize)
			}
			if acfg := s.imageOf(t, access); max(acfg.Width, acfg.Height) > AccessSize {
				t.Errorf("%s: access copy %dx%d larger than %d", it.name, acfg.Width, acfg.Height, AccessSize)
			}
			// page images and PDFs (each page) get deep-zoom tiles
			tiles := files[shelfmark.UseTiles]
			switch {
			case tiles == nil:
				t.Errorf("%s: no tiles", it.name)
			case strings.HasPrefix(it.mediaType, "image/"):
				s.checkTiles(t, tiles, orig.Format)
			}
		}
		// the scanned page's words came from OCR (of the generator's 5×7
		// bitmap letters tesseract misreads N and X, so the words avoid them), kept as hOCR
		if f := s.filesOf(t, sets[1])[shelfmark.UseOCR]; f == nil || f.MediaType != "application/xhtml+xml" {
			t.Fatalf("page.png: no hOCR derivative: %+v", f)
		}
		// search finds the OCR page, the PDF page and the text file's page
		for q, want := range map[string]shelfmark.ID{"lighthouse": sets[1], "compass fjord": sets[1], "zebra": sets[0], "narwhal": sets[5]} {
			var res *shelfmark.SearchResult
			err := s.store.View(ctx, func(tx shelfmark.ReadTx) error {
				var err error
				res, err = tx.Search(ctx, shelfmark.SearchQuery{Text: q, Now: time.Now(), Limit: 10})
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			wantKey, _ := s.repo.IDs().Key(want)
			if len(res.Hits) == 0 || res.Hits[0].Key != wantKey {
				t.Errorf("search %q: hits %+v, want the page %s", q, res.Hits, want)
				continue
			}
			if res.Hits[0].Title != "Harbour survey" || !strings.Contains(res.Hits[0].Snippet, shelfmark.SnippetStart) {
				t.Errorf("search %q: hit %+v", q, res.Hits[0])
			}
		}
		// only the broken PDF may have failed jobs, each with its error
		failed, err := s.repo.ListJobs(ctx, shelfmark.JobFilter{State: shelfmark.JobFailed})
		if err != nil {
			t.Fatal(err)
		}
		brokenKey := fileKey(t, s, sets[6])
		for _, j := range failed {
			if j.Resource != brokenKey || j.Error == "" {
				t.Errorf("unexpected failed job %+v", j)
			}
		}
		t.Logf("queues at the end: %+v; failed jobs of the truncated PDF: %d", counts, len(failed))
	})
}

func fileKey(t *testing.T, s *stack, fs shelfmark.ID) int64 {
	t.Helper()
	page, err := s.repo.ListChildren(context.Background(), fs, shelfmark.PageRequest{Limit: 1})
	if err != nil || len(page.Items) == 0 {
		t.Fatal("no file", err)
	}
	k, _ := s.repo.IDs().Key(page.Items[0].ID)
	return k
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestPipelineHungTool: an OCR tool that hangs is killed at the queue's
// time limit, with its own child, and the job ends failed with the reason,
// after its last attempt, instead of blocking the queue.
func TestPipelineHungTool(t *testing.T) {
	backends(t, func(t *testing.T, s *stack) {
		ctx := context.Background()
		dir := t.TempDir()
		pids := filepath.Join(dir, "pids")
		script := filepath.Join(dir, "tesseract")
		body := fmt.Sprintf("#!/bin/sh\nsleep 300 &\necho $! >> %s\necho $$ >> %s\nwait\n", pids, pids)
		if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
		work, err := s.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
		if err != nil {
			t.Fatal(err)
		}
		_, file := s.addFile(t, work.ID, "page.png", "image/png", gen.PageImage(1, 0, []string{"HARBOUR"}))
		key, _ := s.repo.IDs().Key(file)
		// straight to OCR: drop the characterize job, queue an OCR job
		err = s.store.Update(ctx, func(tx shelfmark.WriteTx) error {
			jobs, err := tx.Jobs(ctx, shelfmark.JobFilter{Limit: 10})
			if err != nil {
				return err
			}
			if err := tx.DeleteJobs(ctx, []int64{jobs[0].ID}); err != nil {
				return err
			}
			return tx.EnqueueJobs(ctx, []shelfmark.NewJob{{Queue: shelfmark.QueueOCR, Resource: key}}, time.Now())
		})
		if err != nil {
			t.Fatal(err)
		}
		p := &Pipeline{Repo: s.repo, Blobs: s.blobs, Tools: Tools{Tesseract: script}}
		r := NewRunner(s.repo, p.Handlers(), Options{Poll: 50 * time.Millisecond,
			Queues:  []QueueConfig{{Name: shelfmark.QueueOCR, Concurrency: 1, Timeout: time.Second, MaxAttempts: 2}},
			Backoff: func(int) time.Duration { return 10 * time.Millisecond }})
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- r.Run(rctx) }()
		deadline := time.Now().Add(time.Minute)
		var failed []*shelfmark.Job
		for len(failed) == 0 {
			if time.Now().After(deadline) {
				t.Fatal("the hung job did not fail")
			}
			time.Sleep(50 * time.Millisecond)
			if failed, err = s.repo.ListJobs(ctx, shelfmark.JobFilter{State: shelfmark.JobFailed}); err != nil {
				t.Fatal(err)
			}
		}
		stop()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		j := failed[0]
		if j.Attempt != 2 || !strings.Contains(j.Error, "time limit") {
			t.Fatalf("failed job %+v", j)
		}
		raw, _ := os.ReadFile(pids)
		list := strings.Fields(string(raw))
		if len(list) != 4 { // two attempts, each a shell and its sleep
			t.Fatalf("pids %q", raw)
		}
		// each was killed with its job: gone, or a zombie, once the kill
		// has been delivered (which a busy machine may take a moment for)
		for _, p := range list {
			alive := func() bool {
				b, err := os.ReadFile("/proc/" + p + "/stat")
				return err == nil && !strings.Contains(string(b), ") Z ")
			}
			for deadline := time.Now().Add(10 * time.Second); alive() && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
			if alive() {
				t.Errorf("process %s outlived its job by 10 s", p)
			}
		}
	})
}
