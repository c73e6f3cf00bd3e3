package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/shelfmark/shelfmark/sqlite"
	"github.com/shelfmark/shelfmark/storagetest"
)

// BenchmarkWebBatch writes the web index as an ingest does, a batch of
// 1,000 pages and 13,000 links per transaction (storagetest.BenchWebBatch):
//
//	go test -tags sqlite_fts5 -run '^$' -bench WebBatch -benchtime 20x ./sqlite/
func BenchmarkWebBatch(b *testing.B) {
	for _, relaxed := range []bool{false, true} {
		name := "durable"
		if relaxed {
			name = "relaxed"
		}
		b.Run(name, func(b *testing.B) {
			db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "web.db"), sqlite.Options{Relaxed: relaxed})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			storagetest.BenchWebBatch(b, db)
		})
	}
}
