package labels

// This file lists the languages a cataloguing form offers, named as a
// work page names them (ForReaders): the same names of golang.org/x/text,
// in the page's language, so that what a form offers is what a page shows.

import (
	"bytes"
	"slices"
	"strings"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
)

// LanguageChoice is one language a form offers: its ISO 639 code, as BCP
// 47 writes it (the two-letter code where there is one, "de", else the
// three-letter one, "gsw"), and its name.
type LanguageChoice struct {
	Code, Name string
}

// LanguageChoices lists the languages that have a name in lang (a BCP 47
// tag, the page's), sorted by name as lang sorts. It reads the tables of
// golang.org/x/text once per call (some 9,000 codes, of which some 700
// are named); callers keep the list.
func LanguageChoices(lang string) []LanguageChoice {
	tag := language.Make(lang)
	names := display.Tags(tag)
	// one code per name: the shortest (ISO 639-1 before 639-2/3), so that
	// aliases ("ger", "iw") and a macrolanguage's members that share its
	// name ("cmn") are not offered twice
	byName := map[string]string{}
	for _, b := range language.Supported.BaseLanguages() {
		code := b.String()
		name := languageName(names, code)
		if name == "" {
			continue
		}
		if had, ok := byName[name]; !ok || len(code) < len(had) || (len(code) == len(had) && code < had) {
			byName[name] = code
		}
	}
	out := make([]LanguageChoice, 0, len(byName))
	for name, code := range byName {
		out = append(out, LanguageChoice{Code: code, Name: name})
	}
	col := collate.New(tag, collate.Loose)
	buf := &collate.Buffer{}
	keys := make(map[string][]byte, len(out))
	for _, c := range out {
		keys[c.Code] = append([]byte(nil), col.KeyFromString(buf, c.Name)...)
		buf.Reset()
	}
	slices.SortFunc(out, func(a, b LanguageChoice) int {
		if c := bytes.Compare(keys[a.Code], keys[b.Code]); c != 0 {
			return c
		}
		return strings.Compare(a.Code, b.Code) // the code breaks a tie
	})
	return out
}

// LanguageName names the language of code (an ISO 639 code or a BCP 47
// tag: "en", "eng", "de-CH") in lang, as a work page names it; "" when
// code is no language tag or has no name there.
func LanguageName(lang, code string) string {
	return languageName(display.Tags(language.Make(lang)), code)
}
