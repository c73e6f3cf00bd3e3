package shelfmark

import (
	"strings"
	"unicode"
	"unicode/utf8"

	porterstemmer "github.com/blevesearch/go-porterstemmer"
	"golang.org/x/text/unicode/norm"
)

// Search folds every word to its stem (English), in the index and in the
// query alike, so that harbours finds harbour and whaling finds whale:
// SQLite's FTS5 with its porter tokenizer over unicode61, PostgreSQL with
// a text search configuration named shelfmark whose words go through
// Snowball's porter dictionary (the same algorithm, M. F. Porter's of
// 1980), and search inside a book (http/iiif) with SearchStem. The last
// word of a prefix term is the beginning of a word, not a word: it is
// not stemmed (stemming voy gives voi, and voy* would not find voyages),
// and it matches as typed or as its stem (running* finds running, whose
// stem is run; see SearchPrefixStem). Other languages are folded (case,
// and diacritics on SQLite) but not stemmed; the stemmer leaves their
// words as they are unless they end in English suffixes.

// Lengths of a token SearchStem stems, in bytes, as FTS5's porter
// tokenizer does: shorter and longer tokens pass through unchanged.
const (
	minStemBytes = 3
	maxStemBytes = 64
)

// SearchStem returns the Porter stem of a folded token (lower case, as
// search tokens are): the token itself when it is shorter than 3 bytes or
// longer than 64, where FTS5's porter tokenizer leaves tokens alone.
// (PostgreSQL's porter dictionary stems two-letter words too, so on
// PostgreSQL as also finds a, and is also i; a book's search does not.)
func SearchStem(token string) string {
	if len(token) < minStemBytes || len(token) > maxStemBytes {
		return token
	}
	return string(porterstemmer.StemWithoutLowerCasing([]rune(token)))
}

// SearchPrefixStem returns the stem that the last word of a prefix term
// also matches as a prefix, beside the word as typed (folded): the
// word's stem when it is a shorter beginning of the word, "" otherwise.
// running* matches what begins with running or with run, since running
// is indexed as run. A stem that is not a beginning of the word is not
// taken (voy stems to voi, which would find voice): happy* finds happier
// and happiness (happi) through neither, and happy without the star.
func SearchPrefixStem(word string) string {
	w := SearchFold(word)
	if st := SearchStem(w); st != w && strings.HasPrefix(w, st) {
		return st
	}
	return ""
}

// SearchFold lower-cases s and removes its diacritics (combining marks
// after canonical decomposition), as SQLite's unicode61 tokenizer with
// remove_diacritics 2 folds a word.
func SearchFold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	var b strings.Builder
	for _, r := range norm.NFD.String(s) {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return norm.NFC.String(b.String())
}
