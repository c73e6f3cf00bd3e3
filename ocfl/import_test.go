package ocfl

import (
	"context"
	"fmt"
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

// TestCommitPaddedFull: an object whose zero-padded version names have no
// room left (v09 in a two-digit scheme, whose next name v10 would break
// the padding) is refused a new version rather than made invalid.
func TestCommitPaddedFull(t *testing.T) {
	ctx := context.Background()
	root, fsys := newRoot(t)
	const id = "info:padded"
	for i := 0; i < 9; i++ {
		commit(t, root, id, i, files{"f": strings.Repeat("x", i+1)}, "m")
	}
	// rename v1…v9 to v01…v09, in the directories and the inventories
	dir := filepath.Join(fsys.Dir(), filepath.FromSlash(ObjectPath(id)))
	rewrite := func(p string) {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		s := string(data)
		for i := 9; i >= 1; i-- {
			s = strings.ReplaceAll(s, fmt.Sprintf(`"v%d`, i), fmt.Sprintf(`"v0%d`, i))
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p+".sha512", []byte(sidecarText(hexDigest("sha512", []byte(s)))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 9; i++ {
		v := filepath.Join(dir, fmt.Sprintf("v%d", i))
		rewrite(filepath.Join(v, "inventory.json"))
		if err := os.Rename(v, filepath.Join(dir, fmt.Sprintf("v0%d", i))); err != nil {
			t.Fatal(err)
		}
	}
	rewrite(filepath.Join(dir, "inventory.json"))
	if rep := ValidateObject(ctx, fsys, ObjectPath(id)); !rep.Valid() || !rep.Has("W001") {
		t.Fatalf("the padded object:\n%s", rep)
	}
	if _, err := root.Commit(ctx, id, 9, newVersion(files{"f": "ten"}, "m", nil)); err == nil || !strings.Contains(err.Error(), "no room") {
		t.Errorf("commit of v10: %v, want a refusal", err)
	}
	if rep := ValidateObject(ctx, fsys, ObjectPath(id)); !rep.Valid() {
		t.Errorf("after the refused commit:\n%s", rep)
	}
}

// TestCommitOnto10Object: a version is not added to an OCFL 1.0 object
// (its declaration would have to change with it).
func TestCommitOnto10Object(t *testing.T) {
	ctx := context.Background()
	root, fsys := newRoot(t)
	commit(t, root, "info:old", 0, files{"f": "x"}, "m")
	dir := filepath.Join(fsys.Dir(), filepath.FromSlash(ObjectPath("info:old")))
	for _, p := range []string{"inventory.json", "v1/inventory.json"} {
		p = filepath.Join(dir, filepath.FromSlash(p))
		data, _ := os.ReadFile(p)
		s := strings.Replace(string(data), InventoryType, "https://ocfl.io/1.0/spec/#inventory", 1)
		must(t, os.WriteFile(p, []byte(s), 0o644))
		must(t, os.WriteFile(p+".sha512", []byte(sidecarText(hexDigest("sha512", []byte(s)))), 0o644))
	}
	must(t, os.Rename(filepath.Join(dir, "0=ocfl_object_1.1"), filepath.Join(dir, "0=ocfl_object_1.0")))
	must(t, os.WriteFile(filepath.Join(dir, "0=ocfl_object_1.0"), []byte("ocfl_object_1.0\n"), 0o644))
	if rep := ValidateObject(ctx, fsys, ObjectPath("info:old")); !rep.Valid() {
		t.Fatalf("the 1.0 object:\n%s", rep)
	}
	if _, err := root.Commit(ctx, "info:old", 1, newVersion(files{"f": "y"}, "m", nil)); err == nil || !strings.Contains(err.Error(), "not OCFL 1.1") {
		t.Errorf("commit onto a 1.0 object: %v, want a refusal", err)
	}
	if rep := ValidateObject(ctx, fsys, ObjectPath("info:old")); !rep.Valid() {
		t.Errorf("after the refused commit:\n%s", rep)
	}
}
