package backup_test

import (
	"context"
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark/backup"
	"github.com/shelfmark/shelfmark/internal/testkit"
	"github.com/shelfmark/shelfmark/internal/testkit/datadump"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/storagetest"
)

// source is what a backup of r reads, as shelfmark backup opens it.
func source(t *testing.T, r *testRepo, backend string) backup.Source {
	t.Helper()
	fsys, err := ocfl.NewDirFS(filepath.Join(r.dir, "ocfl"))
	if err != nil {
		t.Fatal(err)
	}
	src := backup.Source{Backend: backend, Blobs: r.blobs, OCFL: fsys}
	if backend == "sqlite" {
		src.SQLite = filepath.Join(r.dir, "shelfmark.db")
	}
	return src
}

func destination(t *testing.T, dir string) ocfl.FS {
	t.Helper()
	fsys, err := ocfl.NewDirFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	return fsys
}

func run(t *testing.T, src backup.Source, dst ocfl.FS) (string, *backup.Manifest) {
	t.Helper()
	dir, m, err := backup.Run(context.Background(), src, dst, backup.Options{Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return dir, m
}

// restoreInto restores the newest whole backup of dst into a new
// directory and returns it.
func restoreInto(t *testing.T, dst ocfl.FS) (string, *backup.Manifest) {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	_, m, err := backup.Restore(context.Background(), dst, data, backup.RestoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return data, m
}

// checkRestored compares the restored data directory with the original:
// the content store's blobs and the preservation copy's files byte for
// byte.
func checkRestored(t *testing.T, r *testRepo, data string) {
	t.Helper()
	sameFiles(t, "content store", blobBytes(t, filepath.Join(r.dir, "blobs")), blobBytes(t, filepath.Join(data, "blobs")))
	sameFiles(t, "preservation copy", treeFiles(t, filepath.Join(r.dir, "ocfl")), treeFiles(t, filepath.Join(data, "ocfl")))
	if rep := ocfl.ValidateRoot(context.Background(), destination(t, filepath.Join(data, "ocfl"))); rep.Err() != nil {
		t.Errorf("the restored preservation copy is not valid OCFL: %v", rep.Err())
	}
}

// TestBackupRestoreSQLite: a backup of a populated embedded repository,
// restored into a fresh directory, holds the same resources (canonical
// dump), the same rows in every table (accounts, tokens, the audit log,
// the change log), and the same blobs and preservation files, byte for
// byte. A second backup after more writes copies exactly the new blobs,
// and a third with no writes copies nothing.
func TestBackupRestoreSQLite(t *testing.T) {
	r := newTestRepo(t, t.TempDir(), "", 30)
	want := r.dump()
	dst := destination(t, t.TempDir())
	src := source(t, r, "sqlite")

	_, m1 := run(t, src, dst)
	if m1.Blobs.Files != 30 || m1.Copied.Blobs != 30 || m1.Database.Size == 0 || m1.OCFL.Files == 0 || m1.Copied.OCFLFiles == 0 {
		t.Fatalf("first backup: %+v", m1)
	}
	data, _ := restoreInto(t, dst)
	if d := storagetest.DiffLines(want, datadump.SQLite(t, data)); d != "" {
		t.Fatalf("the restored repository differs (- original, + restored):\n%s", d)
	}
	if a, b := tableDump(t, filepath.Join(r.dir, "shelfmark.db")), tableDump(t, filepath.Join(data, "shelfmark.db")); a != b {
		t.Fatalf("the restored tables differ (- original, + restored):\n%s", storagetest.DiffLines(a, b))
	} else if !strings.Contains(a, "audit") || !strings.Contains(a, "tokens") {
		t.Fatalf("the table dump has no audit log or tokens:\n%.2000s", a)
	}
	checkRestored(t, r, data)

	added := r.addWorks(4)
	want = r.dump()
	_, m2 := run(t, src, dst)
	if m2.Copied.Blobs != int64(added) || m2.Blobs.Files != 34 {
		t.Fatalf("second backup copied %d blobs of %d, want the %d new ones of 34", m2.Copied.Blobs, m2.Blobs.Files, added)
	}
	if m2.Copied.OCFLFiles == 0 || m2.Copied.OCFLFiles >= m2.OCFL.Files/2 {
		t.Fatalf("second backup copied %d preservation files of %d: want the new ones only", m2.Copied.OCFLFiles, m2.OCFL.Files)
	}
	data, _ = restoreInto(t, dst)
	if d := storagetest.DiffLines(want, datadump.SQLite(t, data)); d != "" {
		t.Fatalf("the second restore differs (- original, + restored):\n%s", d)
	}
	checkRestored(t, r, data)

	_, m3 := run(t, src, dst)
	if m3.Copied.Blobs != 0 || m3.Copied.OCFLFiles != 0 || m3.Blobs.Files != 34 || m3.OCFL.Files != m2.OCFL.Files {
		t.Fatalf("a backup after no writes copied %d blobs and %d preservation files (listing %d, %d)", m3.Copied.Blobs, m3.Copied.OCFLFiles, m3.Blobs.Files, m3.OCFL.Files)
	}
}

// TestRestoreRefuses: restore refuses a backup without a manifest (an
// interrupted run), a data directory that is not empty, and a pool file
// whose bytes do not match their digest.
func TestRestoreRefuses(t *testing.T) {
	ctx := context.Background()
	r := newTestRepo(t, t.TempDir(), "", 6)
	root := t.TempDir()
	dst := destination(t, root)
	if _, _, err := backup.Restore(ctx, dst, t.TempDir(), backup.RestoreOptions{}); !errors.Is(err, backup.ErrNotWhole) {
		t.Fatalf("restore of an empty destination: %v, want ErrNotWhole", err)
	}
	dir, _ := run(t, restoreSource(t, r), dst)

	// an interrupted run: its directory has everything but the manifest
	partial := path.Join("backups", "29991231T235959Z")
	if err := os.MkdirAll(filepath.Join(root, partial), 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, dir, "shelfmark.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, partial, "shelfmark.db"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = backup.Restore(ctx, dst, filepath.Join(t.TempDir(), "d"), backup.RestoreOptions{Dir: partial})
	if !errors.Is(err, backup.ErrNotWhole) || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("restore of a backup without a manifest: %v", err)
	}
	// the newest whole one is taken by default, passing over it
	got, _, err := backup.Restore(ctx, dst, filepath.Join(t.TempDir(), "d"), backup.RestoreOptions{})
	if err != nil || got != dir {
		t.Fatalf("restore: %s, %v; want %s", got, err, dir)
	}
	// a torn manifest is not whole either
	if err := os.WriteFile(filepath.Join(root, partial, backup.ManifestName), []byte(`{"format":"shelfmark-backup/1","sta`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := backup.Restore(ctx, dst, filepath.Join(t.TempDir(), "d"), backup.RestoreOptions{Dir: partial}); !errors.Is(err, backup.ErrNotWhole) {
		t.Fatalf("restore of a torn manifest: %v", err)
	}

	// not into a directory that holds something
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := backup.Restore(ctx, dst, full, backup.RestoreOptions{}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("restore into a directory that is not empty: %v", err)
	}

	// a damaged pool file
	var victim string
	_ = filepath.WalkDir(filepath.Join(root, "pool", "sha256"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && victim == "" {
			victim = p
		}
		return err
	})
	if victim == "" {
		t.Fatal("no blob in the pool")
	}
	if err := os.Chmod(victim, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(victim, []byte("damaged"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := backup.Restore(ctx, dst, filepath.Join(t.TempDir(), "d"), backup.RestoreOptions{}); err == nil || !strings.Contains(err.Error(), filepath.Base(victim)) {
		t.Fatalf("restore with a damaged blob: %v", err)
	}
}

func restoreSource(t *testing.T, r *testRepo) backup.Source { return source(t, r, "sqlite") }

// TestBackupMissingBlob: a blob the database refers to that is not in the
// content store fails the backup with a clear error, and leaves no
// manifest: restore refuses it.
func TestBackupMissingBlob(t *testing.T) {
	r := newTestRepo(t, t.TempDir(), "", 6) // work 0's original is a file of its own
	var victim string
	_ = filepath.WalkDir(filepath.Join(r.dir, "blobs"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && len(d.Name()) == 64 && victim == "" {
			victim = p
		}
		return err
	})
	if victim == "" {
		t.Fatal("no blob file")
	}
	if err := os.Remove(victim); err != nil {
		t.Fatal(err)
	}
	dst := destination(t, t.TempDir())
	_, _, err := backup.Run(context.Background(), source(t, r, "sqlite"), dst, backup.Options{})
	if err == nil || !strings.Contains(err.Error(), filepath.Base(victim)) || !strings.Contains(err.Error(), "missing from the content store") {
		t.Fatalf("backup without a blob: %v", err)
	}
	if _, _, err := backup.Restore(context.Background(), dst, t.TempDir(), backup.RestoreOptions{}); !errors.Is(err, backup.ErrNotWhole) {
		t.Fatalf("restore of the failed backup: %v, want ErrNotWhole", err)
	}
}

// TestBackupPostgres: on PostgreSQL the backup copies the content store
// (every blob stored) and the preservation copy, incrementally, and
// restore brings them back byte for byte; the database is left to the
// base backup and WAL archive (e2e/backup_pg_test.go runs that).
func TestBackupPostgres(t *testing.T) {
	r := newTestRepo(t, t.TempDir(), testkit.PostgresSchema(t), 12)
	dst := destination(t, t.TempDir())
	src := source(t, r, "postgresql")
	_, m1 := run(t, src, dst)
	if m1.Database.Backend != "postgresql" || m1.Database.File != "" || m1.Copied.Blobs != 12 || m1.Blobs.Files != 12 {
		t.Fatalf("first backup: %+v", m1)
	}
	data, _ := restoreInto(t, dst)
	if _, err := os.Stat(filepath.Join(data, "shelfmark.db")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a PostgreSQL backup restored a SQLite database: %v", err)
	}
	checkRestored(t, r, data)
	added := r.addWorks(3)
	_, m2 := run(t, src, dst)
	if m2.Copied.Blobs != int64(added) || m2.Blobs.Files != 15 {
		t.Fatalf("second backup copied %d blobs of %d, want the %d new ones of 15", m2.Copied.Blobs, m2.Blobs.Files, added)
	}
	data, _ = restoreInto(t, dst)
	checkRestored(t, r, data)
}

// TestBackupConcurrent: two backups started in the same second into one
// destination each claim their own directory, and both restore.
func TestBackupConcurrent(t *testing.T) {
	r := newTestRepo(t, t.TempDir(), "", 8)
	want := r.dump()
	dst := destination(t, t.TempDir())
	src := source(t, r, "sqlite")
	at := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	dirs := make([]string, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dirs[i], _, errs[i] = backup.Run(context.Background(), src, dst, backup.Options{Now: func() time.Time { return at }})
		}()
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil || dirs[0] == dirs[1] {
		t.Fatalf("two backups at once: %q %v, %q %v", dirs[0], errs[0], dirs[1], errs[1])
	}
	for _, dir := range dirs {
		data := filepath.Join(t.TempDir(), "data")
		if _, _, err := backup.Restore(context.Background(), dst, data, backup.RestoreOptions{Dir: dir}); err != nil {
			t.Fatalf("restore %s: %v", dir, err)
		}
		if d := storagetest.DiffLines(want, datadump.SQLite(t, data)); d != "" {
			t.Fatalf("restore of %s differs:\n%s", dir, d)
		}
	}
}
