package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/sqlite"
)

// TestWALStaysBounded (rule R7): under a continuous stream of commits the
// write-ahead log is checkpointed and rewound, so it stays near SQLite's
// 1,000-page checkpoint threshold instead of growing with the data (a
// growing WAL would also make every fsync journal a new file size).
func TestWALStaysBounded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "w.db"), sqlite.Options{Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	defer repo.Close()
	meta := benchMetadata(54)
	var largest int64
	for batch := 0; batch < 60; batch++ { // ~6,000 works, ~25 MB of pages written
		nrs := make([]*shelfmark.NewResource, 100)
		for i := range nrs {
			nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: append(meta[:53:53],
				shelfmark.Statement{Predicate: shelfmark.NSDC + "identifier", Object: shelfmark.NewLiteral(fmt.Sprint(batch, "/", i))})}
		}
		if _, errs := repo.CreateResources(ctx, nrs); errs[0] != nil {
			t.Fatal(errs[0])
		}
		if fi, err := os.Stat(filepath.Join(dir, "w.db-wal")); err == nil {
			largest = max(largest, fi.Size())
		}
	}
	fi, err := os.Stat(filepath.Join(dir, "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	const bound = 8 << 20 // 2× the 1,000-page threshold at 4 KiB pages
	if largest > bound {
		t.Fatalf("WAL grew to %d bytes (database %d bytes), bound %d", largest, fi.Size(), bound)
	}
	t.Logf("database %d bytes, largest WAL %d bytes", fi.Size(), largest)
}
