package ocfl

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestInitRoot: a new storage root has its declaration, layout file and
// the 0004 configuration; initialising it again opens it; a directory that
// is something else is refused.
func TestInitRoot(t *testing.T) {
	ctx := context.Background()
	root, fsys := newRoot(t)
	commit(t, root, "info:a", 0, files{"a": "x"}, "v1")
	decl, err := os.ReadFile(filepath.Join(fsys.Dir(), "0=ocfl_1.1"))
	if err != nil || string(decl) != "ocfl_1.1\n" {
		t.Errorf("declaration %q, %v", decl, err)
	}
	var layout map[string]string
	data, _ := os.ReadFile(filepath.Join(fsys.Dir(), "ocfl_layout.json"))
	if err := json.Unmarshal(data, &layout); err != nil || layout["extension"] != LayoutExtension || layout["description"] == "" {
		t.Errorf("ocfl_layout.json: %s %v", data, err)
	}
	var cfg map[string]any
	data, _ = os.ReadFile(filepath.Join(fsys.Dir(), "extensions", LayoutExtension, "config.json"))
	if err := json.Unmarshal(data, &cfg); err != nil || cfg["extensionName"] != LayoutExtension || cfg["digestAlgorithm"] != "sha256" ||
		cfg["tupleSize"] != 3.0 || cfg["numberOfTuples"] != 3.0 || cfg["shortObjectRoot"] != false {
		t.Errorf("config.json: %s %v", data, err)
	}
	again, err := InitRoot(ctx, fsys)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := again.Open(ctx, "info:a"); err != nil {
		t.Errorf("open through a root initialised again: %v", err)
	}

	other, err := NewDirFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRoot(ctx, other); !errors.Is(err, ErrNotRoot) {
		t.Errorf("open of an empty directory: %v, want ErrNotRoot", err)
	}
	if err := os.WriteFile(filepath.Join(other.Dir(), "something.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := InitRoot(ctx, other); !errors.Is(err, ErrNotRoot) {
		t.Errorf("init over other files: %v, want ErrNotRoot", err)
	}
	// an init cut short (no declaration yet) is done again
	cut, err := NewDirFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(cut.Dir(), "extensions", LayoutExtension), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := InitRoot(ctx, cut); err != nil {
		t.Errorf("init after an init cut short: %v", err)
	}
	mustValid(t, cut)
}
