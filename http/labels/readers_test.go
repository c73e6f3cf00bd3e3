package labels

import (
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestForReaders: a language's code is named in the page's language (the
// code kept), what is no language is left as it is; a creator and a
// subject link to a phrase search for them, a title does not, a value of
// too many words does not, and an IRI keeps its own link.
func TestForReaders(t *testing.T) {
	lit := func(pred, v string) shelfmark.Statement {
		return shelfmark.Statement{Predicate: shelfmark.NSDC + pred, Object: shelfmark.NewLiteral(v)}
	}
	stmts := []shelfmark.Statement{
		lit("language", "en"), lit("language", "ger"), lit("language", "fr-CA"), lit("language", "Latin, mostly"), lit("language", "und"),
		lit("creator", `Ada "the Countess" Lovelace`), lit("subject", "Harbours"), lit("title", "A survey"),
		lit("subject", "one two three four five six seven eight nine ten eleven twelve thirteen"),
		{Predicate: shelfmark.NSDC + "subject", Object: shelfmark.Term{Kind: shelfmark.IRI, Value: "http://id.loc.gov/authorities/subjects/sh85058950"}},
	}
	for _, tc := range []struct {
		lang string
		want map[string]string // the shown text of each stored value
	}{
		{"en", map[string]string{"en": "English", "ger": "German", "fr-CA": "Canadian French"}},
		{"de", map[string]string{"en": "Englisch", "ger": "Deutsch"}},
	} {
		fields := Fields(nil, stmts)
		ForReaders(fields, tc.lang)
		seen := map[string]bool{}
		for _, f := range fields {
			for _, v := range f.Values {
				switch f.key {
				case "work.field.language":
					stored := v.Text
					if v.Code != "" {
						stored = v.Code
					}
					seen[stored] = true
					if want, ok := tc.want[stored]; ok && v.Text != want {
						t.Errorf("%s: the language %q shows %q, want %q", tc.lang, stored, v.Text, want)
					}
					if (stored == "Latin, mostly" || stored == "und") && (v.Code != "" || v.Text != stored) {
						t.Errorf("%s: %q is named %q", tc.lang, stored, v.Text)
					}
				case "work.field.creator":
					if v.Href != `/search?q=creator%3A%22Ada+the+Countess+Lovelace%22` {
						t.Errorf("the creator links to %q", v.Href)
					}
				case "work.field.subject":
					switch v.Text {
					case "Harbours":
						if v.Href != "/search?q=subject%3A%22Harbours%22" {
							t.Errorf("the subject links to %q", v.Href)
						}
					case "http://id.loc.gov/authorities/subjects/sh85058950":
						if v.Href != v.Text {
							t.Errorf("the IRI links to %q", v.Href)
						}
					default:
						if v.Href != "" {
							t.Errorf("a subject of thirteen words links to %q", v.Href)
						}
					}
				case "work.field.title":
					if v.Href != "" {
						t.Errorf("the title links to %q", v.Href)
					}
				}
			}
		}
		for _, code := range []string{"en", "ger", "fr-CA", "Latin, mostly", "und"} {
			if !seen[code] {
				t.Errorf("%s: the language %q is not shown", tc.lang, code)
			}
		}
	}
}
