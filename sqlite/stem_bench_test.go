package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkStemIndex: what stemming costs when text is indexed: pages of
// 300 words (English words and their inflections) into an FTS5 table with the index's
// tokenizer (shelfmark: porter over unicode61 for a document without a
// language, Snowball's French stemmer over unicode61 for one in French)
// and with unicode61 alone, as before stemming. Reports the time per page and the index's bytes
// per page.
//
//	go test -tags sqlite_fts5 -run '^$' -bench StemIndex ./sqlite/
func BenchmarkStemIndex(b *testing.B) {
	words := strings.Fields(`the harbour ships whales were sailing along northern coasts during winter months
	while fishermen recorded weather observations logbooks describing voyages storms cargo prices merchants
	harbours lighthouses keepers reported dangerous currents rocks sailors landed provisions repairing rigging`)
	rng := rand.New(rand.NewPCG(1, 2))
	// a vocabulary of 10,000 stems with their inflections, so that the
	// index holds many distinct words, as OCR does
	suffixes := []string{"", "s", "ing", "ed", "er", "ly"}
	page := func() string {
		var sb strings.Builder
		for i := range 300 {
			if i > 0 {
				sb.WriteByte(' ')
			}
			fmt.Fprintf(&sb, "%s%d%s", words[rng.IntN(len(words))], rng.IntN(300), suffixes[rng.IntN(len(suffixes))])
		}
		return sb.String()
	}
	pages := make([]string, 200)
	for i := range pages {
		pages[i] = page()
	}
	// shelfmark without a locale stems in English (porter); with the
	// locale french, with Snowball's French stemmer
	for _, c := range []struct{ name, tok, locale string }{
		{"unicode61", "unicode61 remove_diacritics 2", ""},
		{"shelfmark", "shelfmark", ""},
		{"shelfmark-french", "shelfmark", "french"},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			db, err := Open(ctx, filepath.Join(b.TempDir(), "x.db"), Options{Relaxed: true})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			if _, err := db.write.ExecContext(ctx, `CREATE VIRTUAL TABLE t USING fts5(body, tokenize='`+c.tok+`', locale=1)`); err != nil {
				b.Fatal(err)
			}
			n := 0
			for b.Loop() {
				if _, err := db.write.ExecContext(ctx, `INSERT INTO t (body) VALUES (fts5_locale(?, ?))`, c.locale, pages[n%len(pages)]); err != nil {
					b.Fatal(err)
				}
				n++
			}
			var size int64
			if err := db.write.QueryRowContext(ctx, `SELECT sum(length(block)) FROM t_data`).Scan(&size); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(size)/float64(n), "index-bytes/page")
		})
	}
}
