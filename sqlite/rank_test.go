package sqlite

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// rankRef is shelfmark_rank computed here from the texts: bm25 with
// every IDF 1, the title's occurrences weighing wTitle, the body's 1; 0
// where a term is missing (the row does not match).
func rankRef(docs []shelfmark.SearchDoc, doc shelfmark.SearchDoc, terms []string, wTitle float64) float64 {
	total := 0
	for _, d := range docs {
		total += len(shelfmark.SearchTokens(d.Title)) + len(shelfmark.SearchTokens(d.Body))
	}
	avgdl := float64(total) / float64(len(docs))
	title, body := shelfmark.SearchTokens(strings.ToLower(doc.Title)), shelfmark.SearchTokens(strings.ToLower(doc.Body))
	norm := 1.2 * (1 - 0.75 + 0.75*float64(len(title)+len(body))/avgdl)
	score := 0.0
	for _, term := range terms {
		f := 0.0
		for _, tok := range title {
			if tok == term {
				f += wTitle
			}
		}
		for _, tok := range body {
			if tok == term {
				f++
			}
		}
		if f == 0 { // every term must match
			return 0
		}
		score += f * 2.2 / (f + norm)
	}
	return score
}

// TestRank: shelfmark_rank scores each row exactly as bm25 with every
// IDF 1 (title ten times the body, more occurrences and shorter rows
// higher), so a row's score does not change when other rows that match
// arrive, as bm25()'s does (its IDF counts them, in a pass over all of
// them each statement).
func TestRank(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "shelfmark.db"), Options{Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	docs := []shelfmark.SearchDoc{
		{Key: 1, Title: "kelp forest", Body: "notes on the shore"},
		{Key: 2, Title: "a forest", Body: "notes on kelp shore"},
		{Key: 3, Title: "a forest", Body: "kelp on kelp shore"},
		{Key: 4, Title: "a forest", Body: "notes on kelp shore with many more words in a longer body"},
		{Key: 5, Title: "Kelp and whales", Body: "whales eat near kelp"},
		{Key: 6, Title: "whales", Body: "no match here at all now today plus"},
	}
	put := func(docs []shelfmark.SearchDoc) {
		t.Helper()
		for i := range docs {
			docs[i].Work, docs[i].Kind = docs[i].Key, shelfmark.KindWork
		}
		if err := db.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) }); err != nil {
			t.Fatal(err)
		}
	}
	scores := func(fn, match string) map[int64]float64 {
		t.Helper()
		rows, err := db.read.QueryContext(ctx, `SELECT rowid, `+fn+` FROM search_fts WHERE search_fts MATCH ?`, match)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[int64]float64{}
		for rows.Next() {
			var k int64
			var s float64
			if err := rows.Scan(&k, &s); err != nil {
				t.Fatal(err)
			}
			out[k] = s
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	// rows that do not match, of the mean length (8 tokens), so that
	// kelp is in few rows and bm25()'s IDF of it is not its floor
	for k := int64(10); k < 40; k++ {
		docs = append(docs, shelfmark.SearchDoc{Key: k, Title: "whales", Body: "one two three four five six seven"})
	}
	put(docs)
	const rank = `shelfmark_rank(search_fts, 10.0, 1.0)`
	for _, q := range [][]string{{"kelp"}, {"kelp", "whales"}, {"forest", "notes"}} {
		got := scores(rank, `"`+strings.Join(q, `" "`)+`"`)
		n := 0
		for _, d := range docs {
			want := rankRef(docs, d, q, 10)
			if want == 0 {
				if _, ok := got[d.Key]; ok {
					t.Errorf("%q: %d does not match, and is scored", q, d.Key)
				}
				continue
			}
			n++
			if math.Abs(got[d.Key]-want) > 1e-9 {
				t.Errorf("%q: %d scores %v, want %v", q, d.Key, got[d.Key], want)
			}
		}
		if len(got) != n {
			t.Errorf("%q: %d rows scored, %d match", q, len(got), n)
		}
	}
	s := scores(rank, `"kelp"`)
	if !(s[1] > s[2] && s[3] > s[2] && s[2] > s[4]) {
		t.Errorf("kelp: a title's match, two matches and a shorter row do not come first: %v", s)
	}
	// a weight left out is 1
	if a, b := scores(`shelfmark_rank(search_fts)`, `"kelp"`), scores(`shelfmark_rank(search_fts, 1.0, 1.0)`, `"kelp"`); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("no weights %v, weights 1 %v", a, b)
	}

	// rows of the mean length that match leave a row's score as it was
	// (the mean stays), where bm25() moves with their number
	before, bm25Before := scores(rank, `"kelp"`), scores(`bm25(search_fts, 10.0, 1.0)`, `"kelp"`)
	total := 0
	for _, d := range docs {
		total += len(shelfmark.SearchTokens(d.Title)) + len(shelfmark.SearchTokens(d.Body))
	}
	if total%len(docs) != 0 {
		t.Fatalf("the rows' mean length %d/%d is not whole", total, len(docs))
	}
	mean := total / len(docs)
	var more []shelfmark.SearchDoc
	for k := int64(100); k < 150; k++ {
		more = append(more, shelfmark.SearchDoc{Key: k, Title: "kelp", Body: strings.Repeat("x ", mean-1)})
	}
	put(more)
	after, bm25After := scores(rank, `"kelp"`), scores(`bm25(search_fts, 10.0, 1.0)`, `"kelp"`)
	for _, k := range []int64{1, 2, 3, 4, 5} {
		if after[k] != before[k] {
			t.Errorf("%d: %v before 50 more matches, %v after", k, before[k], after[k])
		}
		if bm25After[k] == bm25Before[k] {
			t.Errorf("%d: bm25() did not move (%v): the check above proves nothing", k, bm25After[k])
		}
	}
}

// BenchmarkRank scores a window of the newest 1,001 matches of a word
// that every document holds, with FTS5's bm25() and with shelfmark_rank,
// at 10,000 and 100,000 documents: bm25()'s cost grows with the
// documents (its IDF counts every match), shelfmark_rank's stays that of
// the window.
//
//	go test -tags sqlite_fts5 -run '^$' -bench Rank ./sqlite/
func BenchmarkRank(b *testing.B) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "shelfmark.db"), Options{Relaxed: true})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	have := 0
	for _, n := range []int{10_000, 100_000} {
		for have < n {
			docs := make([]shelfmark.SearchDoc, 0, 1000)
			for ; have < n && len(docs) < cap(docs); have++ {
				k := int64(have + 1)
				docs = append(docs, shelfmark.SearchDoc{Key: k, Work: k, Kind: shelfmark.KindWork,
					Title: fmt.Sprintf("common word, work %d", k), Body: fmt.Sprintf("a body of some words about item %d and its %d pages", k, k%300)})
			}
			if err := db.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) }); err != nil {
				b.Fatal(err)
			}
		}
		for _, fn := range []string{"bm25(search_fts, 10.0, 1.0)", "shelfmark_rank(search_fts, 10.0, 1.0)"} {
			name := strings.SplitN(fn, "(", 2)[0]
			b.Run(fmt.Sprintf("docs=%d/%s", n, name), func(b *testing.B) {
				q := `SELECT count(*), sum(s) FROM (SELECT rowid, ` + fn + ` AS s FROM search_fts WHERE search_fts MATCH '"common"' ORDER BY rowid DESC LIMIT 1001)`
				for b.Loop() {
					var c int
					var s float64
					if err := db.read.QueryRowContext(ctx, q).Scan(&c, &s); err != nil || c != 1001 {
						b.Fatalf("%d rows: %v", c, err)
					}
				}
			})
		}
	}
}
