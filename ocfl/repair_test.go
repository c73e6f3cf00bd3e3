package ocfl

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReplaceContent: a damaged content file is rewritten from good bytes
// and the object reads and validates whole again; bytes of another digest
// change nothing; a path not in the manifest, or an unknown object, is
// refused.
func TestReplaceContent(t *testing.T) {
	ctx := context.Background()
	root, fsys := newRoot(t)
	want := files{"a.txt": "the first file", "b.txt": "the second file"}
	obj := commit(t, root, "urn:x:1", 0, want, "one")
	var cp string
	for _, c := range obj.ContentFiles() {
		if strings.HasSuffix(c.ContentPath, "a.txt") {
			cp = c.ContentPath
		}
	}
	disk := filepath.Join(fsys.Dir(), filepath.FromSlash(obj.Dir()), filepath.FromSlash(cp))
	if err := os.WriteFile(disk, []byte("the first filf"), 0o644); err != nil {
		t.Fatal(err)
	}
	rc, err := obj.Open(ctx, 1, "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(rc)
	rc.Close()
	if !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("reading the damaged file: %v, want a digest mismatch", err)
	}
	// other bytes: refused, the file as it was
	err = root.ReplaceContent(ctx, "urn:x:1", cp, strings.NewReader("something else"))
	if !errors.Is(err, ErrDigestMismatch) {
		t.Errorf("replacing with other bytes: %v, want a digest mismatch", err)
	}
	if b, _ := os.ReadFile(disk); string(b) != "the first filf" {
		t.Errorf("after a refused replacement the file holds %q", b)
	}
	if err := root.ReplaceContent(ctx, "urn:x:1", cp, strings.NewReader("the first file")); err != nil {
		t.Fatal(err)
	}
	obj, err = root.Open(ctx, "urn:x:1")
	if err != nil {
		t.Fatal(err)
	}
	checkObject(t, obj, 1, want)
	mustValid(t, fsys)
	if err := root.ReplaceContent(ctx, "urn:x:1", "v1/content/nope", strings.NewReader("x")); !errors.Is(err, ErrNotFound) {
		t.Errorf("a path not in the manifest: %v", err)
	}
	if err := root.ReplaceContent(ctx, "urn:x:2", cp, strings.NewReader("x")); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown object: %v", err)
	}
}
