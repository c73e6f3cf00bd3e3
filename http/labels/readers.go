package labels

import (
	"net/url"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
)

// ForReaders makes fields (of Fields) read as a person reads them, in the
// language lang (a BCP 47 tag, the page's): a language given by its code
// (ISO 639, as "en", "eng" or "de-CH") is named ("English", with the code
// kept in Value.Code), and a creator's, contributor's or subject's
// literal value links to a search for it as a phrase (a value of more
// than maxLinkedWords words, or that already links, is left as it is).
// It changes the values in place and reads nothing.
func ForReaders(fields []*Field, lang string) {
	names := display.Tags(language.Make(lang))
	for _, f := range fields {
		switch f.key {
		case "work.field.language":
			for i := range f.Values {
				v := &f.Values[i]
				if v.Href != "" {
					continue
				}
				if name := languageName(names, v.Text); name != "" {
					v.Code, v.Text = v.Text, name
				}
			}
		case "work.field.creator", "work.field.contributor", "work.field.subject":
			for i := range f.Values {
				v := &f.Values[i]
				if v.Href == "" {
					v.Href = SearchFor(v.Text)
				}
			}
		}
	}
}

// maxLinkedWords is the most words a value that links to a search for
// it may hold (a search takes at most 32 words in one phrase).
const maxLinkedWords = 12

// SearchFor is the search page's address for a phrase search of value
// ("" for a value of no words or of more than maxLinkedWords words).
// Double quotes in the value are left out, as the phrase is quoted.
func SearchFor(value string) string {
	words := strings.Fields(strings.ReplaceAll(value, `"`, " "))
	if len(words) == 0 || len(words) > maxLinkedWords {
		return ""
	}
	return "/search?q=" + url.QueryEscape(`"`+strings.Join(words, " ")+`"`)
}

// languageName names the language of code in names' language, or ""
// when code is no language tag, names an undetermined language, or has
// no name there.
func languageName(names display.Namer, code string) string {
	code = strings.TrimSpace(code)
	if len(code) < 2 || len(code) > 35 {
		return ""
	}
	tag, err := language.Parse(code)
	if err != nil || tag == language.Und {
		return ""
	}
	name := names.Name(tag)
	if name == "" || strings.EqualFold(name, code) {
		return ""
	}
	return name
}
