package sqlite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// BenchmarkStemIndex: what stemming costs when text is indexed: pages of
// 300 words (English words and their inflections; French ones for a
// French document) into an FTS5 table with the index's tokenizer
// (shelfmark: porter over unicode61 for a document without a language,
// Snowball's French stemmer over unicode61 for one in French, the
// language given as its FTS5 locale) and with unicode61 alone, as
// before stemming. Reports the time per page (wall, and the process's
// CPU time, which other processes on a loaded machine do not inflate)
// and the index's bytes per page.
//
//	go test -tags sqlite_fts5 -run '^$' -bench StemIndex ./sqlite/
func BenchmarkStemIndex(b *testing.B) {
	english := strings.Fields(`the harbour ships whales were sailing along northern coasts during winter months
	while fishermen recorded weather observations logbooks describing voyages storms cargo prices merchants
	harbours lighthouses keepers reported dangerous currents rocks sailors landed provisions repairing rigging`)
	french := strings.Fields(`le port navire baleine naviguait long côte nord pendant hiver mois pêcheur notait
	temps observation journal décrivant voyage tempête cargaison prix marchand phare gardien signalait courant
	dangereux rocher matelot débarquait provision réparant gréement`)
	rng := rand.New(rand.NewPCG(1, 2))
	// a vocabulary of 10,000 stems with their inflections, so that the
	// index holds many distinct words, as OCR does
	pagesOf := func(words, suffixes []string) []string {
		pages := make([]string, 200)
		for p := range pages {
			var sb strings.Builder
			for i := range 300 {
				if i > 0 {
					sb.WriteByte(' ')
				}
				fmt.Fprintf(&sb, "%s%d%s", words[rng.IntN(len(words))], rng.IntN(300), suffixes[rng.IntN(len(suffixes))])
			}
			pages[p] = sb.String()
		}
		return pages
	}
	en := pagesOf(english, []string{"", "s", "ing", "ed", "er", "ly"})
	fr := pagesOf(french, []string{"", "s", "e", "es", "ement", "aient"})
	// shelfmark without a locale stems in English (porter); with the
	// locale french, with Snowball's French stemmer
	for _, c := range []struct {
		name, tok, locale string
		pages             []string
	}{
		{"unicode61", "unicode61 remove_diacritics 2", "", en},
		{"shelfmark", "shelfmark", "", en},
		{"unicode61-frenchtext", "unicode61 remove_diacritics 2", "", fr},
		{"shelfmark-frenchtext", "shelfmark", "", fr},
		{"shelfmark-french", "shelfmark", "french", fr},
	} {
		pages := c.pages
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
			cpu0 := cpuTime()
			for b.Loop() {
				if _, err := db.write.ExecContext(ctx, `INSERT INTO t (body) VALUES (fts5_locale(?, ?))`, c.locale, pages[n%len(pages)]); err != nil {
					b.Fatal(err)
				}
				n++
			}
			// the process's CPU time, which other processes on a loaded
			// machine do not inflate as they do the wall time
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(n), "cpu-ns/page")
			var size int64
			if err := db.write.QueryRowContext(ctx, `SELECT sum(length(block)) FROM t_data`).Scan(&size); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(size)/float64(n), "index-bytes/page")
		})
	}
}

// cpuTime is the CPU time the process has used (user and system), in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
