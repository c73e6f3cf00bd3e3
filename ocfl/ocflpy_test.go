package ocfl

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"

	"github.com/shelfmark/shelfmark/internal/testkit"
)

// TestOCFLPy builds a storage root with several objects and versions (a
// new object, a file added, changed, removed, content shared by two files,
// a version restoring old content, a purged object, versions cut short by
// crashes and recovered) and has ocfl-py 2.1.0, the OCFL editors' reference
// implementation, validate the storage root and each object with digests
// checked: no error, no warning, and every object at the path the 0004
// layout gives its id.
func TestOCFLPy(t *testing.T) {
	py := testkit.OCFLPython(t)
	ctx := context.Background()
	root, fsys := newRoot(t)
	ids := []string{"https://example.org/works/1", "ark:/99999/fk4shelf", "info:shelfmark/ü-ñ/åß%202"}
	for i, id := range ids {
		for v := range history[:i+3] {
			commit(t, root, id, v, history[v], fmt.Sprintf("version %d of %s", v+1, id))
		}
	}
	// a large flat one, an edit of one file
	big := files{}
	for i := 0; i < 200; i++ {
		big[fmt.Sprintf("p/%03d.txt", i)] = fmt.Sprintf("page %d", i)
	}
	commit(t, root, "urn:example:big", 0, big, "v1")
	big["p/100.txt"] = "edited"
	commit(t, root, "urn:example:big", 1, big, "v2")
	// a purged object
	commit(t, root, "urn:example:gone", 0, files{"x": "y"}, "v1")
	if err := root.Purge(ctx, "urn:example:gone"); err != nil {
		t.Fatal(err)
	}
	// versions cut short by crashes, then recovered by the next open: one
	// before its commit point (inside the new content), one just after it
	// (the root sidecar lost: the 7th write, after three new contents, the
	// version inventory and sidecar, and the root inventory)
	for i, crashAt := range []int{2, 7} {
		id := fmt.Sprintf("urn:example:crashed-%d", i)
		commit(t, root, id, 0, history[0], "v1")
		d, err := NewDirFS(fsys.Dir())
		if err != nil {
			t.Fatal(err)
		}
		crashing, err := OpenRoot(ctx, &countingFS{DirFS: d, crashAt: crashAt, partial: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := crashing.Commit(ctx, id, 1, newVersion(history[4], "v2", nil)); err == nil {
			t.Fatal("the crashing commit succeeded")
		}
		obj, err := root.Open(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[int]int{0: 1, 1: 2}[i]; obj.Head() != want {
			t.Fatalf("%s: head %d after recovery, want %d", id, obj.Head(), want)
		}
		ids = append(ids, id)
	}
	mustValid(t, fsys)

	res := testkit.OCFLPyRoot(t, py, "testdata/ocflpy_validate.py", fsys.Dir())
	if !res.Root.Valid || res.Root.Errors+res.Root.Warnings > 0 || len(res.Root.Messages) > 0 ||
		res.Root.NumObjects != len(ids)+1 || res.Root.GoodObjects != res.Root.NumObjects || res.Root.Layout != LayoutExtension {
		t.Errorf("ocfl-py on the storage root: %+v", res.Root)
	}
	if len(res.Objects) != len(ids)+1 {
		t.Errorf("ocfl-py found %d objects, want %d", len(res.Objects), len(ids)+1)
	}
	for _, o := range res.Objects {
		if !o.Valid || o.Errors+o.Warnings > 0 || len(o.Messages) > 0 {
			t.Errorf("ocfl-py on %s (%s): %+v", o.Path, o.ID, o)
		}
		if o.Path != o.LayoutPath || o.Path != ObjectPath(o.ID) {
			t.Errorf("object %q at %s: ocfl-py's 0004 path %s, ours %s", o.ID, o.Path, o.LayoutPath, ObjectPath(o.ID))
		}
	}
	t.Logf("ocfl-py %s: storage root valid, %d objects valid, no warnings", res.Version, len(res.Objects))
}

// TestOCFLPyFixtures: ocfl-py and this package's validator agree on every
// fixture of the OCFL editors: which objects are valid, and which of those
// draw warnings.
func TestOCFLPyFixtures(t *testing.T) {
	py := testkit.OCFLPython(t)
	ctx := context.Background()
	var paths []string
	for _, kind := range []string{"good-objects", "warn-objects", "bad-objects"} {
		dirs, err := os.ReadDir(fixtureDir + "/" + kind)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dirs {
			paths = append(paths, fixtureDir+"/"+kind+"/"+d.Name())
		}
	}
	out, err := exec.Command(py, append([]string{"testdata/ocflpy_validate.py", "--objects"}, paths...)...).Output()
	if err != nil {
		t.Fatalf("ocfl-py: %v", err)
	}
	var res []struct {
		Path     string   `json:"path"`
		Valid    bool     `json:"valid"`
		Warnings int      `json:"warnings"`
		Codes    []string `json:"codes"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("ocfl-py output: %v\n%s", err, out)
	}
	if len(res) != len(paths) {
		t.Fatalf("ocfl-py validated %d objects, want %d", len(res), len(paths))
	}
	fsys, err := NewDirFS(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		ours := ValidateObject(ctx, fsys, r.Path)
		if ours.Valid() != r.Valid || ours.Valid() && (len(ours.Warnings) > 0) != (r.Warnings > 0) {
			t.Errorf("%s: ocfl-py valid=%v warnings=%d %v; ours:\n%s", r.Path, r.Valid, r.Warnings, r.Codes, ours)
		}
	}
}
