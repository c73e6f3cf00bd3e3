package shelfmark

import (
	"strings"
	"unicode"
	"unicode/utf8"

	porterstemmer "github.com/blevesearch/go-porterstemmer"
	"golang.org/x/text/unicode/norm"
)

// Search folds every word to its stem in the language of its work, in
// the index and in the query alike, so that harbours finds harbour,
// maisons finds maison in a French work, Häuser finds Haus in a German
// one and ciudades finds ciudad in a Spanish one.
//
// A document's language is its work's dcterms:language (or dc:language),
// an ISO 639-1 or 639-2/3 code, or an IRI ending in one, mapped by
// SearchLang to the name of a Snowball stemmer among SearchLanguages
// (french, german, spanish, italian, dutch, portuguese, swedish); the
// first value that names a language decides. A page's document takes its
// work's language (the backends copy it from the work's record when they
// write the page, and again to every page of a work whose record they
// write). A work in English, in a language without a stemmer here, or
// without a language is stemmed as every document was before languages
// were known: M. F. Porter's English algorithm of 1980.
//
// The index stems each document in its own language: SQLite's FTS5 with
// the tokenizer shelfmark (sqlite/stem.c: FTS5's porter tokenizer over
// unicode61 for English, and for another language Snowball's stemmer
// over unicode61's folded words, the language given to it as the FTS5
// locale of the document's text); PostgreSQL with a text search
// configuration per language (shelfmark for English, with Snowball's
// porter dictionary, and shelfmark_french, shelfmark_german … with
// Snowball's dictionaries of those languages; the parser default, no
// stop words, so that a phrase of short words still matches). Search
// inside a book (http/iiif) stems with SearchStemLang in its work's
// language, with the same Snowball code that SQLite runs
// (github.com/tebeka/snowball's libstemmer_c).
//
// A query's language is not known: each word of a query matches any of
// its stems, its Porter stem and its stem in every language of
// SearchLanguages (SearchStems; on SQLite, FTS5 synonyms the tokenizer
// gives at the word's position, so that they also hold in a phrase; on
// PostgreSQL, the query made in every configuration, joined by |). A
// word thus finds the documents of every language whose stemmer takes it
// to the stem they hold; a German Häuser in a work said to be English is
// stemmed as English (hauser) and is not found by Haus.
//
// The last word of a prefix term is the beginning of a word, not a word:
// it is not stemmed (stemming voy gives voi, and voy* would not find
// voyages), and it matches as typed or as its English stem (running*
// finds running, whose stem is run; see SearchPrefixStem). Words are
// folded (case, and diacritics on SQLite and in search inside a book)
// before they are stemmed; PostgreSQL keeps diacritics, as it did before.

// Lengths of a token SearchStem stems, in bytes, as FTS5's porter
// tokenizer does: shorter and longer tokens pass through unchanged.
const (
	minStemBytes = 3
	maxStemBytes = 64
)

// SearchStem returns the English (Porter) stem of a folded token (lower
// case, as search tokens are): the token itself when it is shorter than 3 bytes or
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
