package shelfmark

import (
	"strings"
	"sync"

	"github.com/tebeka/snowball"
)

// The languages of search (searchstem.go): which stemmer folds the words
// of a document, from its work's language.

// searchLanguages are the languages search stems other than English, by
// the names of their Snowball stemmers (which are also the names of
// PostgreSQL's Snowball dictionaries, and the locales SQLite's tokenizer
// shelfmark reads: sqlite/stem.c lists them again, and a test compares the
// lists), each with the ISO 639-1, 639-2/B and 639-2/T (639-3) codes that
// name it.
var searchLanguages = []struct {
	name  string
	codes []string
}{
	{"french", []string{"fr", "fre", "fra"}},
	{"german", []string{"de", "ger", "deu"}},
	{"spanish", []string{"es", "spa"}},
	{"italian", []string{"it", "ita"}},
	{"dutch", []string{"nl", "dut", "nld"}},
	{"portuguese", []string{"pt", "por"}},
	{"swedish", []string{"sv", "swe"}},
}

// englishCodes name English, whose documents are stemmed with Porter's
// algorithm (SearchLang "").
var englishCodes = []string{"en", "eng", "english"}

// SearchLanguages returns the names of the Snowball stemmers of the
// languages search stems besides English (searchstem.go), in a fixed
// order: french, german, spanish, italian, dutch, portuguese, swedish.
func SearchLanguages() []string {
	out := make([]string, len(searchLanguages))
	for i, l := range searchLanguages {
		out[i] = l.name
	}
	return out
}

// SearchLang returns the stemmer of a language code (SearchDoc.Lang): the
// Snowball name of one of SearchLanguages for its ISO 639-1 or 639-2/3
// code or its English name, in any case, with or without a region (fr,
// fre, fra, fr-CA, French; or an IRI ending in one, such as
// http://id.loc.gov/vocabulary/iso639-2/fre), and "" for English, for any
// other language and for anything else: Porter's English stemmer, as
// documents without a language have. ok reports whether code names a
// language SearchLang knows, English included.
func SearchLang(code string) (lang string, ok bool) {
	c := strings.ToLower(strings.TrimSpace(code))
	if i := strings.LastIndexAny(c, "/#"); i >= 0 {
		c = c[i+1:]
	}
	if i := strings.IndexAny(c, "-_"); i >= 0 { // a region or script: fr-CA
		c = c[:i]
	}
	if c == "" {
		return "", false
	}
	for _, e := range englishCodes {
		if c == e {
			return "", true
		}
	}
	for _, l := range searchLanguages {
		if c == l.name {
			return l.name, true
		}
		for _, k := range l.codes {
			if c == k {
				return l.name, true
			}
		}
	}
	return "", false
}

// recordLang is the language of a record's documents (SearchDoc.Lang):
// that of the first of its dc:language and dcterms:language values that
// SearchLang knows, "" (English) when none does.
func recordLang(fields []Field) string {
	for _, f := range fields {
		if isLanguage(f.Predicate) {
			for _, o := range f.Objects {
				if lang, ok := SearchLang(o.Value); ok {
					return lang
				}
			}
		}
	}
	return ""
}

// SearchLangOf is the language of a work's documents as the search
// indexer gives it (SearchDoc.Lang) from the work's metadata: that of the
// first of its dc:language and dcterms:language values that SearchLang
// knows, "" (English) when none does. Search inside a book stems in it.
func SearchLangOf(md []Statement) string {
	for _, s := range md {
		if isLanguage(s.Predicate) {
			if lang, ok := SearchLang(s.Object.Value); ok {
				return lang
			}
		}
	}
	return ""
}

// isLanguage reports whether a predicate is dc:language or
// dcterms:language.
func isLanguage(p string) bool { return p == NSDCTerms+"language" || p == NSDC+"language" }

// stemmers holds Snowball stemmers by language; a stemmer is not safe
// for concurrent use, so each is taken from its pool for one word.
var stemmers = sync.OnceValue(func() map[string]*sync.Pool {
	m := make(map[string]*sync.Pool, len(searchLanguages))
	for _, l := range searchLanguages {
		name := l.name
		m[name] = &sync.Pool{New: func() any {
			s, err := snowball.New(name)
			if err != nil {
				panic("shelfmark: no Snowball stemmer for " + name + ": " + err.Error())
			}
			return s
		}}
	}
	return m
})

// SearchStemLang returns the stem of a folded token (SearchFold) in the
// language lang (SearchLang): SearchStem for "" or a language not among
// SearchLanguages, else the Snowball stemmer's stem of the token, or
// the token itself when it is shorter than 3 bytes or longer than 64, as
// SQLite's tokenizer shelfmark stems it (sqlite/stem.c).
func SearchStemLang(token, lang string) string {
	if lang == "" {
		return SearchStem(token)
	}
	pool := stemmers()[lang]
	if pool == nil {
		return SearchStem(token)
	}
	if len(token) < minStemBytes || len(token) > maxStemBytes {
		return token
	}
	s := pool.Get().(*snowball.Stemmer)
	st := s.Stem(token)
	pool.Put(s)
	return st
}

// SearchStems returns the stems a folded query token matches, its
// English stem first and then its stem in each of SearchLanguages, each
// stem once: a query's language is not known (searchstem.go).
func SearchStems(token string) []string {
	out := []string{SearchStem(token)}
	for _, l := range searchLanguages {
		st := SearchStemLang(token, l.name)
		dup := false
		for _, o := range out {
			if o == st {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, st)
		}
	}
	return out
}
