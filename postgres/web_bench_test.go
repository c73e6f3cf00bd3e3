package postgres

import (
	"testing"

	"github.com/shelfmark/shelfmark/storagetest"
)

// BenchmarkWebBatch writes the web index as an ingest does, a batch of
// 1,000 pages and 13,000 links per transaction (storagetest.BenchWebBatch):
//
//	SHELFMARK_TEST_DATABASE_URL=$(scripts/postgres.sh url) \
//	  go test -tags sqlite_fts5 -run '^$' -bench WebBatch -benchtime 20x ./postgres/
func BenchmarkWebBatch(b *testing.B) {
	for _, relaxed := range []bool{false, true} {
		name := "durable"
		if relaxed {
			name = "relaxed"
		}
		b.Run(name, func(b *testing.B) {
			db, _ := openTest(b, Options{Relaxed: relaxed})
			storagetest.BenchWebBatch(b, db)
		})
	}
}
