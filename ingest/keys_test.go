package ingest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// itemKeys returns a function that reads an opened source to its end and
// returns the keys of its items, which must all be good.
func itemKeys(t *testing.T) func(Source, error) []string {
	return func(src Source, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range drain(t, src) {
			if r.err != nil {
				t.Fatalf("item error %v", r.err)
			}
			out = append(out, r.item.Key)
		}
		return out
	}
}

// distinct fails unless the keys in a and b are disjoint.
func distinct(t *testing.T, what string, a, b []string) {
	t.Helper()
	for _, k := range a {
		for _, l := range b {
			if k == l {
				t.Errorf("%s: both have the key %q", what, k)
			}
		}
	}
}

// TestKeysDirectoryRoots: two folders each given as the root, holding
// different books, share no key (they were both "dir:." before); the same
// folder opened again has the same keys, as a root or below its parent;
// the same path refilled with other files is a new item; folders of the
// same relative path below different roots differ.
func TestKeysDirectoryRoots(t *testing.T) {
	base := t.TempDir()
	book1, book2 := filepath.Join(base, "book1"), filepath.Join(base, "book2")
	writeFile(t, filepath.Join(book1, "page_1.tif"), "book one, page one")
	writeFile(t, filepath.Join(book2, "page_1.tif"), "book two, page one, longer")
	k1 := itemKeys(t)(OpenDir(book1))
	k2 := itemKeys(t)(OpenDir(book2))
	if len(k1) != 1 || len(k2) != 1 {
		t.Fatalf("keys %q %q", k1, k2)
	}
	distinct(t, "two roots", k1, k2)
	eq(t, "book one again", itemKeys(t)(OpenDir(book1)), k1)
	// below its parent, book one is the same item
	under := itemKeys(t)(OpenDir(base))
	if len(under) != 2 || under[0] != k1[0] || under[1] != k2[0] {
		t.Errorf("below the parent: %q, want %q and %q", under, k1, k2)
	}
	// the same relative paths below two roots
	for _, r := range []string{"a", "b"} {
		writeFile(t, filepath.Join(base, "roots", r, "books", "x", "p.tif"), "same size "+r)
	}
	distinct(t, "same relative path", itemKeys(t)(OpenDir(filepath.Join(base, "roots", "a"))),
		itemKeys(t)(OpenDir(filepath.Join(base, "roots", "b"))))
	// the path refilled with another book (another listing) is new
	if err := os.Remove(filepath.Join(book1, "page_1.tif")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(book1, "page_01.tif"), "another book's first page")
	distinct(t, "refilled folder", itemKeys(t)(OpenDir(book1)), k1)
}

// TestKeysCSVWithoutIdentifiers: two manifests without a source_identifier
// column share no key (both were "csv:row-2" …); the same manifest read
// again has the same keys, also after a row before is deleted; two equal
// rows of one manifest differ; the same rows uploaded apart from their
// files (OpenCSVIn) keep their keys with the same origin.
func TestKeysCSVWithoutIdentifiers(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.tif"), "scan a")
	writeFile(t, filepath.Join(dir, "b.tif"), "scan b, longer")
	m1, m2 := filepath.Join(dir, "first.csv"), filepath.Join(dir, "second.csv")
	writeFile(t, m1, "title,file\nFirst book,a.tif\nSecond book,b.tif\n")
	writeFile(t, m2, "title,file\nThird book,a.tif\nFourth book,b.tif\n")
	k1 := itemKeys(t)(OpenCSV(m1))
	k2 := itemKeys(t)(OpenCSV(m2))
	if len(k1) != 2 || len(k2) != 2 {
		t.Fatalf("keys %q %q", k1, k2)
	}
	distinct(t, "two manifests", k1, k2)
	eq(t, "the first manifest again", itemKeys(t)(OpenCSV(m1)), k1)
	// the same rows in a manifest elsewhere (another origin) are new
	other := filepath.Join(t.TempDir(), "first.csv")
	writeFile(t, filepath.Join(filepath.Dir(other), "a.tif"), "scan a")
	writeFile(t, filepath.Join(filepath.Dir(other), "b.tif"), "scan b, longer")
	writeFile(t, other, "title,file\nFirst book,a.tif\nSecond book,b.tif\n")
	distinct(t, "a copy elsewhere", itemKeys(t)(OpenCSV(other)), k1)
	// deleting the first row leaves the second's key as it was
	writeFile(t, m1, "title,file\nSecond book,b.tif\n")
	eq(t, "after a deletion", itemKeys(t)(OpenCSV(m1)), k1[1:])
	// two equal rows are two items
	writeFile(t, m1, "title\nUntitled\nUntitled\nUntitled\n")
	same := itemKeys(t)(OpenCSV(m1))
	if len(same) != 3 || same[0] == same[1] || same[1] == same[2] || same[1] != same[0]+"~2" || same[2] != same[0]+"~3" {
		t.Errorf("equal rows: %q", same)
	}
	// a manifest staged apart from its files: the same origin, the same keys
	staged := filepath.Join(t.TempDir(), "manifest.csv")
	writeFile(t, staged, "title,file\nThird book,a.tif\n")
	a := itemKeys(t)(OpenCSVIn(staged, dir, "upload"))
	staged2 := filepath.Join(t.TempDir(), "manifest.csv")
	writeFile(t, staged2, "title,file\nThird book,a.tif\n")
	eq(t, "staged again", itemKeys(t)(OpenCSVIn(staged2, dir, "upload")), a)
	distinct(t, "another origin", itemKeys(t)(OpenCSVIn(staged2, dir, "elsewhere")), a)
}

// TestKeysBags: two bags with the same directory name and different
// payloads share no key (both were "bag:bag"); the same bag copied
// elsewhere keeps its key.
func TestKeysBags(t *testing.T) {
	a, b, c := filepath.Join(t.TempDir(), "bag"), filepath.Join(t.TempDir(), "bag"), filepath.Join(t.TempDir(), "bag")
	writeBag(t, a, bagSpec{files: map[string]string{"p.txt": "one book"}})
	writeBag(t, b, bagSpec{files: map[string]string{"p.txt": "another book"}})
	writeBag(t, c, bagSpec{files: map[string]string{"p.txt": "one book"}})
	ka := itemKeys(t)(OpenBag(a))
	distinct(t, "two bags of one name", ka, itemKeys(t)(OpenBag(b)))
	eq(t, "a copy", itemKeys(t)(OpenBag(c)), ka)
}

// TestKeysMARCWithoutControlNumber: records without a 001 in two files of
// the same name share no key (both were "marc:records.mrc#1"); the same
// record keeps its key; records with a 001 are keyed by it.
func TestKeysMARCWithoutControlNumber(t *testing.T) {
	rec := func(title string) string {
		// a minimal MARC 21 record with one 245 field
		field := "10\x1faTitle " + title + "\x1e"
		dir := "245" + pad(len(field), 4) + "00000" + "\x1e"
		base := 24 + len(dir)
		total := base + len(field) + 1
		return pad(total, 5) + "nam a22" + pad(base, 5) + "   4500" + dir + field + "\x1d"
	}
	a, b := filepath.Join(t.TempDir(), "records.mrc"), filepath.Join(t.TempDir(), "records.mrc")
	writeFile(t, a, rec("one"))
	writeFile(t, b, rec("two"))
	ka := itemKeys(t)(OpenMARC(a))
	if len(ka) != 1 || !strings.HasPrefix(ka[0], "marc:record:") {
		t.Fatalf("keys %q", ka)
	}
	distinct(t, "two files of one name", ka, itemKeys(t)(OpenMARC(b)))
	eq(t, "the same file again", itemKeys(t)(OpenMARC(a)), ka)
}

// pad writes n with leading zeros in width digits.
func pad(n, width int) string { return fmt.Sprintf("%0*d", width, n) }
