package storagetest

import (
	"context"
	"reflect"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// testSourceKeysOf: the source keys each resource was ingested from are
// read back by resource, sorted, in one statement whatever the number of
// resources asked for; a resource without any is absent.
func testSourceKeysOf(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	a := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	b := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	c := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	ka, _ := e.repo.IDs().Key(a.ID)
	kb, _ := e.repo.IDs().Key(b.ID)
	kc, _ := e.repo.IDs().Key(c.ID)
	if err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		return tx.InsertSources(ctx, []string{"marc:2", "dir:/b", "marc:1", "dir:/a"}, []int64{ka, kb, ka, ka})
	}); err != nil {
		t.Fatal(err)
	}
	var got map[int64][]string
	calls := e.rec.capture(func() {
		if err := e.store.View(ctx, func(tx shelfmark.ReadTx) error {
			var err error
			got, err = tx.SourceKeysOf(ctx, []int64{ka, kb, kc, 1 << 40})
			return err
		}); err != nil {
			t.Fatal(err)
		}
	})
	want := map[int64][]string{ka: {"dir:/a", "marc:1", "marc:2"}, kb: {"dir:/b"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("SourceKeysOf = %v, want %v", got, want)
	}
	n := 0
	for _, c := range calls {
		if c.rows >= 0 && len(c.query) > 6 && c.query[:6] == "SELECT" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("SourceKeysOf ran %d queries, want 1: %v", n, calls)
	}
	if err := e.store.View(ctx, func(tx shelfmark.ReadTx) error {
		got, err := tx.SourceKeysOf(ctx, nil)
		if err == nil && len(got) != 0 {
			t.Errorf("SourceKeysOf(none) = %v", got)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
