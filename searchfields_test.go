package shelfmark

import (
	"fmt"
	"strings"
	"testing"
)

// TestParseSearchFields: title:, creator:, subject: and date: restrict
// the term after them, with or without a space, in any case, before a
// word, a prefix or a phrase, left out or an alternative; a colon after
// any other word is text; a field with nothing after it and a date: that
// is no span of years are refused, naming the forms.
func TestParseSearchFields(t *testing.T) {
	for q, want := range map[string]string{
		"creator:melville whale":          "creator:melville whale",
		`title:"moby dick" Creator:melv*`: "title:moby dick creator:melv*",
		"TITLE: moby":                     "title:moby",
		`subject: "sea stories"`:          "subject:sea stories",
		"-subject:fiction whales":         "-subject:fiction whales",
		`-title:"a b" c`:                  "-title:a b c",
		"whales OR subject:whaling":       "whales |subject:whaling",
		"date:1851":                       "date:1851",
		"date:1850..1860 whale":           "date:1850..1860 whale",
		"date:1860-1850":                  "date:1850..1860",
		"date:..1860":                     "date:1..1860",
		"date:1850..":                     "date:1850..9999",
		`date:"1850..1860"`:               "date:1850..1860",
		"http://example.org note:this":    "http://example.org note:this",
		"title:creator:x":                 "title:creator:x",
		"title:*":                         "",
	} {
		terms, err := ParseSearchText(q)
		if want == "" {
			if ErrorCode(err) != EINVALID {
				t.Errorf("%q: %v, want EINVALID", q, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", q, err)
			continue
		}
		if got := termsString(terms); got != want {
			t.Errorf("%q: %q, want %q", q, got, want)
		}
	}
	for q, says := range map[string]string{
		"whales title:":     "needs a word",
		"date:soon":         "a year or a range",
		"date:185*":         "a year or a range",
		"date:0":            "a year or a range",
		"date:10000":        "a year or a range",
		"date:..":           "a year or a range",
		"date:+1851":        "a year or a range",
		"-date:1850 whales": "",
	} {
		_, err := ParseSearchText(q)
		if says == "" {
			if err != nil {
				t.Errorf("%q: %v", q, err)
			}
			continue
		}
		if ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), says) {
			t.Errorf("%q: %v, want EINVALID saying %q", q, err, says)
		}
	}
	if lo, hi := (SearchTerm{Field: SearchFieldDate, Text: "1850..1860"}).Years(); lo != 1850 || hi != 1860 {
		t.Errorf("Years: %d..%d", lo, hi)
	}
	if lo, hi := (SearchTerm{Text: "1850"}).Years(); lo != 0 || hi != 0 {
		t.Errorf("Years of a word: %d..%d", lo, hi)
	}
}

// TestSearchDateTokens: a record holds a token of a searched range
// exactly when its span overlaps the range (within SearchYearSpan, where
// every year is named), for every pair of small spans around a century's
// and a millennium's edges; a query is at most 64 tokens.
func TestSearchDateTokens(t *testing.T) {
	years := []int{1, 9, 10, 99, 100, 999, 1000, 1799, 1800, 1849, 1850, 1851, 1859, 1860, 1899, 1900, 1999, 2000, 2024, 9999}
	for _, qlo := range years {
		for _, qhi := range years {
			if qhi < qlo {
				continue
			}
			q := SearchDateQuery(qlo, qhi)
			if len(q) == 0 || len(q) > 64 {
				t.Fatalf("%d..%d: %d tokens", qlo, qhi, len(q))
			}
			for _, dlo := range years {
				for _, dhi := range years {
					if dhi < dlo || dhi-dlo >= SearchYearSpan {
						continue
					}
					have := map[string]bool{}
					for _, tok := range strings.Fields(SearchDateTokens(dlo, dhi)) {
						have[tok] = true
					}
					hit := false
					for _, tok := range q {
						hit = hit || have[tok]
					}
					if overlap := dlo <= qhi && qlo <= dhi; hit != overlap {
						t.Fatalf("record %d..%d, query %d..%d (%v): found %v, overlap %v", dlo, dhi, qlo, qhi, q, hit, overlap)
					}
				}
			}
		}
	}
	if n := len(SearchDateQuery(MinSearchYear, MaxSearchYear)); n > 64 {
		t.Errorf("the widest range is %d tokens", n)
	}
	if got := SearchDateTokens(1850, 1851); got != "m1 c18 d185 y1850 y1851" {
		t.Errorf("tokens of 1850..1851: %q", got)
	}
	if got := SearchDateTokens(0, 0); got != "" {
		t.Errorf("undated: %q", got)
	}
	if n := len(strings.Fields(SearchDateTokens(1, 9999))); n > 200 {
		t.Errorf("a span of every year has %d tokens", n)
	}
}

// TestRecordYears: the years a record's date values name.
func TestRecordYears(t *testing.T) {
	for in, want := range map[string]string{
		"1851":                        "1851..1851",
		"1851-03-04":                  "1851..1851",
		"c. 1850 / 1860":              "1850..1860",
		"1850/1860":                   "1850..1860",
		"185X":                        "1850..1859",
		"18XX":                        "1800..1899",
		"1850s":                       "1850..1859",
		"2024-11-30T12:00:00Z":        "2024..2024",
		"-0500":                       "none",
		"12345":                       "none",
		"no date":                     "none",
		"0000":                        "none",
		"a1851":                       "none",
		"1850|1900; 1880":             "1850..1900",
		"printed 1851, reissued 1892": "1851..1892",
	} {
		lo, hi, ok := recordYears([]string{in})
		got := "none"
		if ok {
			got = fmt.Sprintf("%d..%d", lo, hi)
		}
		if got != want {
			t.Errorf("%q: %s, want %s", in, got, want)
		}
	}
	if lo, hi, ok := recordYears([]string{"1900", "1851"}); !ok || lo != 1851 || hi != 1900 {
		t.Errorf("two values: %d..%d %v", lo, hi, ok)
	}
}

// TestRecordDoc: a record's document takes its titles, creators and
// subjects from dc: and dcterms:, each value once, its years from its
// dates, and every literal but the titles as its body.
func TestRecordDoc(t *testing.T) {
	d := recordDoc([]Field{
		{Predicate: NSDCTerms + "title", Objects: []Term{NewLiteral("Moby Dick")}},
		{Predicate: NSDC + "title", Objects: []Term{NewLiteral("Moby Dick"), NewLiteral("The Whale")}},
		{Predicate: NSDC + "creator", Objects: []Term{NewLiteral("Melville, Herman")}},
		{Predicate: NSDCTerms + "subject", Objects: []Term{NewLiteral("Whaling"), NewLiteral("Sea stories"), NewIRI("http://id.loc.gov/x")}},
		{Predicate: NSDCTerms + "issued", Objects: []Term{NewLiteral("1851")}},
		{Predicate: NSDCTerms + "created", Objects: []Term{NewLiteral("1850s")}},
		{Predicate: "http://example.org/date", Objects: []Term{NewLiteral("1700")}},
	})
	if d.Title != "Moby Dick / The Whale" || d.Creator != "Melville, Herman" || d.Subject != "Whaling / Sea stories" ||
		d.DateLo != 1850 || d.DateHi != 1859 || d.Body != "Melville, Herman Whaling Sea stories 1851 1850s 1700" {
		t.Errorf("%+v", d)
	}
}

// TestSearchRecordsOnly: only records can match when some group of terms
// is made of field terms alone.
func TestSearchRecordsOnly(t *testing.T) {
	for q, want := range map[string]bool{
		"creator:melville":             true,
		"whale creator:melville":       true,
		"date:1850..1860":              true,
		"whale OR creator:melville":    false,
		"whale -creator:melville":      false,
		"title:moby OR date:1851 kelp": true,
		"whale":                        false,
	} {
		terms, err := ParseSearchText(q)
		if err != nil {
			t.Fatal(err)
		}
		if got := SearchRecordsOnly(terms); got != want {
			t.Errorf("%q: %v, want %v", q, got, want)
		}
	}
}
