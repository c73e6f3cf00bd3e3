package backup_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/shelfmark/shelfmark/backup"
	"github.com/shelfmark/shelfmark/ocfl"
)

// benchSource is what a backup of r reads.
func benchSource(b *testing.B, r *testRepo) backup.Source {
	fsys, err := ocfl.NewDirFS(filepath.Join(r.dir, "ocfl"))
	if err != nil {
		b.Fatal(err)
	}
	return backup.Source{Backend: "sqlite", SQLite: filepath.Join(r.dir, "shelfmark.db"), Blobs: r.blobs, OCFL: fsys}
}

// BenchmarkBackupFull: a first backup of 300 works (300 blobs, about 2,400
// preservation files) into an empty directory.
func BenchmarkBackupFull(b *testing.B) {
	r := newTestRepo(b, b.TempDir(), "", 300)
	src := benchSource(b, r)
	var copied int64
	for b.Loop() {
		dst, err := ocfl.NewDirFS(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		_, m, err := backup.Run(context.Background(), src, dst, backup.Options{})
		if err != nil {
			b.Fatal(err)
		}
		copied = m.Copied.Blobs + m.Copied.OCFLFiles
	}
	b.ReportMetric(float64(copied), "files-copied/op")
}

// BenchmarkBackupIncremental: a backup of 300 works after one more work,
// into a destination that holds the backup before it.
func BenchmarkBackupIncremental(b *testing.B) {
	r := newTestRepo(b, b.TempDir(), "", 300)
	src := benchSource(b, r)
	dst, err := ocfl.NewDirFS(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := backup.Run(context.Background(), src, dst, backup.Options{}); err != nil {
		b.Fatal(err)
	}
	var copied int64
	for b.Loop() {
		b.StopTimer()
		r.addWorks(1)
		b.StartTimer()
		_, m, err := backup.Run(context.Background(), src, dst, backup.Options{})
		if err != nil {
			b.Fatal(err)
		}
		copied = m.Copied.Blobs + m.Copied.OCFLFiles
	}
	b.ReportMetric(float64(copied), "files-copied/op")
}
