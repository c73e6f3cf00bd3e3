package ocfl

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestCrashAtEveryWrite stops the writing "process" at each write of a
// commit in turn (a dead FS: nothing after it is written, not even the
// clean-up), with and without a temporary file of the cut write left
// behind. Reopened, the object reads as its last whole version (the new
// one only once the root inventory was written), validates clean, and
// takes the next version.
func TestCrashAtEveryWrite(t *testing.T) {
	ctx := context.Background()
	v1 := files{"a.txt": "alpha", "gone.txt": "bye"}
	v2 := files{"a.txt": "alpha", "b.txt": "beta", "c/d.txt": "delta"}
	v3 := files{"a.txt": "alpha 3"}
	for _, first := range []bool{true, false} {
		// writes of the commit under test, counted on a clean run
		before, commitFiles := files(nil), v2
		if first {
			commitFiles = v1
		} else {
			before = v1
		}
		count := func() int {
			root, _ := newRoot(t)
			if before != nil {
				commit(t, root, "info:x", 0, before, "v1")
			}
			d, _ := NewDirFS(root.FS().(*DirFS).Dir())
			c := &countingFS{DirFS: d}
			r2, err := OpenRoot(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			head := 0
			if before != nil {
				head = 1
			}
			commit(t, r2, "info:x", head, commitFiles, "under test")
			return len(c.writes)
		}()
		for crashAt := 1; crashAt <= count; crashAt++ {
			for _, partial := range []bool{false, true} {
				t.Run(fmt.Sprintf("first=%v/write%d/partial=%v", first, crashAt, partial), func(t *testing.T) {
					root, dirfs := newRoot(t)
					head := 0
					if before != nil {
						commit(t, root, "info:x", 0, before, "v1")
						head = 1
					}
					c := &countingFS{DirFS: dirfs, crashAt: crashAt, partial: partial}
					crashing, err := OpenRoot(ctx, c)
					if err != nil {
						t.Fatal(err)
					}
					_, err = crashing.Commit(ctx, "info:x", head, newVersion(commitFiles, "under test", nil))
					if !errors.Is(err, errCrashed) {
						t.Fatalf("commit: %v, want the simulated crash", err)
					}
					// a new process
					fresh, err := NewDirFS(dirfs.Dir())
					if err != nil {
						t.Fatal(err)
					}
					root2, err := OpenRoot(ctx, fresh)
					if err != nil {
						t.Fatal(err)
					}
					obj, err := root2.Open(ctx, "info:x")
					committed := crashAt == count // only the root sidecar was lost
					switch {
					case committed:
						if err != nil {
							t.Fatal(err)
						}
						if obj.Head() != head+1 {
							t.Fatalf("head %d, want %d", obj.Head(), head+1)
						}
						checkObject(t, obj, head+1, commitFiles)
						head++
					case head == 0:
						if !errors.Is(err, ErrNotFound) {
							t.Fatalf("open: %v, want ErrNotFound", err)
						}
						if _, err := os.Stat(filepath.Join(dirfs.Dir(), ObjectPath("info:x"))); !errors.Is(err, fs.ErrNotExist) {
							t.Errorf("partial new object left: %v", err)
						}
					default:
						if err != nil {
							t.Fatal(err)
						}
						if obj.Head() != head {
							t.Fatalf("head %d, want %d", obj.Head(), head)
						}
						checkObject(t, obj, head, before)
					}
					mustValid(t, fresh)
					commit(t, root2, "info:x", head, v3, "after the crash")
					mustValid(t, fresh)
				})
			}
		}
	}
}

// TestRecoverLeftovers: a partial version directory and a temporary
// inventory left in an object root are removed by the next open.
func TestRecoverLeftovers(t *testing.T) {
	ctx := context.Background()
	root, fsys := newRoot(t)
	const id = "info:leftovers"
	commit(t, root, id, 0, files{"a": "alpha"}, "v1")
	dir := filepath.Join(fsys.Dir(), ObjectPath(id))
	for name, data := range map[string]string{
		"v2/content/b":           "beta",
		"v3/content/c":           "gamma", // two versions ahead, too
		tempPrefix + "123abc":    `{"id": "partial inventory`,
		"v2/" + tempPrefix + "9": "x",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if rep := ValidateRoot(ctx, fsys); rep.Valid() {
		t.Fatal("leftovers not reported by validation")
	}
	obj, err := root.Open(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if obj.Head() != 1 {
		t.Fatalf("head %d, want 1", obj.Head())
	}
	for _, name := range []string{"v2", "v3", tempPrefix + "123abc"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s left: %v", name, err)
		}
	}
	mustValid(t, fsys)
	commit(t, root, id, 1, files{"a": "alpha", "b": "beta"}, "v2")
	mustValid(t, fsys)
}

// TestRecoverAll: the leftovers of a first version that never committed,
// whose id is never opened again, are removed by RecoverAll, and the
// storage root validates clean.
func TestRecoverAll(t *testing.T) {
	ctx := context.Background()
	root, dirfs := newRoot(t)
	commit(t, root, "info:kept", 0, files{"a": "alpha"}, "v1")
	for i, crashAt := range []int{1, 2, 3} {
		c := &countingFS{DirFS: dirfs, crashAt: crashAt, partial: true}
		crashing, err := OpenRoot(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := crashing.Commit(ctx, fmt.Sprintf("info:abandoned/%d", i), 0, newVersion(files{"a": "alpha", "b": "beta"}, "v1", nil)); !errors.Is(err, errCrashed) {
			t.Fatalf("commit: %v", err)
		}
	}
	c := &countingFS{DirFS: dirfs, crashAt: 2, partial: true}
	crashing, err := OpenRoot(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := crashing.Commit(ctx, "info:kept", 1, newVersion(files{"a": "alpha", "b": "beta"}, "v2", nil)); !errors.Is(err, errCrashed) {
		t.Fatalf("commit: %v", err)
	}
	if rep := ValidateRoot(ctx, dirfs); rep.Valid() {
		t.Fatal("the leftovers are not reported")
	}
	fresh, err := NewDirFS(dirfs.Dir())
	if err != nil {
		t.Fatal(err)
	}
	root2, err := OpenRoot(ctx, fresh)
	if err != nil {
		t.Fatal(err)
	}
	if err := root2.RecoverAll(ctx, func(dir string, err error) error { return err }); err != nil {
		t.Fatal(err)
	}
	mustValid(t, fresh)
	obj, err := root2.Open(ctx, "info:kept")
	if err != nil {
		t.Fatal(err)
	}
	checkObject(t, obj, 1, files{"a": "alpha"})
	n := 0
	if err := root2.Objects(ctx, func(string, error) error { n++; return nil }); err != nil || n != 1 {
		t.Errorf("objects after recovery: %d, %v", n, err)
	}
}
