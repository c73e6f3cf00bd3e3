package ui

import (
	"testing"

	"github.com/shelfmark/shelfmark/http/labels"
)

// TestPickerKeys: every name the pickers and the field choices ask the
// catalogs for by a computed key is there (TestUICatalogs sees only
// literal keys), and every vocabulary has its refusal.
func TestPickerKeys(t *testing.T) {
	c, err := labels.Load(uiFiles, "locales")
	if err != nil {
		t.Fatal(err)
	}
	en := c.Messages("en")
	keys := []string{}
	for _, terms := range [][]vocabTerm{ccLicences, rightsStatements, dcmiTypes} {
		for _, term := range terms {
			keys = append(keys, term.key)
		}
	}
	for _, f := range formFields {
		keys = append(keys, f.key)
	}
	for _, v := range vocabularies {
		if badValueKeys[v] == "" {
			t.Errorf("vocabulary %s has no refusal", v)
		}
		keys = append(keys, badValueKeys[v])
	}
	for _, k := range keys {
		if en[k] == "" {
			t.Errorf("no message %q", k)
		}
	}
	if len(rightsStatements) != 12 || len(dcmiTypes) != 12 {
		t.Errorf("%d rights statements, %d DCMI types; both vocabularies have 12", len(rightsStatements), len(dcmiTypes))
	}
}

// TestPick: what each picked field takes, and how it is stored.
func TestPick(t *testing.T) {
	c, err := labels.Load(uiFiles, "locales")
	if err != nil {
		t.Fatal(err)
	}
	ps := newPickers(c, "de", labels.LanguageChoices("en"))
	for _, tc := range []struct {
		v           vocabulary
		given, want string // want "" when refused
	}{
		{vocabLanguage, "de", "de"}, {vocabLanguage, "ger", "ger"}, {vocabLanguage, "de-CH", "de-CH"},
		{vocabLanguage, "Deutsch", "de"}, {vocabLanguage, "german", "de"}, {vocabLanguage, "Latein", "la"},
		{vocabLanguage, "Klingonisch-ish", ""}, {vocabLanguage, "und", ""}, {vocabLanguage, "x", ""},
		{vocabLanguage, "https://id.loc.gov/vocabulary/iso639-2/ger", ""},
		{vocabRights, "InC", "http://rightsstatements.org/vocab/InC/1.0/"},
		{vocabRights, "urheberrechtlich geschützt", "http://rightsstatements.org/vocab/InC/1.0/"},
		{vocabRights, "No Known Copyright", "http://rightsstatements.org/vocab/NKC/1.0/"},
		{vocabRights, "CC0", "https://creativecommons.org/publicdomain/zero/1.0/"},
		{vocabRights, "Alle Rechte vorbehalten", ""},
		{vocabLicence, "InC", ""}, // a statement is no licence
		{vocabLicence, "http://creativecommons.org/licenses/by/3.0/de/", "http://creativecommons.org/licenses/by/3.0/de/"},
		{vocabLicence, "mailto:a@example.org", ""}, {vocabLicence, "http:///x", ""},
		{vocabType, "Text", "http://purl.org/dc/dcmitype/Text"}, {vocabType, "Standbild", "http://purl.org/dc/dcmitype/StillImage"},
		{vocabType, "stillimage", "http://purl.org/dc/dcmitype/StillImage"}, {vocabType, "Brief", ""},
	} {
		got, ok := ps.pick(tc.v, tc.given)
		if ok != (tc.want != "") || got != tc.want {
			t.Errorf("%s %q: %q %v, want %q", tc.v, tc.given, got, ok, tc.want)
		}
	}
	if l := ps.label(vocabLicence, "http://creativecommons.org/licenses/by/4.0/"); l != "CC BY 4.0 – Namensnennung" {
		t.Errorf("CC BY with http: %q", l)
	}
	if l := ps.label(vocabLanguage, "ger"); l != "Deutsch" {
		t.Errorf("ger: %q", l)
	}
}
