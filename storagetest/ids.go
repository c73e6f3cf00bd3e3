package storagetest

import (
	"context"
	"sync"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// testIDCodec: a new store gets a secret of its own on first load, which
// every later load (also concurrent ones, as of servers starting together)
// reads back; a store that holds resources from before ids were keyed keeps
// the legacy mapping, so its ids never change.
func testIDCodec(t *testing.T, open Opener) {
	ctx := context.Background()
	t.Run("new", func(t *testing.T) {
		e := newEnv(t, open, shelfmark.RepositoryOptions{})
		codecs := make([]*shelfmark.IDCodec, 4)
		var wg sync.WaitGroup
		for i := range codecs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := shelfmark.LoadIDCodec(ctx, e.store)
				if err != nil {
					t.Error(err)
				}
				codecs[i] = c
			}()
		}
		wg.Wait()
		if t.Failed() {
			return
		}
		again, err := shelfmark.LoadIDCodec(ctx, e.store)
		if err != nil {
			t.Fatal(err)
		}
		codecs = append(codecs, again)
		var secret string
		err = e.store.View(ctx, func(tx shelfmark.ReadTx) error {
			var err error
			secret, _, err = tx.Setting(ctx, shelfmark.IDSecretSetting)
			return err
		})
		if err != nil || len(secret) != 64 {
			t.Fatalf("stored secret %q (%v), want 64 hexadecimal digits", secret, err)
		}
		for k := int64(1); k <= 50; k++ {
			want := codecs[0].Encode(k)
			if want == shelfmark.LegacyIDCodec().Encode(k) {
				t.Fatalf("a new store gives key %d its legacy id %s", k, want)
			}
			for i, c := range codecs[1:] {
				if got := c.Encode(k); got != want {
					t.Fatalf("load %d gives key %d the id %s, load 0 gives %s", i+1, k, got, want)
				}
			}
		}
		// the engine over the loaded codec hands out its ids
		repo := shelfmark.NewRepository(e.store, shelfmark.RepositoryOptions{IDs: again})
		defer repo.Close()
		w := rs(t)(repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
		if k, err := again.Key(w.ID); err != nil || again.Encode(k) != w.ID {
			t.Fatalf("created %s: key %d, %v", w.ID, k, err)
		}
		if got := rs(t)(repo.FindResource(ctx, w.ID)); got.ID != w.ID {
			t.Fatalf("found %s as %s", w.ID, got.ID)
		}
	})
	t.Run("old", func(t *testing.T) {
		e := newEnv(t, open, shelfmark.RepositoryOptions{}) // a store from before: legacy ids
		w := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
		for i := 0; i < 2; i++ {
			c, err := shelfmark.LoadIDCodec(ctx, e.store)
			if err != nil {
				t.Fatal(err)
			}
			if c != shelfmark.LegacyIDCodec() {
				t.Fatalf("load %d of a store with resources is not the legacy codec", i)
			}
		}
		var v string
		err := e.store.View(ctx, func(tx shelfmark.ReadTx) error {
			var err error
			v, _, err = tx.Setting(ctx, shelfmark.IDSecretSetting)
			return err
		})
		if err != nil || v != "legacy" {
			t.Fatalf("setting %q (%v), want legacy", v, err)
		}
		if _, err := e.repo.FindResource(ctx, w.ID); err != nil {
			t.Fatalf("the old id %s: %v", w.ID, err)
		}
	})
}
