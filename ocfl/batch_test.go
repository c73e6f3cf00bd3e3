package ocfl

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBatchCommit commits new and existing objects in one batch, in
// parallel, and finds each at its new head and the root valid.
func TestBatchCommit(t *testing.T) {
	ctx := context.Background()
	root, fsys := newRoot(t)
	commit(t, root, "info:old", 0, files{"a": "alpha"}, "v1")
	b := root.NewBatch()
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- b.Add(ctx, fmt.Sprintf("info:new/%d", i), 0, newVersion(files{"a": fmt.Sprint("new ", i), "b/c": "shared"}, "v1", nil))
		}()
	}
	wg.Wait()
	if err := b.Add(ctx, "info:old", 1, newVersion(files{"a": "alpha", "b": "beta"}, "v2", nil)); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(ctx, "info:old", 1, newVersion(files{"a": "alpha"}, "again", nil)); err == nil {
		t.Fatal("an object added twice to one batch was accepted")
	}
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Add(ctx, "info:stale", 3, newVersion(files{"a": "x"}, "v4", nil)); !errors.Is(err, ErrHeadMismatch) {
		t.Fatalf("stale head: %v, want ErrHeadMismatch", err)
	}
	n, err := b.Commit(ctx)
	if err != nil || n != 9 {
		t.Fatalf("commit: %d versions, %v; want 9", n, err)
	}
	if _, err := b.Commit(ctx); err == nil {
		t.Fatal("a batch committed twice")
	}
	for i := range 8 {
		obj, err := root.Open(ctx, fmt.Sprintf("info:new/%d", i))
		if err != nil {
			t.Fatal(err)
		}
		checkObject(t, obj, 1, files{"a": fmt.Sprint("new ", i), "b/c": "shared"})
	}
	obj, err := root.Open(ctx, "info:old")
	if err != nil {
		t.Fatal(err)
	}
	if obj.Head() != 2 {
		t.Fatalf("old object head %d, want 2", obj.Head())
	}
	checkObject(t, obj, 2, files{"a": "alpha", "b": "beta"})
	mustValid(t, fsys)
	if st := fsys.Stats(); st.Files == 0 || st.Dirs == 0 {
		t.Errorf("stats %+v: the files and directories made were not counted", st)
	}
}

// TestBatchAbort leaves every object at its old head with nothing of the
// batch left on disk.
func TestBatchAbort(t *testing.T) {
	ctx := context.Background()
	root, fsys := newRoot(t)
	commit(t, root, "info:old", 0, files{"a": "alpha"}, "v1")
	b := root.NewBatch()
	for _, add := range []struct {
		id   string
		head int
	}{{"info:old", 1}, {"info:new", 0}} {
		if err := b.Add(ctx, add.id, add.head, newVersion(files{"a": "changed"}, "x", nil)); err != nil {
			t.Fatal(err)
		}
	}
	b.Abort(ctx)
	if _, err := root.Open(ctx, "info:new"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("aborted new object: %v, want ErrNotFound", err)
	}
	obj, err := root.Open(ctx, "info:old")
	if err != nil {
		t.Fatal(err)
	}
	if obj.Head() != 1 {
		t.Fatalf("head %d after abort, want 1", obj.Head())
	}
	if _, err := os.Stat(filepath.Join(fsys.Dir(), ObjectPath("info:old"), "v2")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("v2 left after abort: %v", err)
	}
	mustValid(t, fsys)
	// The objects are free again.
	commit(t, root, "info:old", 1, files{"a": "after"}, "v2")
}

// snapshot copies the storage root as a crash would leave it (the writer's
// locks and memory gone) and opens a Root on the copy.
func snapshot(t *testing.T, fsys *DirFS) (*Root, *DirFS) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "copy")
	if out, err := exec.Command("cp", "-a", fsys.Dir(), dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v: %s", err, out)
	}
	copyFS, err := NewDirFS(dst)
	if err != nil {
		t.Fatal(err)
	}
	root, err := OpenRoot(context.Background(), copyFS)
	if err != nil {
		t.Fatal(err)
	}
	return root, copyFS
}

// TestBatchCrashBeforeSync: versions added but never committed are gone
// after the crash, and the objects are at their old heads.
func TestBatchCrashBeforeSync(t *testing.T) {
	ctx := context.Background()
	root, fsys := newRoot(t)
	commit(t, root, "info:old", 0, files{"a": "alpha"}, "v1")
	b := root.NewBatch()
	for _, add := range []struct {
		id   string
		head int
	}{{"info:old", 1}, {"info:new", 0}} {
		if err := b.Add(ctx, add.id, add.head, newVersion(files{"a": "changed"}, "x", nil)); err != nil {
			t.Fatal(err)
		}
	}
	crashed, cfs := snapshot(t, fsys)
	b.Abort(ctx)
	if _, err := crashed.Open(ctx, "info:new"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("uncommitted new object: %v, want ErrNotFound", err)
	}
	obj, err := crashed.Open(ctx, "info:old")
	if err != nil || obj.Head() != 1 {
		t.Fatalf("old object after the crash: %v, %v; want head 1", obj, err)
	}
	if err := crashed.RecoverAll(ctx, func(string, error) error { return nil }); err != nil {
		t.Fatal(err)
	}
	mustValid(t, cfs)
}

// TestBatchTornRootInventory: on an FS that writes the root inventory
// anew (one that is not a Linker), a crash after the batch's first sync can
// tear a root inventory (written but not yet synced) or keep the old one
// with a new sidecar; recovery brings the first to its new version and the
// second to its old one, and both validate. (On a DirFS the root inventory
// is a second name of the version's, durable by then, and cannot be torn:
// the damage is made here by replacing the file.)
func TestBatchTornRootInventory(t *testing.T) {
	ctx := context.Background()
	root, fsys := newRoot(t)
	commit(t, root, "info:torn", 0, files{"a": "alpha"}, "v1")
	commit(t, root, "info:reordered", 0, files{"a": "alpha"}, "v1")
	oldInv, err := os.ReadFile(filepath.Join(fsys.Dir(), ObjectPath("info:reordered"), "inventory.json"))
	if err != nil {
		t.Fatal(err)
	}
	b := root.NewBatch()
	for _, id := range []string{"info:torn", "info:reordered", "info:first"} {
		head := 1
		if id == "info:first" {
			head = 0
		}
		if err := b.Add(ctx, id, head, newVersion(files{"a": "alpha", "b": "beta"}, "next", nil)); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := b.Commit(ctx); err != nil || n != 3 {
		t.Fatalf("commit: %d, %v", n, err)
	}
	crashed, cfs := snapshot(t, fsys)
	dir := func(id string) string { return filepath.Join(cfs.Dir(), filepath.FromSlash(ObjectPath(id))) }
	for _, id := range []string{"info:torn", "info:first"} {
		inv := filepath.Join(dir(id), "inventory.json")
		data, err := os.ReadFile(inv)
		if err != nil {
			t.Fatal(err)
		}
		replaceFile(t, inv, data[:len(data)/3])
	}
	replaceFile(t, filepath.Join(dir("info:reordered"), "inventory.json"), oldInv)
	for id, want := range map[string]int{"info:torn": 2, "info:first": 1, "info:reordered": 1} {
		obj, err := crashed.Open(ctx, id)
		if err != nil {
			t.Fatalf("%s after the crash: %v", id, err)
		}
		if obj.Head() != want {
			t.Errorf("%s: head %d after recovery, want %d", id, obj.Head(), want)
		}
		files := files{"a": "alpha", "b": "beta"}
		if want == 1 && id == "info:reordered" {
			files = map[string]string{"a": "alpha"}
		}
		checkObject(t, obj, want, files)
	}
	mustValid(t, cfs)
	if _, err := os.Stat(path.Join(dir("info:reordered"), "v2")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the uncommitted v2 of info:reordered was kept: %v", err)
	}
	// A root inventory torn with no whole version to restore it from is
	// reported, not repaired.
	for _, v := range []string{"v1", "v2"} {
		if err := os.WriteFile(filepath.Join(dir("info:torn"), v, "inventory.json"), []byte("{"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir("info:torn"), "inventory.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := crashed.Open(ctx, "info:torn"); err == nil || !strings.Contains(err.Error(), "inventory.json") {
		t.Fatalf("a torn root with no whole version: %v, want an error naming inventory.json", err)
	}
}

// replaceFile gives the name p a new file holding data, leaving any other
// name of the old one as it was.
func replaceFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// noLocks is an FS without locks (as an S3 store is).
type noLocks struct{ FS }

// TestOpenWithoutLocksRepairsNothing: on an FS without locks, a reader in
// another process must not take a version in progress for a crash's
// leftovers: Open there leaves it alone, and the writer commits it.
func TestOpenWithoutLocksRepairsNothing(t *testing.T) {
	ctx := context.Background()
	_, dirfs := newRoot(t)
	writer, err := OpenRoot(ctx, noLocks{dirfs})
	if err != nil {
		t.Fatal(err)
	}
	commit(t, writer, "info:old", 0, files{"a": "alpha"}, "v1")
	b := writer.NewBatch()
	for _, add := range []struct {
		id   string
		head int
	}{{"info:old", 1}, {"info:new", 0}} {
		if err := b.Add(ctx, add.id, add.head, newVersion(files{"a": "changed"}, "x", nil)); err != nil {
			t.Fatal(err)
		}
	}
	reader, err := OpenRoot(ctx, noLocks{dirfs})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Open(ctx, "info:new"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a new object in progress: %v, want ErrNotFound", err)
	}
	if obj, err := reader.Open(ctx, "info:old"); err != nil || obj.Head() != 1 {
		t.Fatalf("an object with a version in progress: %v, %v; want head 1", obj, err)
	}
	if n, err := b.Commit(ctx); err != nil || n != 2 {
		t.Fatalf("commit after the reads: %d, %v", n, err)
	}
	for _, id := range []string{"info:old", "info:new"} {
		obj, err := reader.Open(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		checkObject(t, obj, obj.Head(), files{"a": "changed"})
	}
	mustValid(t, dirfs)
}

// TestViewDuringBatch: a reader's View does not wait for the objects a
// batch holds, sees their last committed versions, and sees the new ones
// once the batch is committed; a root inventory that does not match its
// sidecar is an error.
func TestViewDuringBatch(t *testing.T) {
	ctx := context.Background()
	root, fsys := newRoot(t)
	commit(t, root, "info:old", 0, files{"a": "alpha"}, "v1")
	b := root.NewBatch()
	if err := b.Add(ctx, "info:old", 1, newVersion(files{"a": "changed"}, "v2", nil)); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(ctx, "info:new", 0, newVersion(files{"a": "new"}, "v1", nil)); err != nil {
		t.Fatal(err)
	}
	reader, err := OpenRoot(ctx, fsys) // another process's Root
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	obj, err := reader.View(short, "info:old")
	if err != nil || obj.Head() != 1 {
		t.Fatalf("view during the batch: %v, %v; want head 1 at once", obj, err)
	}
	if _, err := reader.View(short, "info:new"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("view of a new object during the batch: %v, want ErrNotFound", err)
	}
	if _, err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if obj, err := reader.View(ctx, "info:old"); err != nil || obj.Head() != 2 {
		t.Fatalf("view after the batch: %v, %v; want head 2", obj, err)
	}
	inv := filepath.Join(fsys.Dir(), filepath.FromSlash(ObjectPath("info:new")), "inventory.json")
	data, err := os.ReadFile(inv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inv, append(data, ' '), 0o644); err != nil { // still valid JSON
		t.Fatal(err)
	}
	if _, err := reader.View(ctx, "info:new"); err == nil || !strings.Contains(err.Error(), "does not match") {
		t.Fatalf("view of an inventory not matching its sidecar: %v", err)
	}
}

// TestBatchSharedLockByte: two objects whose directories lock the same
// byte of the lock file can be in one batch (the batch does not wait for
// itself), while a second Root of the same DirFS still waits for an
// object the batch holds.
func TestBatchSharedLockByte(t *testing.T) {
	ctx := context.Background()
	root, fsys := newRoot(t)
	byByte := map[uint32]string{}
	var a, b string
	for i := 0; a == ""; i++ {
		id := fmt.Sprint("info:", i)
		h := fnv.New32a()
		h.Write([]byte(ObjectPath(id)))
		if other, ok := byByte[h.Sum32()]; ok {
			a, b = other, id
		}
		byByte[h.Sum32()] = id
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	batch := root.NewBatch()
	for _, id := range []string{a, b} {
		if err := batch.Add(short, id, 0, newVersion(files{"a": id}, "v1", nil)); err != nil {
			t.Fatalf("add %s (its lock byte shared with the other): %v", id, err)
		}
	}
	other, err := OpenRoot(ctx, fsys)
	if err != nil {
		t.Fatal(err)
	}
	wait, cancelWait := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelWait()
	if _, err := other.Commit(wait, a, 0, newVersion(files{"a": "other"}, "v1", nil)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("another Root committing an object the batch holds: %v, want it to wait", err)
	}
	if n, err := batch.Commit(ctx); err != nil || n != 2 {
		t.Fatalf("commit: %d, %v", n, err)
	}
	mustValid(t, fsys)
}
