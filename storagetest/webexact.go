package storagetest

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/ingest"
)

// testWebExact ingests one generated crawl in several file orders and batch
// sizes and checks the link index against the in-memory reference after
// each, after a repeated ingest (which must change nothing) and after a
// file's work is deleted and swept.
func testWebExact(t *testing.T, open Opener) {
	crawl := GenerateCrawl(7, 240, 4)
	paths, err := crawl.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	full, err := crawl.Reference(nil)
	if err != nil {
		t.Fatal(err)
	}
	// every run but the first merges the link log while a file is being
	// indexed, in transactions of few changes, so that merges start and
	// stop inside a page's links and between a link's changes
	runs := []struct {
		name  string
		order []int
		batch int
		merge int // 0: merged while the database is behind
		every int // link changes logged between merges (0: default)
		chunk int // link changes per merge transaction (0: default)
	}{
		{"forward-1000", []int{0, 1, 2, 3}, 1000, 1, 0, 0},
		{"reverse-7", []int{3, 2, 1, 0}, 7, 1, 50, 7},
		{"mixed-2", []int{2, 0, 3, 1}, 2, 1, 1, 1},
		{"merged-3", []int{1, 3, 0, 2}, 3, 0, 200, 64},
	}
	for i, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			e := newEnv(t, open, shelfmark.RepositoryOptions{WebMergeLinks: run.every, WebMergeChunk: run.chunk})
			blobs := localBlobs(t)
			ctx := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
			for _, f := range run.order {
				st, err := ingest.IngestWARC(ctx, e.repo, blobs, []string{paths[f]}, ingest.WARCOptions{Crawl: "exact", Batch: run.batch, Merge: run.merge})
				if err != nil {
					t.Fatalf("ingest %s: %v", paths[f], err)
				}
				if st.Files != 1 || st.FilesFailed != 0 || st.Errors != 0 {
					t.Fatalf("ingest %s: %+v", paths[f], st)
				}
			}
			CheckWebIndex(t, ctx, e.repo, full)
			CheckCaptures(t, ctx, e.repo, crawl, nil)
			// a repeated ingest changes nothing
			st, err := ingest.IngestWARC(ctx, e.repo, blobs, paths, ingest.WARCOptions{Crawl: "exact", Batch: run.batch, Merge: run.merge})
			if err != nil {
				t.Fatal(err)
			}
			if st.FilesSkipped != int64(len(paths)) || st.Records != 0 {
				t.Fatalf("repeated ingest: %+v, want every file skipped", st)
			}
			CheckWebIndex(t, ctx, e.repo, full)
			if i > 1 {
				return
			}
			// a deleted crawl file's links leave the counts
			key := "warc:" + filepath.Base(paths[1])
			found, err := e.repo.FindSources(ctx, []string{key})
			if err != nil || found[key] == "" {
				t.Fatalf("source %s: %v %v", key, found, err)
			}
			if err := e.repo.DeleteResource(ctx, found[key], 0); err != nil {
				t.Fatal(err)
			}
			n, err := e.repo.SweepWebFiles(ctx)
			if err != nil || n != 1 {
				t.Fatalf("sweep: %d files, %v", n, err)
			}
			without, err := crawl.Reference(map[int]bool{1: true})
			if err != nil {
				t.Fatal(err)
			}
			CheckWebIndex(t, ctx, e.repo, without)
			CheckCaptures(t, ctx, e.repo, crawl, map[int]bool{1: true})
			if n, err := e.repo.SweepWebFiles(ctx); err != nil || n != 0 {
				t.Fatalf("second sweep: %d files, %v", n, err)
			}
		})
	}
}

// testWebConcurrentIngest runs two ingests of the same files at once (two
// operators, or a re-run started before the first ended): each batch is
// indexed by one of them only, a run that finds its file's offset moved
// stops that file, and a last run finishes whatever is left; the index
// equals the reference.
func testWebConcurrentIngest(t *testing.T, open Opener) {
	crawl := GenerateCrawl(5, 150, 3)
	paths, err := crawl.Write(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ref, err := crawl.Reference(nil)
	if err != nil {
		t.Fatal(err)
	}
	// merges often, in small transactions: the two ingests' merges and
	// batches interleave
	e := newEnv(t, open, shelfmark.RepositoryOptions{WebMergeLinks: 30, WebMergeChunk: 5})
	blobs := localBlobs(t)
	ctx := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := ingest.IngestWARC(ctx, e.repo, blobs, paths, ingest.WARCOptions{Crawl: "twice", Batch: 5})
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ingest.IngestWARC(ctx, e.repo, blobs, paths, ingest.WARCOptions{Crawl: "twice", Batch: 5}); err != nil {
		t.Fatal(err)
	}
	CheckWebIndex(t, ctx, e.repo, ref)
	CheckCaptures(t, ctx, e.repo, crawl, nil)
}

// testWebBatchOnce sends one batch from eight writers at once: exactly one
// indexes it, and its records are captured once.
func testWebBatchOnce(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
	file := newWARCFile(t, e)
	if _, err := e.repo.StartWebFile(ctx, file); err != nil {
		t.Fatal(err)
	}
	u := shelfmark.WebURL{URL: "http://a.example/x.png", SURT: "example,a)/x.png", Domain: "a.example"}
	var recs []*shelfmark.WebRecord
	for i := range 20 {
		recs = append(recs, &shelfmark.WebRecord{Offset: int64(i * 5), Length: 5, Type: "response", Target: u,
			Time: time.Date(2024, 1, 1, 0, 0, i, 0, time.UTC), RecordID: fmt.Sprintf("<urn:x:%d>", i), MIME: "image/png", Status: 200})
	}
	const writers = 8
	applied := make(chan bool, writers)
	start := make(chan struct{})
	for range writers {
		go func() {
			<-start
			ok, err := e.repo.IndexWebBatch(ctx, &shelfmark.WebBatch{File: file, From: 0, Next: 100, Records: recs, Done: true})
			if err != nil {
				t.Error(err)
			}
			applied <- ok
		}()
	}
	close(start)
	n := 0
	for range writers {
		if <-applied {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d writers indexed the batch, want 1", n)
	}
	p, err := e.repo.WebCaptures(ctx, shelfmark.WebCaptureQuery{SURT: u.SURT, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Captures) != len(recs) {
		t.Fatalf("%d captures, want %d", len(p.Captures), len(recs))
	}
}

// localBlobs is a content store in the test's temporary directory, closed
// when the test ends.
func localBlobs(t *testing.T) *blob.LocalStore {
	t.Helper()
	blobs, err := blob.NewLocal(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { blobs.Close() })
	return blobs
}
