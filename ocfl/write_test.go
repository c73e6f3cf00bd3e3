package ocfl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// history is a sequence of versions exercising every kind of change: a new
// object, a file added, a file changed, a file removed, content shared by
// two files, a version restoring old content.
var history = []files{
	{"a.txt": "alpha", "dir/b.txt": "beta"},
	{"a.txt": "alpha", "dir/b.txt": "beta", "c.txt": "gamma"},                          // added
	{"a.txt": "alpha 2", "dir/b.txt": "beta", "c.txt": "gamma"},                        // changed
	{"a.txt": "alpha 2", "c.txt": "gamma"},                                             // removed
	{"a.txt": "alpha 2", "c.txt": "gamma", "copy/of-c.txt": "gamma", "d.txt": "delta"}, // shared
	{"a.txt": "alpha", "dir/b.txt": "beta", "c.txt": "gamma"},                          // restored
}

// TestCommitHistory commits a history of changes and reads every version
// back, and the storage root validates clean.
func TestCommitHistory(t *testing.T) {
	ctx := context.Background()
	root, fsys := newRoot(t)
	const id = "https://example.org/object/1"
	for i, fs := range history {
		opened := 0
		obj, err := root.Commit(ctx, id, i, newVersion(fs, fmt.Sprintf("version %d", i+1), &opened))
		if err != nil {
			t.Fatalf("v%d: %v", i+1, err)
		}
		if obj.Head() != i+1 {
			t.Fatalf("head %d, want %d", obj.Head(), i+1)
		}
		// forward delta: only content never seen before is opened
		wantOpened := map[int]int{0: 2, 1: 1, 2: 1, 3: 0, 4: 1, 5: 0}[i]
		if opened != wantOpened {
			t.Errorf("v%d opened %d new contents, want %d", i+1, opened, wantOpened)
		}
	}
	obj, err := root.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for i, fs := range history {
		checkObject(t, obj, i+1, fs)
	}
	if vs := obj.Versions(); len(vs) != len(history) || vs[0].Name != "v1" || vs[5].Message != "version 6" || vs[5].Files != 3 {
		t.Errorf("versions: %+v", vs)
	}
	// Each content file once, with the digest its bytes have.
	cf := obj.ContentFiles()
	if len(cf) != 6 { // alpha, beta, gamma, alpha 2, delta... and no copy of gamma
		t.Logf("content files: %+v", cf)
	}
	for _, c := range cf {
		rc, err := fsys.Open(ctx, c.Path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		if sum(string(b)) != c.Digest {
			t.Errorf("%s: digest mismatch", c.Path)
		}
	}
	if _, err := obj.State(7); !errors.Is(err, ErrNotFound) {
		t.Errorf("state of v7: %v, want ErrNotFound", err)
	}
	if _, err := obj.Open(ctx, 4, "dir/b.txt"); !errors.Is(err, ErrNotFound) {
		t.Errorf("open of a removed file: %v, want ErrNotFound", err)
	}
	if _, err := root.Open(ctx, "https://example.org/none"); !errors.Is(err, ErrNotFound) {
		t.Errorf("open of a missing object: %v, want ErrNotFound", err)
	}
	mustValid(t, fsys)
}

// TestForwardDelta: editing one file of a 1,000-file object writes that
// file, the two inventories and their sidecars, nothing else.
func TestForwardDelta(t *testing.T) {
	ctx := context.Background()
	dir, err := NewDirFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cfs := &countingFS{DirFS: dir}
	root, err := InitRoot(ctx, cfs)
	if err != nil {
		t.Fatal(err)
	}
	const id = "ark:/12345/big"
	fs := files{}
	for i := 0; i < 1000; i++ {
		fs[fmt.Sprintf("pages/%04d.txt", i)] = fmt.Sprintf("page %d", i)
	}
	commit(t, root, id, 0, fs, "v1")
	cfs.reset()
	fs["pages/0500.txt"] = "page 500, corrected"
	opened := 0
	obj, err := root.Commit(ctx, id, 1, newVersion(fs, "edit", &opened))
	if err != nil {
		t.Fatal(err)
	}
	if opened != 1 {
		t.Errorf("opened %d contents, want 1", opened)
	}
	dirp := ObjectPath(id)
	want := []string{
		dirp + "/v2/content/pages/0500.txt",
		dirp + "/v2/inventory.json",
		dirp + "/v2/inventory.json.sha512",
		dirp + "/inventory.json",
		dirp + "/inventory.json.sha512",
	}
	if strings.Join(cfs.writes, "\n") != strings.Join(want, "\n") {
		t.Errorf("writes:\n%s\nwant:\n%s", strings.Join(cfs.writes, "\n"), strings.Join(want, "\n"))
	}
	inv, err := obj.Inventory().Marshal()
	if err != nil {
		t.Fatal(err)
	}
	// the content written, the inventory and its sidecar of 128+16 bytes
	// (the root's are second names of the version's)
	if wantBytes := int64(len("page 500, corrected") + len(inv) + 128 + len("  inventory.json\n")); cfs.bytes != wantBytes {
		t.Errorf("wrote %d bytes, want %d", cfs.bytes, wantBytes)
	}
	checkObject(t, obj, 2, fs)
	mustValid(t, cfs)
}

// TestDigestMismatch: content whose bytes do not have the claimed digest is
// refused, and nothing of the version is left.
func TestDigestMismatch(t *testing.T) {
	ctx := context.Background()
	root, fsys := newRoot(t)
	const id = "info:example/mismatch"
	// a new object: nothing at all is left
	v := newVersion(files{"a.txt": "alpha"}, "v1", nil)
	v.Content = func(context.Context, string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("not alpha")), nil
	}
	if _, err := root.Commit(ctx, id, 0, v); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("commit: %v, want ErrDigestMismatch", err)
	}
	if _, err := root.Open(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("open after a refused first version: %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(filepath.Join(fsys.Dir(), ObjectPath(id))); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("object root left behind: %v", err)
	}
	// an existing object stays at its head
	commit(t, root, id, 0, files{"a.txt": "alpha"}, "v1")
	v = newVersion(files{"a.txt": "alpha", "b.txt": "beta"}, "v2", nil)
	v.Content = func(context.Context, string) (io.ReadCloser, error) {
		return io.NopCloser(strings.NewReader("betx")), nil
	}
	if _, err := root.Commit(ctx, id, 1, v); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("commit v2: %v, want ErrDigestMismatch", err)
	}
	obj, err := root.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if obj.Head() != 1 {
		t.Fatalf("head %d after a refused version, want 1", obj.Head())
	}
	if _, err := os.Stat(filepath.Join(fsys.Dir(), ObjectPath(id), "v2")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("v2 left behind: %v", err)
	}
	mustValid(t, fsys)
	commit(t, root, id, 1, files{"a.txt": "alpha", "b.txt": "beta"}, "v2")
	mustValid(t, fsys)
}

// TestCommitRefusals: bad input is refused before anything is written.
func TestCommitRefusals(t *testing.T) {
	ctx := context.Background()
	root, fsys := newRoot(t)
	for name, v := range map[string]NewVersion{
		"dot element":   newVersion(files{"a/../b": "x"}, "m", nil),
		"leading slash": newVersion(files{"/a": "x"}, "m", nil),
		"conflict":      newVersion(files{"a": "x", "a/b": "y"}, "m", nil),
		"not UTF-8":     newVersion(files{"a\xff": "x"}, "m", nil),
		"NUL":           newVersion(files{"a\x00b": "x"}, "m", nil),
		"no user": func() NewVersion {
			v := newVersion(files{"a": "x"}, "m", nil)
			v.User = User{}
			return v
		}(),
		"bad digest": {State: map[string]string{"a": "abc"}, User: User{Name: "n"}, Created: newVersion(nil, "", nil).Created},
	} {
		if _, err := root.Commit(ctx, "id:"+name, 0, v); err == nil {
			t.Errorf("%s: committed", name)
		}
	}
	if _, err := root.Commit(ctx, "id:x", 3, newVersion(files{"a": "x"}, "m", nil)); !errors.Is(err, ErrHeadMismatch) {
		t.Errorf("wrong head on a new object: %v", err)
	}
	mustValid(t, fsys)
}

// TestConcurrentCommit: writers racing to add version 2 of one object, in
// one Root and in separate Roots over the same directory (as separate
// processes would be): exactly one commits, the others get ErrHeadMismatch.
func TestConcurrentCommit(t *testing.T) {
	ctx := context.Background()
	root, fsys := newRoot(t)
	const id = "urn:example:race"
	commit(t, root, id, 0, files{"a.txt": "alpha"}, "v1")
	roots := []*Root{root, root, root}
	for i := 0; i < 3; i++ {
		other, err := NewDirFS(fsys.Dir())
		if err != nil {
			t.Fatal(err)
		}
		r, err := OpenRoot(ctx, other)
		if err != nil {
			t.Fatal(err)
		}
		roots = append(roots, r)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(roots))
	for i, r := range roots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = r.Commit(ctx, id, 1, newVersion(files{"a.txt": "alpha", "w.txt": fmt.Sprintf("writer %d", i)}, "race", nil))
		}()
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil:
			if won >= 0 {
				t.Fatalf("writers %d and %d both committed", won, i)
			}
			won = i
		case !errors.Is(err, ErrHeadMismatch):
			t.Errorf("writer %d: %v, want ErrHeadMismatch", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no writer committed")
	}
	obj, err := root.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	checkObject(t, obj, 2, files{"a.txt": "alpha", "w.txt": fmt.Sprintf("writer %d", won)})
	mustValid(t, fsys)
}

// TestPurge removes an object and its empty tuple directories; other
// objects stay valid.
func TestPurge(t *testing.T) {
	ctx := context.Background()
	root, fsys := newRoot(t)
	commit(t, root, "info:keep", 0, files{"a": "x"}, "v1")
	commit(t, root, "info:drop", 0, files{"a": "x", "b": "y"}, "v1")
	commit(t, root, "info:drop", 1, files{"b": "z"}, "v2")
	if err := root.Purge(ctx, "info:drop"); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Open(ctx, "info:drop"); !errors.Is(err, ErrNotFound) {
		t.Errorf("open after purge: %v", err)
	}
	top := strings.SplitN(ObjectPath("info:drop"), "/", 2)[0]
	if top != strings.SplitN(ObjectPath("info:keep"), "/", 2)[0] {
		if _, err := os.Stat(filepath.Join(fsys.Dir(), top)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("empty tuple directory %s left: %v", top, err)
		}
	}
	if err := root.Purge(ctx, "info:drop"); err != nil {
		t.Errorf("second purge: %v", err)
	}
	mustValid(t, fsys)
	// the id can be used again
	commit(t, root, "info:drop", 0, files{"c": "w"}, "v1")
	mustValid(t, fsys)
}

// TestObjectPath follows the 0004 extension's own example (sha256,
// tupleSize 3, numberOfTuples 3, shortObjectRoot false).
func TestObjectPath(t *testing.T) {
	for id, want := range map[string]string{
		"object-01":        "3c0/ff4/240/3c0ff4240c1e116dba14c7627f2319b58aa3d77606d0d90dfc6161608ac987d4",
		"..hor/rib:le-$id": "487/326/d8c/487326d8c2a3c0b885e23da1469b4d6671fd4e76978924b4443e9e3c316cda6d",
	} {
		if got := ObjectPath(id); got != want {
			t.Errorf("ObjectPath(%q) = %s, want %s", id, got, want)
		}
	}
}

// TestObjects lists every committed object once, and not a purged one.
func TestObjects(t *testing.T) {
	ctx := context.Background()
	root, _ := newRoot(t)
	want := map[string]bool{}
	for i := 0; i < 20; i++ {
		id := fmt.Sprintf("info:obj/%d", i)
		commit(t, root, id, 0, files{"a": id}, "v1")
		want[id] = true
	}
	if err := root.Purge(ctx, "info:obj/3"); err != nil {
		t.Fatal(err)
	}
	delete(want, "info:obj/3")
	got := map[string]bool{}
	err := root.Objects(ctx, func(id string, err error) error {
		if err != nil {
			return err
		}
		if got[id] {
			t.Errorf("%s listed twice", id)
		}
		got[id] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("listed %d objects, want %d", len(got), len(want))
	}
	for id := range want {
		if !got[id] {
			t.Errorf("%s not listed", id)
		}
	}
}

// TestInventorySizeCap: an inventory over MaxInventorySize is refused with
// a clear error, by the parser and by object validation, without being
// read whole.
func TestInventorySizeCap(t *testing.T) {
	ctx := context.Background()
	_, rep := ParseInventory(make([]byte, MaxInventorySize+1))
	if !rep.Has("E033") || !strings.Contains(rep.String(), "over the limit") {
		t.Errorf("parser: %s", rep)
	}
	root, fsys := newRoot(t)
	commit(t, root, "info:big", 0, files{"a": "x"}, "v1")
	inv := filepath.Join(fsys.Dir(), ObjectPath("info:big"), "inventory.json")
	if err := os.Truncate(inv, MaxInventorySize+10); err != nil {
		t.Fatal(err)
	}
	rep = ValidateObject(ctx, fsys, ObjectPath("info:big"))
	if !rep.Has("E033") || !strings.Contains(rep.String(), "over the limit") {
		t.Errorf("validation: %s", rep)
	}
	if _, err := root.Open(ctx, "info:big"); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("open: %v", err)
	}
}
