package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/internal/testkit"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
)

// TestExportPurge: `shelfmark export --bagit` writes a bag of an ingested
// book that `shelfmark ingest` reads back as a new work (and skips the
// second time); `shelfmark export --ocfl` writes a root of the preserved
// book. `shelfmark purge` without a reason does nothing; with one it
// removes the book from the database, its search document, the bytes no
// other work holds (a page shared with another book stays) and its object
// in the preservation copy, and is in the audit trail with its reason;
// the id is then not found. On SQLite and PostgreSQL.
func TestExportPurge(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			data := t.TempDir()
			store := []string{"--data", data}
			database := ""
			if backend == "postgres" {
				database = testkit.PostgresSchema(t)
				store = append(store, "--database", database)
			}
			cli := func(args ...string) string {
				t.Helper()
				out, err := runCLI(t, append(args, store...)...)
				if err != nil {
					t.Fatalf("%v: %v\n%s", args, err, out)
				}
				return out
			}
			in := t.TempDir()
			writeTree(t, in, map[string]string{
				"book/page_1.txt":  "a page both books hold",
				"book/page_2.txt":  "a page only the first book holds",
				"other/page_1.txt": "a page both books hold",
			})
			stored := regexp.MustCompile(`1 stored`)
			for _, b := range []string{"book", "other"} {
				if out := cli("ingest", filepath.Join(in, b), "--workers", "1"); !stored.MatchString(out) {
					t.Fatalf("ingest %s: %s", b, out)
				}
			}
			repo := openRepo(t, database, data)
			ctx := context.Background()
			var book, other shelfmark.ID
			page, err := repo.ListResources(ctx, shelfmark.KindWork, shelfmark.PageRequest{Limit: 10})
			if err != nil || len(page.Items) != 2 {
				t.Fatalf("works: %v %v", page, err)
			}
			for _, w := range page.Items {
				if w, err = repo.FindResource(ctx, w.ID); err != nil || len(w.Metadata) == 0 {
					t.Fatalf("work: %+v %v", w, err)
				}
				if w.Metadata[0].Object.Value == "book" {
					book = w.ID
				} else {
					other = w.ID
				}
			}
			if book == "" || other == "" {
				t.Fatalf("works: %+v", page.Items)
			}

			// the preservation copy, as serve keeps it in DATA/ocfl
			fsys, err := ocfl.NewDirFS(filepath.Join(data, "ocfl"))
			if err != nil {
				t.Fatal(err)
			}
			root, err := ocfl.InitRoot(ctx, fsys)
			if err != nil {
				t.Fatal(err)
			}
			blobs, err := blob.NewLocal(filepath.Join(data, "blobs"))
			if err != nil {
				t.Fatal(err)
			}
			defer blobs.Close()
			later := func() time.Time { return time.Now().Add(time.Hour) }
			if _, _, err := preserve.New(repo.Storage(), blobs, root, repo.IDs(), preserve.Options{Now: later}).CatchUp(ctx); err != nil {
				t.Fatal(err)
			}
			bookKey, _ := repo.IDs().Key(book)
			if err := repo.Storage().Update(ctx, func(tx shelfmark.WriteTx) error {
				return tx.PutSearchDocs(ctx, []shelfmark.SearchDoc{{Key: bookKey, Work: bookKey, Kind: shelfmark.KindWork, Title: "book", Body: "takedown"}})
			}); err != nil {
				t.Fatal(err)
			}

			// export, and ingest into another repository
			bags := filepath.Join(t.TempDir(), "bags")
			cli("export", string(book), "--bagit", bags, "--organization", "Test Library")
			elsewhere := []string{"--data", t.TempDir()}
			if backend == "postgres" {
				elsewhere = append(elsewhere, "--database", testkit.PostgresSchema(t))
			}
			for i, want := range []string{"1 stored, 0 skipped (stored before), 0 failed; 2 files", "0 stored, 1 skipped (stored before)"} {
				out, err := runCLI(t, append([]string{"ingest", filepath.Join(bags, string(book))}, elsewhere...)...)
				if err != nil {
					t.Fatalf("ingest the bag (%d): %v\n%s", i+1, err, out)
				}
				wantOutput(t, "ingest the bag", out, want)
			}
			wantOutput(t, "export ocfl", cli("export", string(book), string(other), "--ocfl", filepath.Join(t.TempDir(), "root")), "2 objects copied", "0 written")

			// purge
			if out, err := runCLI(t, append([]string{"purge", string(book)}, store...)...); err == nil {
				t.Fatalf("a purge without a reason: %s", out)
			}
			out := cli("purge", string(book), "--reason", "takedown notice 42")
			wantOutput(t, "purge", out, "purged "+string(book)+": 5 resources", "1 of 2 stored files' bytes removed", "1 objects removed from the preservation copy")
			if _, err := repo.FindResource(ctx, book); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
				t.Fatalf("the purged book: %v", err)
			}
			rs, err := repo.FindResource(ctx, other)
			if err != nil || rs == nil {
				t.Fatalf("the other book: %v", err)
			}
			if _, err := root.Open(ctx, preserve.ObjectID(book)); !errors.Is(err, ocfl.ErrNotFound) {
				t.Fatalf("the purged book's object: %v", err)
			}
			if _, err := root.Open(ctx, preserve.ObjectID(other)); err != nil {
				t.Fatalf("the other book's object: %v", err)
			}
			shared, only := sha256Of("a page both books hold"), sha256Of("a page only the first book holds")
			if rc, err := blobs.Open(ctx, shared); err != nil {
				t.Fatalf("the shared page's bytes: %v", err)
			} else {
				rc.Close()
			}
			if rc, err := blobs.Open(ctx, only); err == nil {
				rc.Close()
				t.Fatal("the purged book's own page's bytes are still stored")
			}
			if err := repo.Storage().View(ctx, func(tx shelfmark.ReadTx) error {
				d, err := tx.SearchDoc(ctx, bookKey)
				if err == nil && d != nil {
					return errors.New("the purged book's search document is left")
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			wantOutput(t, "audit", cli("audit", "--resource", string(book)), "purge", "takedown notice 42", "system:cli")

			// an object a preserver left behind is removed by a second purge
			if _, err := root.Commit(ctx, preserve.ObjectID(book), 0, ocfl.NewVersion{State: map[string]string{},
				Created: time.Now(), Message: "left behind", User: ocfl.User{Name: "test"}}); err != nil {
				t.Fatal(err)
			}
			if out, err := runCLI(t, append([]string{"purge", string(book), "--reason", "again"}, store...)...); err == nil ||
				!regexp.MustCompile(`purged before\?`).MatchString(err.Error()) {
				t.Fatalf("a second purge: %v\n%s", err, out)
			}
			if _, err := root.Open(ctx, preserve.ObjectID(book)); !errors.Is(err, ocfl.ErrNotFound) {
				t.Fatalf("the object left behind: %v", err)
			}
			if _, err := os.Stat(filepath.Join(bags, string(book), "bagit.txt")); err != nil {
				t.Fatal(err) // an export is the user's: a purge does not reach it
			}
		})
	}
}

// sha256Of is the hex SHA-256 of s.
func sha256Of(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
