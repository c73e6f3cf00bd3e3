package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ingest"
	"github.com/shelfmark/shelfmark/internal/setup"
)

// writeTree writes files (slash path -> content) below root.
func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// dirKeys reads the directory tree at root and returns the source key of
// each of its works by the key an earlier version gave it ("dir:book001").
func dirKeys(t *testing.T, root string) map[string]string {
	t.Helper()
	src, err := ingest.OpenDir(root)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	out := map[string]string{}
	for {
		it, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[it.FormerKey] = it.Key
	}
}

// wantOutput fails unless out holds every one of subs.
func wantOutput(t *testing.T, what, out string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(out, s) {
			t.Errorf("%s: the output lacks %q:\n%s", what, s, out)
		}
	}
}

// TestIngestDistinctInputs: `shelfmark ingest` of a second folder given as
// the root stores it (both were keyed "dir:." once, and the second was
// skipped as stored before), and so does a second CSV manifest without a
// source_identifier column (both were "csv:row-N"); a re-run of the same
// input still skips it, naming the work it was stored as; --store-anyway
// stores it as a new work, and a re-run with it does not store it twice;
// the key keeps naming the work stored first. On SQLite and PostgreSQL.
func TestIngestDistinctInputs(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			data := t.TempDir()
			store := []string{"--data", data}
			database := ""
			if backend == "postgres" {
				dsn := os.Getenv("SHELFMARK_TEST_DATABASE_URL")
				if dsn == "" {
					if os.Getenv("CI") != "" {
						t.Fatal("SHELFMARK_TEST_DATABASE_URL is not set")
					}
					t.Skip("SHELFMARK_TEST_DATABASE_URL is not set")
				}
				database = workerSchema(t, dsn)
				store = append(store, "--database", database)
			}
			in := t.TempDir()
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
				out, err := runCLI(t, append(append([]string{"ingest", filepath.Join(in, path), "--workers", "2"}, store...), extra...)...)
				if err != nil {
					t.Fatalf("ingest %s %v: %v\n%s", path, extra, err, out)
				}
				return out
			}
			wantOutput(t, "book one", ingest("book1"), "1 stored, 0 skipped (stored before), 0 failed")
			wantOutput(t, "book two", ingest("book2"), "1 stored, 0 skipped (stored before), 0 failed")
			wantOutput(t, "the first manifest", ingest("csv/first.csv"), "2 stored, 0 skipped (stored before), 0 failed")
			wantOutput(t, "the second manifest", ingest("csv/second.csv"), "2 stored, 0 skipped (stored before), 0 failed")

			// re-runs of the same input skip it, naming the work
			out := ingest("book2")
			wantOutput(t, "book two again", out, "0 stored, 1 skipped (stored before)", "--store-anyway")
			m := regexp.MustCompile(`skipped dir:(/\S+/book2)#[0-9a-f]{32}: stored before as (\S+)\n`).FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("book two again: no skipped line naming the work:\n%s", out)
			}
			book2 := shelfmark.ID(m[2])
			out = ingest("csv/second.csv")
			wantOutput(t, "the second manifest again", out, "0 stored, 2 skipped (stored before)", " (row 2): stored before as ", " (row 3): stored before as ")

			// stored anyway: a new work; once only
			wantOutput(t, "book two anyway", ingest("book2", "--store-anyway"), "1 stored, 0 skipped", "1 of the items stored had been stored before: stored anyway")
			out = ingest("book2", "--store-anyway")
			wantOutput(t, "book two anyway again", out, "0 stored, 1 skipped", ": stored anyway before as ")
			anyway := regexp.MustCompile(`stored anyway before as (\S+)\n`).FindStringSubmatch(out)
			if anyway == nil || shelfmark.ID(anyway[1]) == book2 {
				t.Fatalf("book two anyway again: %q\n%s", anyway, out)
			}
			// the key still names the work stored first
			wantOutput(t, "book two a fourth time", ingest("book2"), "stored before as "+string(book2)+"\n")

			// what the store holds: seven works, book two twice, by title
			ctx := context.Background()
			st, err := setup.OpenStorage(ctx, database, data, "safe", 2)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			ids, err := shelfmark.LoadIDCodec(ctx, st)
			if err != nil {
				t.Fatal(err)
			}
			repo := shelfmark.NewRepository(st, shelfmark.RepositoryOptions{IDs: ids})
			defer repo.Close()
			for _, id := range []shelfmark.ID{book2, shelfmark.ID(anyway[1])} {
				w, err := repo.FindResource(ctx, id)
				if err != nil || len(w.Metadata) != 1 || w.Metadata[0].Object.Value != "book2" {
					t.Errorf("work %s: %+v, %v", id, w, err)
				}
			}
			page, err := repo.ListResources(ctx, shelfmark.KindWork, shelfmark.PageRequest{Limit: 100})
			if err != nil || len(page.Items) != 7 {
				t.Errorf("%d works, want 7 (%v)", len(page.Items), err)
			}
		})
	}
}

// TestIngestServerDistinctInputs: `shelfmark ingest --server` stores a
// second folder given as the root and a second CSV manifest without
// source identifiers on a served repository; a re-run skips them, naming
// each work with its page on the server; --store-anyway stores one again,
// once.
func TestIngestServerDistinctInputs(t *testing.T) {
	if os.Getenv(crashChildEnv) == "1" || os.Getenv(ingestChildEnv) != "" {
		t.Skip("running as a child process")
	}
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
