package main

import (
	"context"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/internal/testkit"
)

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
				database = testkit.PostgresSchema(t)
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
