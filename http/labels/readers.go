package labels

import (
	"net/url"
	"strings"

	"github.com/shelfmark/shelfmark"
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
)

// ForReaders makes fields (of Fields) read as a person reads them, in the
// language lang (a BCP 47 tag, the page's): a language given by its code
// (ISO 639, as "en", "eng" or "de-CH") is named ("English", with the code
// kept in Value.Code), and a creator's, contributor's or subject's
// literal value links to a search for it as a phrase, a creator's and a
// subject's in their field (a value of more than maxLinkedWords words, or
// that already links, is left as it is).
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
			field := searchFields[f.key]
			for i := range f.Values {
				v := &f.Values[i]
				if v.Href == "" {
					v.Href = SearchFor(field, v.Text)
				}
			}
		}
	}
}

// maxLinkedWords is the most words a value that links to a search for
// it may hold (a search takes at most 32 words in one phrase).
const maxLinkedWords = 12

// searchFields are the fields of a record a value's search looks in, by
// the value's label: a creator among creators, a subject among subjects
// (a contributor anywhere: search has no field for contributors).
var searchFields = map[string]string{
	"work.field.creator": shelfmark.SearchFieldCreator,
	"work.field.subject": shelfmark.SearchFieldSubject,
}

// SearchFor is the search page's address for a phrase search of value,
// in field when it is not "" (creator:"…"); "" for a value of no words
// or of more than maxLinkedWords words. Double quotes in the value are
// left out, as the phrase is quoted.
func SearchFor(field, value string) string {
	words := strings.Fields(strings.ReplaceAll(value, `"`, " "))
	if len(words) == 0 || len(words) > maxLinkedWords {
		return ""
	}
	q := `"` + strings.Join(words, " ") + `"`
	if field != "" {
		q = field + ":" + q
	}
	return "/search?q=" + url.QueryEscape(q)
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
