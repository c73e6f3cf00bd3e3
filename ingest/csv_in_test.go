package ingest

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestOpenCSVIn: a manifest read apart from its files resolves their paths
// inside the root it is given (never beside the manifest, never outside
// the root), and each item knows its first row.
func TestOpenCSVIn(t *testing.T) {
	files, elsewhere := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(files, "b1", "p1.txt"), "p1")
	writeFile(t, filepath.Join(elsewhere, "beside.txt"), "beside the manifest")
	manifest := filepath.Join(elsewhere, "m.csv")
	writeFile(t, manifest, "source_identifier,title,file\n"+
		"b1,One,b1/p1.txt\n"+
		",,\n"+ // a blank row is skipped but counted
		"b2,Two,beside.txt\n"+
		"b3,Three,../"+filepath.Base(elsewhere)+"/beside.txt\n")
	os.Symlink(elsewhere, filepath.Join(files, "out"))
	writeFile(t, manifest, mustRead(t, manifest)+"b4,Four,out/beside.txt\n")
	src, err := OpenCSVIn(manifest, files, "test")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	type got struct {
		key string
		row int
		ok  bool
	}
	var items []got
	for {
		it, err := src.Next(context.Background())
		var ie *ItemError
		switch {
		case errors.Is(err, io.EOF):
			want := []got{{"csv:b1", 2, true}, {"csv:b2", 4, false}, {"csv:b3", 5, false}, {"csv:b4", 6, false}}
			if len(items) != len(want) {
				t.Fatalf("items %v, want %v", items, want)
			}
			for i := range want {
				if items[i] != want[i] {
					t.Errorf("item %d: %v, want %v", i, items[i], want[i])
				}
			}
			return
		case errors.As(err, &ie):
			items = append(items, got{ie.Key, ie.Row, false})
		case err != nil:
			t.Fatal(err)
		default:
			items = append(items, got{it.Key, it.Row, true})
			if len(it.Files) != 1 || it.Files[0].Name != "p1.txt" {
				t.Errorf("files %+v", it.Files)
			}
		}
	}
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
