package shelfmark_test

import (
	"context"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestIndexerPurgedMeanwhile: a work purged between the search indexer's
// read of a change and its write gets no search document (its text does
// not come back into the index), and the other work of the same step
// gets its own.
func TestIndexerPurgedMeanwhile(t *testing.T) {
	backends(t, func(t *testing.T, e *acctEnv) {
		ctx := context.Background()
		gone, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork,
			Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral("taken down")}}})
		if err != nil {
			t.Fatal(err)
		}
		kept, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork,
			Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral("kept")}}})
		if err != nil {
			t.Fatal(err)
		}
		x := shelfmark.NewSearchIndexer(e.store, shelfmark.IndexerOptions{})
		purged := false
		if err := shelfmark.IndexStepAround(ctx, x, func() {
			_, err := e.repo.Purge(ctx, gone.ID, "takedown", shelfmark.PurgeOptions{})
			purged = err == nil
		}); err != nil {
			t.Fatal(err)
		}
		if !purged {
			t.Fatal("the purge between the read and the write failed, or the step read nothing")
		}
		goneKey, _ := e.repo.IDs().Key(gone.ID)
		keptKey, _ := e.repo.IDs().Key(kept.ID)
		if err := e.store.View(ctx, func(tx shelfmark.ReadTx) error {
			if d, err := tx.SearchDoc(ctx, goneKey); err != nil || d != nil {
				t.Errorf("the purged work's document: %+v %v", d, err)
			}
			if d, err := tx.SearchDoc(ctx, keptKey); err != nil || d == nil {
				t.Errorf("the other work has no document: %v", err)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	})
}
