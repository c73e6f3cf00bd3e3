package storagetest

import (
	"context"
	"path/filepath"
	"testing"

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
	runs := []struct {
		name  string
		order []int
		batch int
	}{
		{"forward-1000", []int{0, 1, 2, 3}, 1000},
		{"reverse-7", []int{3, 2, 1, 0}, 7},
		{"mixed-2", []int{2, 0, 3, 1}, 2},
	}
	for i, run := range runs {
		t.Run(run.name, func(t *testing.T) {
			e := newEnv(t, open, shelfmark.RepositoryOptions{})
			blobs, err := blob.NewLocal(filepath.Join(t.TempDir(), "blobs"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { blobs.Close() })
			ctx := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
			for _, f := range run.order {
				st, err := ingest.IngestWARC(ctx, e.repo, blobs, []string{paths[f]}, ingest.WARCOptions{Crawl: "exact", Batch: run.batch})
				if err != nil {
					t.Fatalf("ingest %s: %v", paths[f], err)
				}
				if st.Files != 1 || st.FilesFailed != 0 || st.Errors != 0 {
					t.Fatalf("ingest %s: %+v", paths[f], st)
				}
			}
			CheckWebIndex(t, ctx, e.repo, full)
			// a repeated ingest changes nothing
			st, err := ingest.IngestWARC(ctx, e.repo, blobs, paths, ingest.WARCOptions{Crawl: "exact", Batch: run.batch})
			if err != nil {
				t.Fatal(err)
			}
			if st.FilesSkipped != int64(len(paths)) || st.Records != 0 {
				t.Fatalf("repeated ingest: %+v, want every file skipped", st)
			}
			CheckWebIndex(t, ctx, e.repo, full)
			if i != 0 {
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
			if n, err := e.repo.SweepWebFiles(ctx); err != nil || n != 0 {
				t.Fatalf("second sweep: %d files, %v", n, err)
			}
		})
	}
}
