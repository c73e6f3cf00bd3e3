package sqlite

import (
	"slices"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestStemLanguages: the tokenizer shelfmark (stem.c) stems the languages
// of shelfmark.SearchLanguages, in their order; a document in any other
// locale is stemmed in English.
func TestStemLanguages(t *testing.T) {
	if got, want := stemLanguages(), shelfmark.SearchLanguages(); !slices.Equal(got, want) {
		t.Fatalf("stem.c stems %q, the root package's SearchLanguages are %q", got, want)
	}
}
