package shelfmark

import (
	"slices"
	"testing"
)

// TestSearchLang: ISO 639-1, 639-2/B and 639-2/T codes, English names,
// regions and IRIs name the languages search stems; English, other
// languages and anything else are "" (Porter's English stemmer), English
// alone reported as known.
func TestSearchLang(t *testing.T) {
	for code, want := range map[string]struct {
		lang string
		ok   bool
	}{
		"fr": {"french", true}, "fre": {"french", true}, "FRA": {"french", true}, " fr-CA ": {"french", true}, "French": {"french", true},
		"de": {"german", true}, "ger": {"german", true}, "deu": {"german", true}, "de_AT": {"german", true},
		"es": {"spanish", true}, "spa": {"spanish", true},
		"it": {"italian", true}, "ita": {"italian", true},
		"nl": {"dutch", true}, "dut": {"dutch", true}, "nld": {"dutch", true},
		"pt": {"portuguese", true}, "por": {"portuguese", true}, "pt-BR": {"portuguese", true},
		"sv": {"swedish", true}, "swe": {"swedish", true},
		"http://id.loc.gov/vocabulary/iso639-2/fre": {"french", true},
		"http://lexvo.org/id/iso639-3/deu":          {"german", true},
		"http://example.org/lang#spa":               {"spanish", true},
		"en":                                        {"", true}, "eng": {"", true}, "en-GB": {"", true}, "English": {"", true},
		"lat": {"", false}, "la": {"", false}, "ru": {"", false}, "": {"", false}, "   ": {"", false},
		"francais": {"", false}, "f": {"", false}, "http://example.org/": {"", false},
	} {
		if lang, ok := SearchLang(code); lang != want.lang || ok != want.ok {
			t.Errorf("SearchLang(%q) = %q, %v; want %q, %v", code, lang, ok, want.lang, want.ok)
		}
	}
	if got := SearchLanguages(); !slices.Equal(got, []string{"french", "german", "spanish", "italian", "dutch", "portuguese", "swedish"}) {
		t.Errorf("SearchLanguages() = %q", got)
	}
}

// TestRecordLang: a record's language is the first of its dc: and
// dcterms:language values that SearchLang knows.
func TestRecordLang(t *testing.T) {
	lang := func(p string, vs ...string) Field {
		f := Field{Predicate: p}
		for _, v := range vs {
			f.Objects = append(f.Objects, NewLiteral(v))
		}
		return f
	}
	for _, c := range []struct {
		fields []Field
		want   string
	}{
		{nil, ""},
		{[]Field{lang(NSDCTerms+"language", "fre")}, "french"},
		{[]Field{lang(NSDC+"language", "lat", "ger", "fre")}, "german"},
		{[]Field{lang(NSDCTerms+"language", "eng", "fre")}, ""},
		{[]Field{lang(NSDCTerms+"title", "fre"), lang(NSDCTerms+"language", "spa")}, "spanish"},
		{[]Field{lang(NSDCTerms+"language", "lat")}, ""},
	} {
		if got := recordLang(c.fields); got != c.want {
			t.Errorf("recordLang(%v) = %q, want %q", c.fields, got, c.want)
		}
	}
}

// TestSearchStemLang: a word is stemmed by its language's Snowball
// stemmer, by Porter's for "" and unknown languages, and left alone
// outside 3 to 64 bytes; a query word's stems are every language's, the
// English first, each once.
func TestSearchStemLang(t *testing.T) {
	for _, c := range []struct{ word, lang, want string }{
		{"harbours", "", "harbour"},
		{"harbours", "latin", "harbour"},
		{"maisons", "french", "maison"},
		{"chevaux", "french", "cheval"},
		{"chevaux", "", "chevaux"},
		{"hauser", "german", "haus"},
		{"hauses", "german", "haus"},
		{"ciudades", "spanish", "ciudad"},
		{"de", "french", "de"},
		{"aux", "french", "aux"},
	} {
		if got := SearchStemLang(c.word, c.lang); got != c.want {
			t.Errorf("SearchStemLang(%q, %q) = %q, want %q", c.word, c.lang, got, c.want)
		}
	}
	st := SearchStems("chevaux")
	if st[0] != "chevaux" || !slices.Contains(st, "cheval") {
		t.Errorf("SearchStems(chevaux) = %q", st)
	}
	seen := map[string]bool{}
	for _, s := range st {
		if seen[s] {
			t.Errorf("SearchStems(chevaux) = %q: %q twice", st, s)
		}
		seen[s] = true
	}
	if st := SearchStems("1851"); !slices.Equal(st, []string{"1851"}) {
		t.Errorf("SearchStems(1851) = %q, want only 1851", st)
	}
}
