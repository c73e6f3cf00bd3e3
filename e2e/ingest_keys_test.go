package e2e

import (
	"path/filepath"
	"regexp"
	"testing"
)

// TestIngestServerDistinctInputs: `shelfmark ingest --server` stores a
// second folder given as the root and a second CSV manifest without
// source identifiers on a served repository; a re-run skips them, naming
// each work with its page on the server; --store-anyway stores one again,
// once.
func TestIngestServerDistinctInputs(t *testing.T) {
	dir := t.TempDir()
	srv := &crashTest{t: t, dir: filepath.Join(dir, "data"), works: map[string]*crashWork{}}
	t.Cleanup(func() {
		srv.stopChild()
		if t.Failed() {
			t.Logf("output of the server:\n%s", srv.output.String())
		}
	})
	srv.startChild(0) // `serve` on a free 127.0.0.1 port (see crash_test.go)
	token := adminToken(t, srv.dir)
	in := filepath.Join(dir, "in")
	writeTree(t, in, map[string]string{
		"book1/page_1.txt": "the first page of book one",
		"book2/page_1.txt": "the first page of book two, which is longer",
		"csv/a.txt":        "scan a",
		"csv/b.txt":        "scan b",
		"csv/first.csv":    "title,file\nFirst book,a.txt\nSecond book,b.txt\n",
		"csv/second.csv":   "title,file\nThird book,a.txt\nFourth book,b.txt\n",
	})
	ingest := func(path string, extra ...string) string {
		t.Helper()
		out, err := runCLI(t, append([]string{"ingest", filepath.Join(in, path), "--server", srv.base, "--token", token, "--workers", "2"}, extra...)...)
		if err != nil {
			t.Fatalf("ingest %s %v: %v\n%s", path, extra, err, out)
		}
		return out
	}
	wantOutput(t, "book one", ingest("book1"), "1 stored, 0 skipped (stored before), 0 failed")
	wantOutput(t, "book two", ingest("book2"), "1 stored, 0 skipped (stored before), 0 failed")
	wantOutput(t, "the first manifest", ingest("csv/first.csv"), "2 stored, 0 skipped (stored before), 0 failed")
	wantOutput(t, "the second manifest", ingest("csv/second.csv"), "2 stored, 0 skipped (stored before), 0 failed")
	out := ingest("book2")
	wantOutput(t, "book two again", out, "0 stored, 1 skipped (stored before)")
	if !regexp.MustCompile(`skipped dir:\S+/book2#[0-9a-f]{32}: stored before as (\S+) \(` + regexp.QuoteMeta(srv.base) + `/works/(\S+)\)\n`).MatchString(out) {
		t.Errorf("book two again: no line naming the work and its page:\n%s", out)
	}
	wantOutput(t, "the second manifest again", ingest("csv/second.csv"), "0 stored, 2 skipped (stored before)", "(row 2): stored before as ")
	wantOutput(t, "book two anyway", ingest("book2", "--store-anyway"), "1 stored, 0 skipped")
	wantOutput(t, "book two anyway again", ingest("book2", "--store-anyway"), "0 stored, 1 skipped", "stored anyway before as ")
}
