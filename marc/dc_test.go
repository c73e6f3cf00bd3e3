package marc

import (
	"fmt"
	"strings"
	"testing"
)

func dcLines(vs []DCValue) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "%s: %s\n", v.Element, v.Value)
	}
	return b.String()
}

func checkDC(t *testing.T, what string, rec *Record, want string) {
	t.Helper()
	got := dcLines(DublinCore(rec))
	want = strings.TrimLeft(want, "\n")
	if got != want {
		t.Errorf("%s: DublinCore:\n%s\nwant:\n%s", what, got, want)
	}
}

func TestDublinCore(t *testing.T) {
	checkDC(t, "one.dat", mustOne(t, "one.dat", false), `
title: ActivePerl with ASP and ADO
creator: Martinsson, Tobias, 1976-
type: text
publisher: New York : John Wiley & Sons
date: 2000
language: eng
format: xxi, 289 p. : ill. ; 23 cm. +
description: "Wiley Computer Publishing."
subject: QA76.73.P22 M33 2000
subject: 005.13/3
subject: Perl (Computer program language)
subject: Active server pages
subject: ActiveX
identifier: URN:ISBN:0471383147 (paper/cd-rom : alk. paper)
`)
	// MARC-8 record: 041 "engund" is an old-style concatenation.
	checkDC(t, "marc8.dat", mustOne(t, "marc8.dat", false), `
title: Escape from loneliness
creator: Tournier, Paul
type: text
publisher: Philadelphia : Westminster Press
date: c1962
language: eng
language: und
format: 192 p. ; 21 cm
description: Translation of De la solitude à la communauté
description: Includes bibliographical references (p. 190-192)
subject: BF697 .T623
subject: Loneliness
subject: Self
subject: Social psychology
subject: Loneliness
subject: Social Isolation
`)
	recs, _, err := readXMLAll(t, readTestFile(t, "batch.xml"))
	if err != nil {
		t.Fatal(err)
	}
	// Sound recording; 700 $4 is a control subfield and left out; 650 $y
	// is a subdivision.
	checkDC(t, "batch.xml#1", recs[0], `
title: The Great Ray Charles [sound recording]
creator: Charles, Ray, 1930-
type: sound recording
publisher: New York, N.Y. : Atlantic
date: [1957?]
language: eng
format: 1 sound disc : analog, 33 1/3 rpm ; 12 in
description: Ray Charles, piano & celeste
description: The Ray -- My melancholy baby -- Black coffee -- There's no you -- Doodlin' -- Sweet sixteen bars -- I surrender dear -- Undecided
description: Brief record
subject: Atlantic 1259
subject: Jazz--1951-1960
subject: Piano with jazz ensemble
`)
	// A synthetic RDA record exercising the remaining rules.
	rec := &Record{
		Leader: "00000ntc a2200000 i 4500",
		Fields: []Field{
			{Tag: "001", Value: "x1"},
			{Tag: "008", Value: "150101s2015    fr            000 0 fre d"},
			{Tag: "022", Ind1: ' ', Ind2: ' ', Subfields: []Subfield{{'a', "1234-5678"}}},
			{Tag: "100", Ind1: '1', Ind2: ' ', Subfields: []Subfield{{'a', "Dupont, Jean,"}, {'e', "author."}, {'0', "http://id.example/1"}}},
			{Tag: "245", Ind1: '1', Ind2: '0', Subfields: []Subfield{{'a', "Carnets /"}, {'c', "Jean Dupont."}}},
			{Tag: "246", Ind1: '3', Ind2: ' ', Subfields: []Subfield{{'a', "Notebooks."}}},
			{Tag: "264", Ind1: ' ', Ind2: '1', Subfields: []Subfield{{'a', "Paris :"}, {'b', "Gallimard,"}, {'c', "2015."}}},
			{Tag: "264", Ind1: ' ', Ind2: '4', Subfields: []Subfield{{'c', "©2014"}}},
			{Tag: "506", Ind1: ' ', Ind2: ' ', Subfields: []Subfield{{'a', "Open access."}}},
			{Tag: "546", Ind1: ' ', Ind2: ' ', Subfields: []Subfield{{'a', "In French."}}},
			{Tag: "600", Ind1: '1', Ind2: '0', Subfields: []Subfield{{'a', "Hugo, Victor,"}, {'d', "1802-1885"}, {'x', "Criticism and interpretation."}}},
			{Tag: "651", Ind1: ' ', Ind2: '0', Subfields: []Subfield{{'a', "France"}, {'x', "History"}, {'y', "19th century."}}},
			{Tag: "655", Ind1: ' ', Ind2: '7', Subfields: []Subfield{{'a', "Diaries."}, {'2', "lcgft"}}},
			{Tag: "773", Ind1: '0', Ind2: ' ', Subfields: []Subfield{{'t', "Œuvres complètes."}}},
			{Tag: "856", Ind1: '4', Ind2: '0', Subfields: []Subfield{{'q', "application/pdf"}, {'u', "https://example.org/x.pdf"}}},
		},
	}
	checkDC(t, "synthetic", rec, `
title: Carnets
title: Notebooks
creator: Dupont, Jean, author
type: collection
type: manuscript
type: text
type: Diaries
publisher: Paris : Gallimard
date: 2015
date: ©2014
language: fre
format: application/pdf
subject: Hugo, Victor, 1802-1885--Criticism and interpretation
coverage: France--History--19th century
relation: Œuvres complètes
identifier: https://example.org/x.pdf
identifier: 1234-5678
rights: Open access
`)
	// Without 260/264 dates, 008/07-10 is used.
	rec.Fields = rec.Fields[:2]
	checkDC(t, "008 date", rec, `
type: collection
type: manuscript
type: text
date: 2015
language: fre
`)
}
