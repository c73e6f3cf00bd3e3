package labels

import "testing"

// TestLanguageChoices: the languages offered are named in the page's
// language, sorted as it sorts, each code and each name once, and named
// as a work page names them.
func TestLanguageChoices(t *testing.T) {
	for _, tc := range []struct{ lang, code, name string }{
		{"en", "de", "German"}, {"de", "de", "Deutsch"}, {"fr", "en", "anglais"}, {"es", "la", "latín"}, {"en", "gsw", "Swiss German"},
	} {
		cs := LanguageChoices(tc.lang)
		if len(cs) < 400 {
			t.Fatalf("%s: %d languages", tc.lang, len(cs))
		}
		codes, names := map[string]bool{}, map[string]bool{}
		found := ""
		for _, c := range cs {
			if codes[c.Code] || names[c.Name] {
				t.Errorf("%s: %s %q offered twice", tc.lang, c.Code, c.Name)
			}
			codes[c.Code], names[c.Name] = true, true
			if c.Code == tc.code {
				found = c.Name
			}
			if c.Name != LanguageName(tc.lang, c.Code) {
				t.Errorf("%s: %s is %q here, %q on a work page", tc.lang, c.Code, c.Name, LanguageName(tc.lang, c.Code))
			}
		}
		if found != tc.name {
			t.Errorf("%s: %s is %q, want %q", tc.lang, tc.code, found, tc.name)
		}
		if codes["ger"] || codes["iw"] {
			t.Errorf("%s: an alias is offered", tc.lang)
		}
	}
	// sorted as German sorts: Ägyptisch among the A's, not after Z
	cs := LanguageChoices("de")
	at := -1
	for i, c := range cs {
		if c.Code == "egy" {
			at = i
		}
	}
	if at < 0 || at > len(cs)/4 || cs[at].Name != "Ägyptisch" {
		t.Errorf("Egyptian at %d of %d", at, len(cs))
	}
}
