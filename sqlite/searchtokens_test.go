package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// tokenCases are texts of many shapes: words, punctuation, numbers,
// addresses, accents (composed and combining), scripts without spaces.
var tokenCases = []string{
	"whales", "Whales of the north", "foo-bar", "foo-bar-baz qux-1", "foo--bar", "-foo- -bar-",
	"1.5 a.b.c 1,000.50 v1.2.3", "x@example.org", "http://example.org/a/b?c=d#e", "C++ C# .NET",
	"café naïve", "cafe\u0301 e\u0301", "\u0301abc", "日本語のテキスト", "Ünïcödé déjà-vu", "snake_case",
	"x²+y³", "don't l'homme", "#hashtag @user", "tab\tand\nnewline", "AND OR NOT NEAR",
	"Ελληνικά κείμενα", "русский текст", "العربية مُشَكَّلة", "עִבְרִית", "ภาษาไทย", "한국어 텍스트",
	"emoji 😀 here", "a/b\\c|d", "<b>bold</b>", "2024-01-02T03:04:05Z", "ﬁne ligature",
}

// TestSearchTokensFTS5: shelfmark.SearchTokens splits text into exactly
// the tokens FTS5 makes of it with the search index's own tokenizer (read
// back from the index through an fts5vocab table), so the limits of a query
// count what the index will match, and SearchTokenCount is never below it.
func TestSearchTokensFTS5(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "shelfmark.db"), Options{Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	docs := make([]shelfmark.SearchDoc, len(tokenCases))
	for i, text := range tokenCases {
		docs[i] = shelfmark.SearchDoc{Key: int64(i + 1), Work: int64(i + 1), Kind: shelfmark.KindWork, Body: text}
	}
	if err := db.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.PutSearchDocs(ctx, docs) }); err != nil {
		t.Fatal(err)
	}
	conn, err := db.write.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `CREATE VIRTUAL TABLE temp.tokens USING fts5vocab(main, search_fts, instance)`); err != nil {
		t.Fatal(err)
	}
	for i, text := range tokenCases {
		rows, err := conn.QueryContext(ctx, `SELECT term FROM temp.tokens WHERE doc = ? ORDER BY "offset"`, i+1)
		if err != nil {
			t.Fatal(err)
		}
		var fts []string
		for rows.Next() {
			var term string
			if err := rows.Scan(&term); err != nil {
				t.Fatal(err)
			}
			fts = append(fts, term)
		}
		rows.Close()
		ours := shelfmark.SearchTokens(text)
		if len(ours) != len(fts) {
			t.Errorf("%q: FTS5 makes %d tokens %q, SearchTokens %d %q", text, len(fts), fts, len(ours), ours)
		}
		if n := shelfmark.SearchTokenCount(text); n < len(fts) {
			t.Errorf("%q: SearchTokenCount %d, below FTS5's %d", text, n, len(fts))
		}
		t.Logf("%q: %q", text, fts)
	}
}
