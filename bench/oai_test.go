package bench

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/sqlite"
)

// TestRunOAI: a small oai scenario harvests every record plainly and
// gzipped (the same bytes once decompressed, far fewer on the wire) and
// measures page 1 against a deep page.
func TestRunOAI(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "lab.db"), sqlite.Options{Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewLocal(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	t.Cleanup(func() { repo.Close(); db.Close(); blobs.Close() })
	res, err := RunOAI(ctx, repo, db, blobs, OAIConfig{Records: 450, PageSize: 20, Triples: 10, Sets: 3, Batch: 100, IngestBatch: 20, Buckets: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Report.Items != 450 || res.Gzip == nil || res.Gzip.Items != 450 {
		t.Fatalf("harvested %d plain, gzip %+v", res.Report.Items, res.Gzip)
	}
	if res.Bytes <= 0 || res.GzipBytes <= 0 || res.GzipBytes*3 > res.Bytes {
		t.Errorf("%d bytes plain, %d gzipped", res.Bytes, res.GzipBytes)
	}
	if res.DeepPage != 22 || res.Page1.P50 <= 0 || res.Deep.P50 <= 0 {
		t.Errorf("page 1 %+v against page %d %+v", res.Page1, res.DeepPage, res.Deep)
	}
	for i, s := range res.Report.Steps {
		if s.PeakRSS <= 0 {
			t.Errorf("step %d holds no resident size: %+v", i+1, s)
		}
	}
	if g := RSSGrowth(res.Report.Steps); g <= 0 {
		t.Errorf("RSS growth %v", g)
	}
}
