package oai

import (
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestProjectorPurgedMeanwhile: a work purged between the projector's
// read of a change and its write gets no record (the purge's deleted
// records stand, and nothing of its metadata reaches the view); a work
// that was not purged in the same step gets its record.
func TestProjectorPurgedMeanwhile(t *testing.T) {
	backends(t, func(t *testing.T, open func(testing.TB, Config) *env) {
		e := open(t, Config{})
		coll := e.create(&shelfmark.NewResource{Kind: shelfmark.KindCollection, Metadata: title("Takedowns")})
		gone := e.create(&shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}, Metadata: title("to be purged")})
		kept := e.create(&shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: title("kept")})
		var pl plan
		if err := e.store.View(e.ctx, func(tx shelfmark.ReadTx) error {
			_, err := e.proj.read(e.ctx, tx, &pl)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if len(pl.recs) == 0 || len(pl.sets) == 0 {
			t.Fatalf("the step read nothing to write: %+v", pl)
		}
		for _, id := range []shelfmark.ID{gone.ID, coll.ID} {
			if _, err := e.repo.Purge(e.ctx, id, "takedown", shelfmark.PurgeOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.store.Update(e.ctx, func(tx shelfmark.WriteTx) error { return e.proj.write(e.ctx, tx, &pl) }); err != nil {
			t.Fatal(err)
		}
		goneKey, _ := e.repo.IDs().Key(gone.ID)
		keptKey, _ := e.repo.IDs().Key(kept.ID)
		collKey, _ := e.repo.IDs().Key(coll.ID)
		if err := e.store.View(e.ctx, func(tx shelfmark.ReadTx) error {
			recs, err := tx.OAIRecordsOf(e.ctx, []int64{goneKey, keptKey})
			if err != nil {
				return err
			}
			var keptSeen bool
			for _, r := range recs {
				if r.Key == goneKey {
					t.Errorf("the purged work has a record: %+v", r)
				}
				keptSeen = keptSeen || (r.Key == keptKey && !r.Deleted)
			}
			if !keptSeen {
				t.Errorf("the other work has no record: %+v", recs)
			}
			sets, err := tx.OAISetsByKey(e.ctx, []int64{collKey})
			if err == nil && len(sets) != 0 {
				t.Errorf("the purged collection is a set: %+v", sets)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
	})
}
