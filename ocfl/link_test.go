package ocfl

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestRootInventoryIsVersionsSecondName: on a DirFS the root inventory and
// root sidecar are second names of the head version's (so identical, as
// E064 asks, at no cost of a file of their own), by Commit and by Batch,
// and stay so as versions follow while the older version keeps its own;
// on an FS that cannot link they are files of their own with the same
// bytes. Both validate.
func TestRootInventoryIsVersionsSecondName(t *testing.T) {
	ctx := context.Background()
	same := func(t *testing.T, dir, a, b string) bool {
		t.Helper()
		ia, err := os.Stat(filepath.Join(dir, a))
		if err != nil {
			t.Fatal(err)
		}
		ib, err := os.Stat(filepath.Join(dir, b))
		if err != nil {
			t.Fatal(err)
		}
		return os.SameFile(ia, ib)
	}
	t.Run("DirFS", func(t *testing.T) {
		root, fsys := newRoot(t)
		commit(t, root, "info:linked", 0, files{"a": "alpha"}, "v1")
		b := root.NewBatch()
		if err := b.Add(ctx, "info:linked", 1, newVersion(files{"a": "alpha", "b": "beta"}, "v2", nil)); err != nil {
			t.Fatal(err)
		}
		if err := b.Add(ctx, "info:batched", 0, newVersion(files{"c": "gamma"}, "v1", nil)); err != nil {
			t.Fatal(err)
		}
		if n, err := b.Commit(ctx); n != 2 || err != nil {
			t.Fatalf("batch: %d, %v", n, err)
		}
		linked := filepath.Join(fsys.Dir(), filepath.FromSlash(ObjectPath("info:linked")))
		batched := filepath.Join(fsys.Dir(), filepath.FromSlash(ObjectPath("info:batched")))
		for _, name := range []string{"inventory.json", "inventory.json.sha512"} {
			if !same(t, linked, name, "v2/"+name) {
				t.Errorf("info:linked: %s is not v2's", name)
			}
			if same(t, linked, name, "v1/"+name) {
				t.Errorf("info:linked: %s is still v1's", name)
			}
			if !same(t, batched, name, "v1/"+name) {
				t.Errorf("info:batched: %s is not v1's", name)
			}
		}
		// a third version, by Commit, over a root that is a name of v2's
		obj := commit(t, root, "info:linked", 2, files{"a": "alpha 3"}, "v3")
		if !same(t, linked, "inventory.json", "v3/inventory.json") || same(t, linked, "v2/inventory.json", "v3/inventory.json") {
			t.Error("after v3 the root inventory is not v3's alone")
		}
		checkObject(t, obj, 3, files{"a": "alpha 3"})
		entries, err := os.ReadDir(linked)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if len(e.Name()) > len(tempPrefix) && e.Name()[:len(tempPrefix)] == tempPrefix {
				t.Errorf("temporary name %s left in the object root", e.Name())
			}
		}
		mustValid(t, fsys)
		// linking the same file again changes nothing and leaves no name
		if err := fsys.Link(ctx, ObjectPath("info:linked")+"/v3/inventory.json", ObjectPath("info:linked")+"/inventory.json"); err != nil {
			t.Fatal(err)
		}
		mustValid(t, fsys)
	})
	t.Run("without links", func(t *testing.T) {
		_, fsys := newRoot(t)
		root, err := OpenRoot(ctx, noLocks{fsys}) // nor links
		if err != nil {
			t.Fatal(err)
		}
		commit(t, root, "info:copied", 0, files{"a": "alpha"}, "v1")
		dir := filepath.Join(fsys.Dir(), filepath.FromSlash(ObjectPath("info:copied")))
		for _, name := range []string{"inventory.json", "inventory.json.sha512"} {
			if same(t, dir, name, "v1/"+name) {
				t.Errorf("%s linked through an FS without links", name)
			}
		}
		mustValid(t, fsys)
	})
}
