package ingest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

const (
	dcterms = shelfmark.NSDCTerms
	dc      = shelfmark.NSDC
)

func TestDirHappyPath(t *testing.T) {
	root := filepath.Join(t.TempDir(), "import")
	writeFile(t, filepath.Join(root, "readme.txt"), "top")
	b1 := filepath.Join(root, "books", "b1")
	for _, n := range []string{"page_10.tif", "page_2.tif", "Page_1.tif", "page_3.TIF", ".DS_Store"} {
		writeFile(t, filepath.Join(b1, n), n)
	}
	writeFile(t, filepath.Join(b1, "metadata.json"), `{"dc:title": "Book one", "dcterms:subject": ["Rivers", {"@value": "Flüsse", "@language": "de"}]}`)
	writeFile(t, filepath.Join(b1, "sub", "p.txt"), "nested")
	writeFile(t, filepath.Join(root, "books", "b2", "a.jpg"), "jpeg")
	writeFile(t, filepath.Join(root, "books", "b2", "metadata.ttl"), `PREFIX dc: <http://purl.org/dc/elements/1.1/>
<> dc:title "Book two"@en ; dc:date "1899" .
<#other> dc:title "not about the work" .`)
	writeFile(t, filepath.Join(root, "books", "b10", "x.pdf"), "pdf")
	writeFile(t, filepath.Join(root, ".hidden", "secret.txt"), "no")
	if err := os.MkdirAll(filepath.Join(root, "empty", "deeper"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "meta-only", "metadata.json"), `{"dc:title": "No files"}`)
	// A link to a file inside the root is a file; a link to a folder is
	// not followed.
	if err := os.Symlink(filepath.Join(b1, "page_2.tif"), filepath.Join(root, "books", "b10", "y.tif")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(b1, filepath.Join(root, "books", "b10", "loop")); err != nil {
		t.Fatal(err)
	}

	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	var first []string
	for run := 0; run < 2; run++ {
		src, err := OpenDir(root)
		if err != nil {
			t.Fatal(err)
		}
		rs := drain(t, src)
		ks := keys(rs)
		eq(t, "keys", relKeys(rs, real), []string{"dir:.", "dir:books/b1", "dir:books/b1/sub", "dir:books/b2", "dir:books/b10", "dir:meta-only"})
		for _, r := range rs {
			// the key is the folder's absolute path and a fingerprint;
			// the former key the path relative to the root
			if k := r.item.Key; !regexp.MustCompile(`^dir:/.+#[0-9a-f]{32}$`).MatchString(k) || r.item.FormerKey != relKey(k, real) {
				t.Errorf("key %q, former key %q", k, r.item.FormerKey)
			}
		}
		if run == 0 {
			first = ks
			continue
		}
		eq(t, "keys of the second open", ks, first)
		find := func(t *testing.T, rs []result, k string) result { return findRel(t, rs, real, k) }

		top := find(t, rs, "dir:.").item
		eq(t, "root title", values(top.Metadata, dc+"title"), []string{"import"})
		eq(t, "root files", fileNames(top), []string{"readme.txt"})

		it := find(t, rs, "dir:books/b1").item
		eq(t, "b1 files", fileNames(it), []string{"Page_1.tif", "page_2.tif", "page_3.TIF", "page_10.tif"})
		eq(t, "b1 title", values(it.Metadata, dc+"title"), []string{"Book one"})
		eq(t, "b1 subjects", values(it.Metadata, dcterms+"subject"), []string{"Rivers", "Flüsse"})
		if it.Metadata[len(it.Metadata)-1].Object.Lang != "de" {
			t.Errorf("language lost: %+v", it.Metadata)
		}
		f := it.Files[1]
		realB1, _ := filepath.EvalSymlinks(b1)
		if f.Path != filepath.Join(realB1, "page_2.tif") || f.Size != int64(len("page_2.tif")) || f.MediaType != "image/tiff" || f.SHA256 != "" {
			t.Errorf("file ref = %+v", f)
		}

		it = find(t, rs, "dir:books/b2").item
		eq(t, "b2 files", fileNames(it), []string{"a.jpg"})
		if len(it.Metadata) != 2 || it.Metadata[0] != (shelfmark.Statement{Predicate: dc + "title", Object: shelfmark.NewLangLiteral("Book two", "en")}) ||
			it.Metadata[1] != (shelfmark.Statement{Predicate: dc + "date", Object: shelfmark.NewLiteral("1899")}) {
			t.Errorf("b2 metadata = %+v", it.Metadata)
		}

		it = find(t, rs, "dir:books/b10").item
		eq(t, "b10 files", fileNames(it), []string{"x.pdf", "y.tif"})
		eq(t, "b10 title", values(it.Metadata, dc+"title"), []string{"b10"})
		if it.Files[1].Path != filepath.Join(realB1, "page_2.tif") {
			t.Errorf("link path = %s", it.Files[1].Path)
		}

		it = find(t, rs, "dir:meta-only").item
		if len(it.Files) != 0 || len(it.Metadata) != 1 {
			t.Errorf("meta-only = %+v", it)
		}
	}
}

func TestDirEscapes(t *testing.T) {
	root := t.TempDir()
	writeFile(t, filepath.Join(root, "a", "p1.tif"), "ok")
	writeFile(t, filepath.Join(root, "b", "p1.tif"), "ok")
	if err := os.Symlink("/etc/passwd", filepath.Join(root, "b", "p2.tif")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "b", "inner", "p.tif"), "ok") // still visited
	outside := filepath.Join(t.TempDir(), "out.txt")
	writeFile(t, outside, "outside")
	writeFile(t, filepath.Join(root, "c", "p1.tif"), "ok")
	if err := os.Symlink("../../"+filepath.Base(filepath.Dir(outside))+"/out.txt", filepath.Join(root, "c", "rel.tif")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "d", "p1.tif"), "ok")
	if err := os.Symlink("nowhere", filepath.Join(root, "d", "broken.tif")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "e", "metadata.json"), `{"dc:title": `)
	writeFile(t, filepath.Join(root, "f", "metadata.json"), `{}`)
	writeFile(t, filepath.Join(root, "f", "metadata.ttl"), ``)
	writeFile(t, filepath.Join(root, "g", "metadata.json"), `{"nope:x": "y"}`)
	src, err := OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	rs := drain(t, src)
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	find := func(t *testing.T, rs []result, k string) result { return findRel(t, rs, real, k) }
	eq(t, "keys", relKeys(rs, real), []string{"dir:a", "!dir:b", "dir:b/inner", "!dir:c", "!dir:d", "!dir:e", "!dir:f", "!dir:g"})
	wantItemError(t, find(t, rs, "dir:b"), "b/p2.tif", "resolves to /etc/passwd, outside the input root")
	if r := find(t, rs, "dir:b"); r.err.Path != "b/p2.tif" {
		t.Errorf("path = %q", r.err.Path)
	}
	wantItemError(t, find(t, rs, "dir:c"), "c/rel.tif", "outside the input root")
	wantItemError(t, find(t, rs, "dir:d"), "d/broken.tif", "broken symbolic link")
	wantItemError(t, find(t, rs, "dir:e"), "metadata.json", "line")
	wantItemError(t, find(t, rs, "dir:f"), "both metadata.json and metadata.ttl")
	wantItemError(t, find(t, rs, "dir:g"), "nope:x")
}

func TestDirRootIsFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	writeFile(t, p, "x")
	if _, err := OpenDir(p); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("err = %v", err)
	}
	if _, err := OpenDir(filepath.Join(p, "nope")); err == nil {
		t.Error("no error for a missing root")
	}
}
