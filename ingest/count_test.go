package ingest

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestCount: each source's count ahead equals the items and item errors
// that Next then returns.
func TestCount(t *testing.T) {
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	for _, n := range []string{"top.txt", "books/b1/p1.tif", "books/b1/p2.tif", "books/b1/sub/p.txt",
		"books/b2/a.jpg", ".hidden/secret.txt", "meta-only/metadata.json", "books/b3/metadata.json", "books/b3/metadata.ttl"} {
		writeFile(t, filepath.Join(tree, n), "{}")
	}
	if err := os.MkdirAll(filepath.Join(tree, "empty", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	bags := filepath.Join(dir, "bags")
	for _, b := range []string{"bag1", "bag2"} {
		writeBag(t, filepath.Join(bags, b), bagSpec{files: map[string]string{"a.txt": "a"}})
	}
	writeFile(t, filepath.Join(dir, "f.txt"), "x")
	manifest := filepath.Join(dir, "m.csv")
	writeFile(t, manifest, "id,title,file\n"+
		"b1,One,f.txt\nb1,,f.txt\n,,\n"+ // one work over two rows, a blank row
		"b2,Two,\n"+
		",Untitled,\n,Untitled too,\n"+ // two works without identifiers
		"b1,Again,\n"+ // a repeat after another work: an item error
		"b3,Missing,nothere.txt\n") // a missing file: an item error

	for name, open := range map[string]func() (Source, error){
		"dir":  func() (Source, error) { return OpenDir(tree) },
		"bags": func() (Source, error) { return OpenBags(bags) },
		"bag":  func() (Source, error) { return OpenBag(filepath.Join(bags, "bag1")) },
		"csv":  func() (Source, error) { return OpenCSV(manifest) },
	} {
		src, err := open()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n, err := src.(Counter).Count(context.Background())
		if err != nil {
			t.Fatalf("%s: count: %v", name, err)
		}
		if got := len(drain(t, src)); int64(got) != n {
			t.Errorf("%s: counted %d items ahead, read %d", name, n, got)
		}
		if n == 0 {
			t.Errorf("%s: nothing counted", name)
		}
	}
}
