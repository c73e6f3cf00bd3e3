package ingest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

func TestCSVHappyPath(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"scans/b1/p1.tif", "scans/b1/p2.tif", "scans/b1/p10.tif", "scans/b2/a.jpg", "scans/b2/b.jpg", "cover.png"} {
		writeFile(t, filepath.Join(dir, n), n)
	}
	csvText := "\ufeffSource_Identifier,Title,creator,date,Subject,description,parent,file,position,dcterms:extent,http://example.org/ns#shelf,Local Note,\n" +
		"b1,\"Atlas, of the Rhine\",Ada|Bob,1899,Rivers | Maps,\"Two lines,\nwith a \"\"quote\"\"\",coll-1,scans/b1/p10.tif,3,120 p.,S-1,note,\n" +
		"b1,,,,,,,scans/b1/p1.tif,1,,,,\n" +
		"b1,,,,Maps,,coll-1,scans/b1/p2.tif,2,,,,\n" +
		",,,,,,,,,,,,\n" +
		"b2,Second,,,,,,scans/b2/b.jpg|scans/b2/a.jpg|cover.png,,,,,\n" +
		",Untitled row,,,,,,\n"
	p := filepath.Join(dir, "manifest.csv")
	writeFile(t, p, csvText)
	var first []string
	for run := 0; run < 2; run++ {
		src, err := OpenCSV(p)
		if err != nil {
			t.Fatal(err)
		}
		rs := drain(t, src)
		ks := keys(rs)
		eq(t, "keys", ks[:2], []string{"csv:b1", "csv:b2"})
		// a row without an identifier is keyed by its content; its former
		// key was its row number
		if it := rs[2].item; len(rs) != 3 || !regexp.MustCompile(`^csv-row:[0-9a-f]{32}$`).MatchString(it.Key) || it.FormerKey != "csv:row-7" || it.Row != 7 {
			t.Fatalf("row 7: %+v", rs[2])
		}
		if rs[0].item.FormerKey != "" {
			t.Errorf("an identified row has the former key %q", rs[0].item.FormerKey)
		}
		if run == 0 {
			first = ks
			continue
		}
		eq(t, "keys of the second open", ks, first)
		b1 := find(t, rs, "csv:b1").item
		eq(t, "b1 files", fileNames(b1), []string{"p1.tif", "p2.tif", "p10.tif"})
		eq(t, "b1 title", values(b1.Metadata, dc+"title"), []string{"Atlas, of the Rhine"})
		eq(t, "b1 creators", values(b1.Metadata, dc+"creator"), []string{"Ada", "Bob"})
		eq(t, "b1 subjects", values(b1.Metadata, dc+"subject"), []string{"Rivers", "Maps"})
		eq(t, "b1 description", values(b1.Metadata, dc+"description"), []string{"Two lines,\nwith a \"quote\""})
		eq(t, "b1 date", values(b1.Metadata, dc+"date"), []string{"1899"})
		eq(t, "b1 extent", values(b1.Metadata, dcterms+"extent"), []string{"120 p."})
		eq(t, "b1 shelf", values(b1.Metadata, "http://example.org/ns#shelf"), []string{"S-1"})
		eq(t, "b1 note", values(b1.Metadata, "urn:shelfmark:csv:Local%20Note"), []string{"note"})
		if b1.Collection != "coll-1" || len(b1.Metadata) != 10 {
			t.Errorf("b1 = %+v", b1)
		}
		realDir, _ := filepath.EvalSymlinks(dir)
		if f := b1.Files[0]; f.Path != filepath.Join(realDir, "scans", "b1", "p1.tif") || f.Size != int64(len("scans/b1/p1.tif")) || f.MediaType != "image/tiff" {
			t.Errorf("file = %+v", f)
		}
		b2 := find(t, rs, "csv:b2").item
		eq(t, "b2 files (cell order)", fileNames(b2), []string{"b.jpg", "a.jpg", "cover.png"})
		if b2.Collection != "" {
			t.Errorf("b2 collection = %q", b2.Collection)
		}
		r7 := rs[2].item
		eq(t, "row 7 title", values(r7.Metadata, dc+"title"), []string{"Untitled row"})
	}
}

func TestCSVColumnPredicate(t *testing.T) {
	for name, want := range map[string]string{
		"dcterms:extent":         dcterms + "extent",
		"schema:name":            "http://schema.org/name",
		"https://example.org/p":  "https://example.org/p",
		"urn:x:y":                "urn:x:y",
		"notes":                  "urn:shelfmark:csv:notes",
		"unknown:prefix":         "urn:shelfmark:csv:unknown:prefix",
		"dcterms:bad name":       "urn:shelfmark:csv:dcterms:bad%20name",
		"http://example.org/a b": "urn:shelfmark:csv:http://example.org/a%20b",
		"50% <done>":             "urn:shelfmark:csv:50%25%20%3Cdone%3E",
	} {
		if got := CSVColumnPredicate(name); got != want {
			t.Errorf("CSVColumnPredicate(%q) = %q, want %q", name, got, want)
		}
	}
	_ = shelfmark.NSDC
}

func TestCSVErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ok.tif"), "ok")
	outside := filepath.Join(t.TempDir(), "outside.tif")
	writeFile(t, outside, "outside")
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "passwd.tif")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	csvText := "id,title,file,position,parent\n" + // row 1
		"a,A,ok.tif,,\n" + // 2
		"b,B,ok.tif,,\n" + // 3
		"a,A again,ok.tif,,\n" + // 4: duplicate, not consecutive
		"a,A again,ok.tif,,\n" + // 5: same group
		"c,C,ok.tif|scans/p1.tif,,\n" + // 6
		"d,D,ok.tif,,\n" + // 7
		"d,D,scans/p1.tif,,\n" + // 8: the missing file is in the second row
		"e,E,../" + filepath.Base(filepath.Dir(outside)) + "/outside.tif,,\n" + // 9
		"f,F," + outside + ",,\n" + // 10
		"g,G,passwd.tif,,\n" + // 11
		"h,H,sub,,\n" + // 12
		"i,I,ok.tif,first,\n" + // 13
		"j,J,ok.tif,,p1|p2\n" + // 14
		"k,K,ok.tif,,p1\n" + // 15
		"k,K,ok.tif,,p2\n" + // 16
		"l,L,ok.tif,,,extra\n" + // 17
		"m,M,ok.tif,,\n" // 18
	p := filepath.Join(dir, "m.csv")
	writeFile(t, p, csvText)
	src, err := OpenCSV(p)
	if err != nil {
		t.Fatal(err)
	}
	rs := drain(t, src)
	eq(t, "keys", keys(rs), []string{"csv:a", "csv:b", "!csv:a", "!csv:c", "!csv:d", "!csv:e", "!csv:f", "!csv:g", "!csv:h", "!csv:i", "!csv:j", "!csv:k", "!csv:l", "csv:m"})
	wantItemError(t, rs[2], `csv:a: row 4: source identifier "a" was already used at row 2`)
	wantItemError(t, rs[3], "csv:c: row 6: file scans/p1.tif does not exist")
	wantItemError(t, rs[4], "csv:d: row 8: file scans/p1.tif does not exist")
	wantItemError(t, rs[5], "row 9: file ../", "escapes the input root")
	wantItemError(t, rs[6], "row 10: file "+outside+" is an absolute path")
	wantItemError(t, rs[7], "row 11: file passwd.tif resolves to /etc/passwd, outside the input root")
	wantItemError(t, rs[8], "row 12: file sub is not a regular file")
	wantItemError(t, rs[9], `row 13: column "position": "first" is not a whole number`)
	wantItemError(t, rs[10], "row 14", "several parents")
	wantItemError(t, rs[11], "row 16", `gives the parent "p2", but an earlier row of the work gave "p1"`)
	wantItemError(t, rs[12], "row 17: the row has 6 cells but the header only 5")
	if rs[7].err.Path != "passwd.tif" || rs[7].err.Row != 11 {
		t.Errorf("error fields = %+v", rs[7].err)
	}
}

func TestCSVSyntaxErrorEndsStream(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "m.csv")
	// The row after b's cannot be read, so b may be incomplete: nothing
	// more is returned.
	writeFile(t, p, "id,title\na,A\nb,B\nc,\"C\" x\nd,D\n")
	src, err := OpenCSV(p)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	ctx := t.Context()
	if it, err := src.Next(ctx); err != nil || it.Key != "csv:a" {
		t.Fatalf("first = %+v, %v", it, err)
	}
	for range 2 {
		if _, err := src.Next(ctx); err == nil || !strings.Contains(err.Error(), "line 4") {
			t.Fatalf("err = %v", err)
		}
	}
	if _, err := OpenCSV(filepath.Join(dir, "none.csv")); err == nil {
		t.Error("no error for a missing manifest")
	}
	writeFile(t, filepath.Join(dir, "empty.csv"), "")
	if _, err := OpenCSV(filepath.Join(dir, "empty.csv")); err == nil || !strings.Contains(err.Error(), "header") {
		t.Errorf("empty manifest: %v", err)
	}
	writeFile(t, filepath.Join(dir, "dup.csv"), "id,file,File\n")
	if _, err := OpenCSV(filepath.Join(dir, "dup.csv")); err == nil || !strings.Contains(err.Error(), "two") {
		t.Errorf("duplicate file columns: %v", err)
	}
}
