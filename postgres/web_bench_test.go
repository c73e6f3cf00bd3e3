package postgres

import (
	"testing"

	"github.com/shelfmark/shelfmark/storagetest"
)

// BenchmarkWebBatch writes the web index as an ingest does, a batch of
// 1,000 pages and 13,000 links per transaction (storagetest.BenchWebBatch),
// and of 5,000 pages (run it for a fifth of the batches to reach the same
// index size):
//
//	SHELFMARK_TEST_DATABASE_URL=$(scripts/postgres.sh url) \
//	  go test -tags sqlite_fts5 -run '^$' -bench WebBatch -benchtime 20x ./postgres/
func BenchmarkWebBatch(b *testing.B) {
	for _, c := range []struct {
		name    string
		relaxed bool
		pages   int
	}{{"durable", false, 1000}, {"relaxed", true, 1000}, {"durable-5000", false, 5000}} {
		name, relaxed, pages := c.name, c.relaxed, c.pages
		b.Run(name, func(b *testing.B) {
			db, _ := openTest(b, Options{Relaxed: relaxed})
			storagetest.BenchWebBatch(b, db, pages)
		})
	}
}
