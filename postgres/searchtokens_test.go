package postgres

import (
	"context"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// tokenCases are texts of many shapes: words, punctuation, numbers,
// addresses, accents (composed and combining), scripts without spaces.
var tokenCases = []string{
	"whales", "Whales of the north", "foo-bar", "foo-bar-baz qux-1", "foo--bar", "-foo- -bar-", "a-b-c-d-e-f-g-h",
	"1.5 a.b.c 1,000.50 v1.2.3", "x@example.org", "http://example.org/a/b?c=d#e", "C++ C# .NET", "example.org/a/b/c/d",
	"café naïve", "cafe\u0301 e\u0301", "\u0301abc", "日本語のテキスト", "Ünïcödé déjà-vu", "snake_case",
	"x²+y³", "don't l'homme", "#hashtag @user", "tab\tand\nnewline", "AND OR NOT NEAR",
	"Ελληνικά κείμενα", "русский текст", "العربية مُشَكَّلة", "עִבְרִית", "ภาษาไทย", "한국어 텍스트",
	"emoji 😀 here", "a/b\\c|d", "<b>bold</b>", "2024-01-02T03:04:05Z", "ﬁne ligature", "-1 +2 3e10 0x1F",
	"the-the-the-the-the-the-the-the", "self-evident well-known e-mail co-op",
}

// TestSearchTokensPostgres: shelfmark.SearchTokenCount, which the limits
// of a query use, is never below the number of tokens PostgreSQL's parser
// makes of a text for the index ('simple' configuration, as the tsvector
// column): a phrase PostgreSQL would turn into more words than the limit
// cannot pass it.
func TestSearchTokensPostgres(t *testing.T) {
	ctx := context.Background()
	db, _ := openTest(t, Options{})
	for _, text := range tokenCases {
		var n int
		var lexemes []string
		if err := db.pool.QueryRow(ctx, `SELECT count(*), coalesce(array_agg(token), '{}') FROM ts_debug('simple', $1) WHERE lexemes <> '{}'`, text).Scan(&n, &lexemes); err != nil {
			t.Fatal(err)
		}
		if got := shelfmark.SearchTokenCount(text); got < n {
			t.Errorf("%q: SearchTokenCount %d, below PostgreSQL's %d tokens %q", text, got, n, lexemes)
		}
		t.Logf("%q: %d %q (SearchTokenCount %d)", text, n, lexemes, shelfmark.SearchTokenCount(text))
	}
}
