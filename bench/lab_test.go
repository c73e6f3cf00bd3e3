package bench

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/sqlite"
)

func labRepo(t *testing.T) (*shelfmark.Repository, shelfmark.BlobStore) {
	t.Helper()
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
	return repo, blobs
}

// TestRunCollection: the scenario stores every work in the collection and
// finds the deep page, also when 90% depth falls on a batch boundary.
func TestRunCollection(t *testing.T) {
	for _, works := range []int{1000, 1234} { // 900 is a boundary of batches of 100; 1110 is not
		repo, _ := labRepo(t)
		res, err := RunCollection(context.Background(), repo, CollectionConfig{Works: works, Batch: 100, Triples: 10, Buckets: 5})
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, s := range res.Report.Steps {
			sum += s.Items
		}
		if res.Report.Items != int64(works) || sum != int64(works) || res.DeepPageMS.P50 <= 0 || res.Report.Flatness <= 0 {
			t.Fatalf("works %d: %+v", works, res.Report)
		}
	}
}

// TestRunBook: the scenario stores, orders and edits a small book.
func TestRunBook(t *testing.T) {
	repo, blobs := labRepo(t)
	res, err := RunBook(context.Background(), repo, blobs, BookConfig{Pages: 30, PageBytes: 1000, Edits: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.PageMS) != 30 || res.OrderMS <= 0 || res.EditMS.P50 <= 0 || len(res.Report.Steps) != 1 {
		t.Fatalf("%+v", res)
	}
}
