package main

import (
	"bytes"
	"context"
	"database/sql"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/sqlite"
)

// TestBlobsGC runs shelfmark blobs gc on a real repository: the bytes of a
// committed file are never removed however old, bytes stored within the
// grace period are kept, and old bytes no file refers to are removed;
// an upload record within the grace period keeps its bytes, and one past
// it is forgotten first (not in a dry run), its bytes then removed.
func TestBlobsGC(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(data, "shelfmark.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := blob.NewLocal(filepath.Join(data, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	put := func(n int, seed uint64) string {
		b := make([]byte, n)
		r := rand.New(rand.NewPCG(seed, seed))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		bl, err := blobs.Put(ctx, bytes.NewReader(b), shelfmark.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return bl.Digests[shelfmark.SHA256]
	}
	used, usedSmall := put(300<<10, 1), put(500, 2)
	orphan, orphanSmall, recent := put(300<<10, 3), put(500, 4), put(300<<10, 5)
	// bytes a user sent to /api/v1/blobs, recorded lately and long ago
	uploaded, forgotten := put(300<<10, 6), put(300<<10, 7)
	for _, u := range []shelfmark.Upload{{User: 7, SHA256: uploaded, Size: 300 << 10, Stored: time.Now()},
		{User: 7, SHA256: forgotten, Size: 300 << 10, Stored: time.Now().Add(-48 * time.Hour)}} {
		if err := db.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.PutUpload(ctx, u) }); err != nil {
			t.Fatal(err)
		}
	}
	w, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID})
	if err != nil {
		t.Fatal(err)
	}
	for _, sha := range []string{used, usedSmall} {
		if _, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
			File: &shelfmark.File{Name: "page.tif", MediaType: "image/tiff", Size: 1, SHA256: sha, Use: "original"}}); err != nil {
			t.Fatal(err)
		}
	}
	repo.Close()
	db.Close()
	blobs.Close()
	// Two days pass for all but the recent upload.
	old := time.Now().Add(-48 * time.Hour)
	for _, sha := range []string{used, orphan, uploaded, forgotten} {
		if err := os.Chtimes(filepath.Join(data, "blobs", sha[0:2], sha[2:4], sha), old, old); err != nil {
			t.Fatal(err)
		}
	}
	pack, err := sql.Open("sqlite3", "file:"+filepath.Join(data, "blobs", "small.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pack.Exec(`UPDATE blobs SET stored = ?`, old.UnixMicro()); err != nil {
		t.Fatal(err)
	}
	pack.Close()

	run := func(args ...string) string {
		t.Helper()
		root := newRootCommand()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(append([]string{"blobs", "gc", "--data", data}, args...))
		if err := root.ExecuteContext(ctx); err != nil {
			t.Fatalf("blobs gc %v: %v", args, err)
		}
		return out.String()
	}
	if out := run("--dry-run"); !strings.Contains(out, "6 blobs stored before the grace period, 2 referenced by no file") || !strings.Contains(out, "would remove 2") {
		t.Errorf("dry run: %q", out)
	}
	if out := run(); !strings.Contains(out, "removed 3") {
		t.Errorf("gc: %q", out)
	}
	blobs, err = blob.NewLocal(filepath.Join(data, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	defer blobs.Close()
	for _, sha := range []string{used, usedSmall, recent, uploaded} {
		if _, err := blobs.Open(ctx, sha); err != nil {
			t.Errorf("kept bytes are gone: %v", err)
		}
	}
	for _, sha := range []string{orphan, orphanSmall, forgotten} {
		if _, err := blobs.Open(ctx, sha); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
			t.Errorf("old unreferenced bytes kept: %v", err)
		}
	}
	if out := run(); !strings.Contains(out, "removed 0") {
		t.Errorf("a second gc: %q", out)
	}
}
