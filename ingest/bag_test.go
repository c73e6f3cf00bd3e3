package ingest

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// bagSpec describes a bag to write.
type bagSpec struct {
	files   map[string]string // path below data/ -> content
	info    string            // bag-info.txt without Payload-Oxum
	oxum    string            // "" for the right one, "-" for none
	tamper  func(dir string)  // runs after the bag is written
	noMD5   bool
	tagMans bool
}

func sha(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }

func md5sum(s string) string { h := md5.Sum([]byte(s)); return hex.EncodeToString(h[:]) }

// encodePath applies the RFC 8493 percent-encoding of manifest paths.
func encodePath(p string) string {
	return strings.NewReplacer("%", "%25", "\n", "%0A", "\r", "%0D").Replace(p)
}

// writeBag writes a valid bag into dir, then applies spec.tamper.
func writeBag(t testing.TB, dir string, spec bagSpec) {
	t.Helper()
	writeFile(t, filepath.Join(dir, "bagit.txt"), "BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n")
	var names []string
	var octets int
	for n, c := range spec.files {
		writeFile(t, filepath.Join(dir, "data", filepath.FromSlash(n)), c)
		names = append(names, n)
		octets += len(c)
	}
	sort.Strings(names)
	var m256, m5 strings.Builder
	for _, n := range names {
		fmt.Fprintf(&m256, "%s  data/%s\n", sha(spec.files[n]), encodePath(n))
		fmt.Fprintf(&m5, "%s data/%s\r\n", strings.ToUpper(md5sum(spec.files[n])), encodePath(n))
	}
	writeFile(t, filepath.Join(dir, "manifest-sha256.txt"), m256.String())
	if !spec.noMD5 {
		writeFile(t, filepath.Join(dir, "manifest-md5.txt"), m5.String())
	}
	if len(spec.files) == 0 {
		if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	info := spec.info
	switch spec.oxum {
	case "":
		info += fmt.Sprintf("Payload-Oxum: %d.%d\n", octets, len(names))
	case "-":
	default:
		info += "Payload-Oxum: " + spec.oxum + "\n"
	}
	writeFile(t, filepath.Join(dir, "bag-info.txt"), info)
	if spec.tagMans {
		var tm strings.Builder
		for _, n := range []string{"bagit.txt", "bag-info.txt", "manifest-sha256.txt"} {
			b, err := os.ReadFile(filepath.Join(dir, n))
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&tm, "%s %s\n", sha(string(b)), n)
		}
		writeFile(t, filepath.Join(dir, "tagmanifest-sha256.txt"), tm.String())
	}
	if spec.tamper != nil {
		spec.tamper(dir)
	}
}

func TestBagHappyPath(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "atlas-1899")
	files := map[string]string{
		"page_10.tif":        "ten",
		"page_2.tif":         "two",
		"page_1.tif":         "one",
		"sub/notes.txt":      "notes",
		"100%.txt":           "percent",
		"odd\nname.txt":      "newline",
		".hidden-is-payload": "hidden",
	}
	writeBag(t, dir, bagSpec{files: files, tagMans: true, info: "Source-Organization: Example Library\n" +
		"External-Description: An atlas of the Rhine,\n  in two volumes,\n\twith maps.\n" +
		"Bagging-Date: 2024-05-01\n" +
		"External-Identifier: ark:/12345/x1\n" +
		"Bag-Group-Identifier: atlases\n" +
		"Contact-Name: Ada Archivist\n" +
		"Contact-Email: ada@example.org\n" +
		"Custom Label: custom value\n"})
	var firstKey string
	for run := 0; run < 2; run++ {
		src, err := OpenBag(dir)
		if err != nil {
			t.Fatal(err)
		}
		rs := drain(t, src)
		if len(rs) != 1 || rs[0].err != nil {
			t.Fatalf("results = %+v", rs)
		}
		it := rs[0].item
		if run == 0 {
			firstKey = it.Key
		}
		if !regexp.MustCompile(`^bag:atlas-1899#[0-9a-f]{32}$`).MatchString(it.Key) || it.Key != firstKey || it.FormerKey != "bag:atlas-1899" {
			t.Errorf("key = %q (first %q), former key %q", it.Key, firstKey, it.FormerKey)
		}
		eq(t, "files", fileNames(it), []string{".hidden-is-payload", "100%.txt", "odd\nname.txt", "page_1.tif", "page_2.tif", "page_10.tif", "sub/notes.txt"})
		for _, f := range it.Files {
			if f.SHA256 != sha(files[f.Name]) || f.Size != int64(len(files[f.Name])) || !filepath.IsAbs(f.Path) {
				t.Errorf("file %+v", f)
			}
		}
		want := []shelfmark.Statement{
			{Predicate: dcterms + "publisher", Object: shelfmark.NewLiteral("Example Library")},
			{Predicate: dcterms + "description", Object: shelfmark.NewLiteral("An atlas of the Rhine, in two volumes, with maps.")},
			{Predicate: dcterms + "created", Object: shelfmark.NewTypedLiteral("2024-05-01", "http://www.w3.org/2001/XMLSchema#date")},
			{Predicate: dcterms + "identifier", Object: shelfmark.NewLiteral("ark:/12345/x1")},
			{Predicate: dcterms + "isPartOf", Object: shelfmark.NewLiteral("atlases")},
			{Predicate: "urn:shelfmark:bag-info:Contact-Name", Object: shelfmark.NewLiteral("Ada Archivist")},
			{Predicate: "urn:shelfmark:bag-info:Contact-Email", Object: shelfmark.NewLiteral("ada@example.org")},
			{Predicate: "urn:shelfmark:bag-info:Custom%20Label", Object: shelfmark.NewLiteral("custom value")},
			{Predicate: dc + "title", Object: shelfmark.NewLiteral("atlas-1899")},
		}
		if fmt.Sprint(it.Metadata) != fmt.Sprint(want) {
			t.Errorf("metadata =\n%v\nwant\n%v", it.Metadata, want)
		}
	}
}

func TestBagFailures(t *testing.T) {
	good := map[string]string{"p1.txt": "one", "p2.txt": "two"}
	cases := []struct {
		name   string
		spec   bagSpec
		reason []string
	}{
		{"wrong-checksum", bagSpec{files: good, noMD5: true, tamper: func(d string) {
			writeFile(t, filepath.Join(d, "data", "p2.txt"), "twO") // same size
		}}, []string{"data/p2.txt: sha256 checksum mismatch", "manifest-sha256.txt says " + sha("two"), "the file has " + sha("twO")}},
		{"wrong-md5-only", bagSpec{files: good, tamper: func(d string) {
			writeFile(t, filepath.Join(d, "manifest-md5.txt"), md5sum("one")+" data/p1.txt\n"+md5sum("one")+" data/p2.txt\n")
		}}, []string{"data/p2.txt: md5 checksum mismatch"}},
		{"missing-file", bagSpec{files: good, oxum: "3.1", tamper: func(d string) {
			os.Remove(filepath.Join(d, "data", "p2.txt"))
		}}, []string{"payload file data/p2.txt listed in manifest-md5.txt does not exist"}},
		{"extra-file", bagSpec{files: good, tamper: func(d string) {
			writeFile(t, filepath.Join(d, "data", "p3.txt"), "three")
		}}, []string{"payload file data/p3.txt is not listed in manifest-md5.txt"}},
		{"wrong-oxum-octets", bagSpec{files: good, oxum: "7.2"}, []string{"Payload-Oxum 7.2 does not match the payload: 6 octets in 2 files"}},
		{"wrong-oxum-count", bagSpec{files: good, oxum: "6.3"}, []string{"Payload-Oxum 6.3 does not match the payload: 6 octets in 2 files"}},
		{"bad-oxum", bagSpec{files: good, oxum: "six"}, []string{`Payload-Oxum "six" is not "octets.files"`}},
		{"symlink-passwd", bagSpec{files: good, tamper: func(d string) {
			os.Symlink("/etc/passwd", filepath.Join(d, "data", "p3.txt"))
		}}, []string{"data/p3.txt resolves to /etc/passwd, outside the input root"}},
		{"manifest-escape", bagSpec{files: good, noMD5: true, tamper: func(d string) {
			writeFile(t, filepath.Join(d, "manifest-sha256.txt"), sha("one")+" data/p1.txt\n"+sha("two")+" data/p2.txt\n"+sha("x")+" data/../../secret\n")
		}}, []string{"path data/../../secret escapes the bag"}},
		{"manifest-absolute", bagSpec{files: good, noMD5: true, tamper: func(d string) {
			writeFile(t, filepath.Join(d, "manifest-sha256.txt"), sha("x")+" /etc/passwd\n")
		}}, []string{"path /etc/passwd is absolute"}},
		{"no-bagit", bagSpec{files: good, tamper: func(d string) { os.Remove(filepath.Join(d, "bagit.txt")) }}, nil},
		{"bad-version", bagSpec{files: good, tamper: func(d string) {
			writeFile(t, filepath.Join(d, "bagit.txt"), "BagIt-Version: 2.0\nTag-File-Character-Encoding: UTF-8\n")
		}}, []string{`BagIt-Version "2.0" is not supported`}},
		{"latin1", bagSpec{files: good, tamper: func(d string) {
			writeFile(t, filepath.Join(d, "bagit.txt"), "BagIt-Version: 1.0\nTag-File-Character-Encoding: ISO-8859-1\n")
		}}, []string{`Tag-File-Character-Encoding "ISO-8859-1" is not supported`}},
		{"only-sha1", bagSpec{files: good, noMD5: true, tamper: func(d string) {
			os.Rename(filepath.Join(d, "manifest-sha256.txt"), filepath.Join(d, "manifest-sha1.txt"))
		}}, []string{"only manifests of unsupported algorithms (sha1)"}},
		{"fetch", bagSpec{files: good, tamper: func(d string) { writeFile(t, filepath.Join(d, "fetch.txt"), "") }}, []string{"fetch.txt"}},
		{"bad-tagmanifest", bagSpec{files: good, tagMans: true, tamper: func(d string) {
			writeFile(t, filepath.Join(d, "bag-info.txt"), "Payload-Oxum: 6.2\nContact-Name: changed\n")
		}}, []string{"bag-info.txt: sha256 checksum mismatch", "tagmanifest-sha256.txt"}},
		{"bad-checksum-syntax", bagSpec{files: good, noMD5: true, tamper: func(d string) {
			writeFile(t, filepath.Join(d, "manifest-sha256.txt"), "xyz data/p1.txt\n")
		}}, []string{`line 1: "xyz" is not a sha256 checksum`}},
	}
	root := filepath.Join(t.TempDir(), "bags")
	writeBag(t, filepath.Join(root, "a-good"), bagSpec{files: good})
	var want []string
	want = append(want, "bag:a-good")
	for _, c := range cases {
		writeBag(t, filepath.Join(root, "c-"+c.name), c.spec)
		if c.name != "no-bagit" {
			want = append(want, "!bag:c-"+c.name)
		}
	}
	writeBag(t, filepath.Join(root, "z-good"), bagSpec{files: good})
	want = append(want, "bag:z-good")
	sort.Slice(want, func(i, j int) bool {
		return NaturalCompare(strings.TrimPrefix(want[i], "!"), strings.TrimPrefix(want[j], "!")) < 0
	})
	writeFile(t, filepath.Join(root, "not-a-bag.txt"), "x")

	src, err := OpenBags(root)
	if err != nil {
		t.Fatal(err)
	}
	rs := drain(t, src)
	eq(t, "keys", relKeys(rs, root), want)
	find := func(t *testing.T, rs []result, k string) result { return findRel(t, rs, root, k) }
	for _, c := range cases {
		if c.name == "no-bagit" {
			continue
		}
		wantItemError(t, find(t, rs, "bag:c-"+c.name), c.reason...)
	}
	for _, k := range []string{"bag:a-good", "bag:z-good"} {
		if it := find(t, rs, k).item; it == nil || len(it.Files) != 2 {
			t.Errorf("%s = %+v", k, it)
		}
	}

	// A single bag without bagit.txt is an item error of its own.
	src, err = OpenBag(filepath.Join(root, "c-no-bagit"))
	if err != nil {
		t.Fatal(err)
	}
	wantItemError(t, drain(t, src)[0], "bagit.txt does not exist")
}

func TestBagCancelled(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "b")
	writeBag(t, dir, bagSpec{files: map[string]string{"a": "a"}})
	src, err := OpenBag(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := src.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if rs := drain(t, src); len(rs) != 1 || rs[0].item == nil {
		t.Errorf("after cancel: %+v", rs)
	}
}

func TestParseBagInfo(t *testing.T) {
	fields, err := ParseBagInfo(strings.NewReader("\ufeffA: 1\r\nB:two words \r\n  continued\rC:\n\n  late value\nD: x: y\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(fields)
	if want := "[{A 1} {B two words continued} {C late value} {D x: y}]"; got != want {
		t.Errorf("fields = %s, want %s", got, want)
	}
	for _, bad := range []string{" leading continuation\n", "no colon here\n", ": empty label\n", "A: \xff\n", "A: \x00\n"} {
		if _, err := ParseBagInfo(strings.NewReader(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if decodeManifestPath("a%0Ab%0dc%25d%41%2") != "a\nb\rc%d%41%2" {
		t.Errorf("decode = %q", decodeManifestPath("a%0Ab%0dc%25d%41%2"))
	}
}
