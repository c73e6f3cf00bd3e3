package ocfl

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree copies the directory src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCommitOntoFixtures adds a version to objects written by other tools
// (the editors' fixtures, placed at their layout paths): the new version
// follows their content directory name and version name padding, reuses
// their content (upper-case digests included), and the objects stay valid
// with no new warning.
func TestCommitOntoFixtures(t *testing.T) {
	ctx := context.Background()
	for _, fx := range []string{
		"good-objects/minimal_content_dir_called_stuff",
		"good-objects/spec-ex-full",
		"good-objects/updates_all_actions",
		"good-objects/minimal_uppercase_digests",
		"warn-objects/W001_zero_padded_versions",
	} {
		t.Run(fx, func(t *testing.T) {
			root, fsys := newRoot(t)
			data, err := os.ReadFile(filepath.Join(fixtureDir, fx, "inventory.json"))
			if err != nil {
				t.Fatal(err)
			}
			inv, rep := ParseInventory(data)
			if !rep.Valid() {
				t.Fatal(rep)
			}
			copyTree(t, filepath.Join(fixtureDir, fx), filepath.Join(fsys.Dir(), filepath.FromSlash(ObjectPath(inv.ID))))
			before := ValidateObject(ctx, fsys, ObjectPath(inv.ID))
			obj, err := root.Open(ctx, inv.ID)
			if err != nil {
				t.Fatal(err)
			}
			head := obj.Head()
			state, err := obj.State(head)
			if err != nil {
				t.Fatal(err)
			}
			want := files{}
			for p := range state {
				rc, err := obj.Open(ctx, head, p)
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(rc)
				rc.Close()
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				want[p] = string(b)
			}
			// drop one file (if any), add one
			for p := range want {
				delete(want, p)
				break
			}
			want["added/by/shelfmark.txt"] = "new content"
			opened := 0
			obj2, err := root.Commit(ctx, inv.ID, head, newVersion(want, "added by shelfmark", &opened))
			if err != nil {
				t.Fatal(err)
			}
			if opened != 1 {
				t.Errorf("opened %d contents, want 1", opened)
			}
			name := obj2.Inventory().Head
			if wantName := versionName(head+1, inv.Head); name != wantName {
				t.Errorf("new version %s, want %s", name, wantName)
			}
			for _, c := range obj2.ContentFiles() {
				if strings.HasPrefix(c.ContentPath, name+"/") && !strings.HasPrefix(c.ContentPath, name+"/"+inv.contentDir()+"/") {
					t.Errorf("new content at %s, not in %s", c.ContentPath, inv.contentDir())
				}
			}
			checkObject(t, obj2, head+1, want)
			after := ValidateObject(ctx, fsys, ObjectPath(inv.ID))
			if !after.Valid() {
				t.Fatalf("invalid after the commit:\n%s", after)
			}
			for _, w := range after.Warnings {
				if !before.Has(w.Code) {
					t.Errorf("new warning: %s", w)
				}
			}
		})
	}
}
