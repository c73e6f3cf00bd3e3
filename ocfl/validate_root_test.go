package ocfl

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestValidateRootErrors: each way a storage root can be wrong is reported
// with its code.
func TestValidateRootErrors(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		code  string
		spoil func(t *testing.T, dir string, root *Root)
	}{
		{"no declaration", "E069", func(t *testing.T, dir string, _ *Root) {
			must(t, os.Remove(filepath.Join(dir, "0=ocfl_1.1")))
		}},
		{"bad declaration content", "E080", func(t *testing.T, dir string, _ *Root) {
			must(t, os.WriteFile(filepath.Join(dir, "0=ocfl_1.1"), []byte("ocfl_1.0\n"), 0o644))
		}},
		{"bad layout file", "E070", func(t *testing.T, dir string, _ *Root) {
			must(t, os.WriteFile(filepath.Join(dir, layoutFile), []byte(`{"extension": 4}`), 0o644))
		}},
		{"file in extensions", "E112", func(t *testing.T, dir string, _ *Root) {
			must(t, os.WriteFile(filepath.Join(dir, "extensions", "notes.txt"), []byte("x"), 0o644))
		}},
		{"unregistered extension", "W016", func(t *testing.T, dir string, _ *Root) {
			must(t, os.MkdirAll(filepath.Join(dir, "extensions", "local-thing"), 0o755))
		}},
		{"empty directory", "E073", func(t *testing.T, dir string, _ *Root) {
			must(t, os.MkdirAll(filepath.Join(dir, "abc", "def"), 0o755))
		}},
		{"file in an intermediate directory", "E084", func(t *testing.T, dir string, _ *Root) {
			p := filepath.Join(dir, filepath.FromSlash(ObjectPath("info:a")))
			must(t, os.WriteFile(filepath.Join(filepath.Dir(p), "stray.txt"), []byte("x"), 0o644))
		}},
		{"object off its layout path", "E083", func(t *testing.T, dir string, _ *Root) {
			p := filepath.Join(dir, filepath.FromSlash(ObjectPath("info:a")))
			must(t, os.MkdirAll(filepath.Join(dir, "000", "000", "000"), 0o755))
			must(t, os.Rename(p, filepath.Join(dir, "000", "000", "000", "x")))
			must(t, os.RemoveAll(filepath.Join(dir, filepath.FromSlash(ObjectPath("info:a")[:3]))))
		}},
		{"symbolic link", "E090", func(t *testing.T, dir string, _ *Root) {
			must(t, os.Symlink("/etc", filepath.Join(dir, "link")))
		}},
		{"object error, with its path", "E092", func(t *testing.T, dir string, _ *Root) {
			p := filepath.Join(dir, filepath.FromSlash(ObjectPath("info:a")), "v1", "content", "a")
			must(t, os.WriteFile(p, []byte("changed"), 0o644))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, fsys := newRoot(t)
			commit(t, root, "info:a", 0, files{"a": "x"}, "v1")
			mustValid(t, fsys)
			tc.spoil(t, fsys.Dir(), root)
			rep := ValidateRoot(ctx, fsys)
			if !rep.Has(tc.code) {
				t.Errorf("want %s, got\n%s", tc.code, rep)
			}
			if tc.code[0] == 'W' && !rep.Valid() {
				t.Errorf("a warning case has errors:\n%s", rep)
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
