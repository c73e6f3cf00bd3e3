package marc

import (
	"strings"
)

// DCValue is one simple Dublin Core statement.
type DCValue struct {
	// Element is one of the 15 DCMES element names (title, creator,
	// subject, description, publisher, contributor, date, type, format,
	// identifier, source, language, relation, coverage, rights).
	Element string
	// Value is the statement's value.
	Value string
	// Lang is the language of Value, if known. The crosswalk does not set
	// it.
	Lang string
}

// DublinCore maps rec to simple Dublin Core.
//
// It follows the Library of Congress stylesheet MARC21slim2OAIDC.xsl as
// revised in 2008 (the revision shared with MARC21slim2SRWDC.xsl: subject
// subdivisions joined with "--", 651/662/752 as coverage) for the
// elements that stylesheet produces, and the LoC "MARC to Dublin Core
// Crosswalk" (https://www.loc.gov/marc/marc2dc.html, unqualified, 2008)
// for the fields the stylesheet leaves out (246, 264, 008/07-10, 041,
// 022, 024, 050/060/082, 300/340, 534/786). Values are emitted grouped by
// element in this order, and in record order within an element:
//
//   - title: 245 $a$b$f$g$h$k (joined with spaces), then 246 $a$b$n$p.
//   - creator: 100, 110, 111, 700, 710, 711, 720 (all subfields except the
//     numeric control subfields $0-$9, joined with spaces).
//   - type: from leader/07 "collection" when 'c'; "manuscript" when
//     leader/06 is d, f, p or t; then the leader/06 type (a, t text; e, f
//     cartographic; c, d notated music; i, j sound recording; k still
//     image; g moving image; r three dimensional object; m software,
//     multimedia; p mixed material); then each 655 (like creators). The
//     stylesheet concatenates the first three into one string; here they
//     are separate values.
//   - publisher: 260 $a$b; 264 $a$b when its second indicator is 1
//     (publication).
//   - date: every 260 $c and 264 $c; if there is none, 008/07-10 when it
//     is four digits or digits and 'u'.
//   - language: 008/35-37 unless blank or fill characters, then 041
//     $a$b$d$e$f$g$h$j (old-style concatenated codes are split into
//     three-letter codes); duplicates are dropped.
//   - format: 856 $q, 340 $a, 300 $a$b$c.
//   - description: 520 $a, then 500-599 $a except 506, 520, 530, 540 and
//     546.
//   - subject: 050 $a$b, 060 $a$b, 080 $a, 082 $a; 600 ($abcdefghjklmnopqrstu4),
//     610 ($abcdefghklmnoprstu4), 611 ($acdefghklnpqstu4), 630
//     ($adfghklmnoprst), 650 ($ae) each followed by "--" and the $v$x$y$z
//     subdivisions joined with "--"; 653 $a.
//   - coverage: 651 $a (+ "--" subdivisions), 662 $a-$h, 752 $a$b$c$d$f$g$h.
//   - relation: 530 $a$b$c$d$u; 760-787 $o$t.
//   - source: 534 $t; 786 $o$t.
//   - identifier: 856 $u; 020 $a as "URN:ISBN:" + value; 022 $a; 024 $a.
//   - rights: 506 $a, 540 $a.
//
// Trailing ISBD punctuation and blanks (any of ".:,;/ ") are removed from
// every value the way the stylesheet's chopPunctuation template does,
// except from identifiers, where a final "." may be significant; for a
// subject the main heading and each subdivision are chopped before they
// are joined. Like the stylesheet, no exception is made for initials or
// abbreviations ("Smith, John A." becomes "Smith, John A"). Empty values
// are dropped and Lang is never set.
func DublinCore(rec *Record) []DCValue {
	var out []DCValue
	add := func(el, v string) {
		v = chopPunctuation(strings.TrimSpace(v))
		if v != "" {
			out = append(out, DCValue{Element: el, Value: v})
		}
	}
	addRaw := func(el, v string) {
		v = strings.TrimSpace(v)
		if v != "" {
			out = append(out, DCValue{Element: el, Value: v})
		}
	}
	leader := rec.Leader + strings.Repeat(" ", max(0, LeaderLen-len(rec.Leader)))
	l6, l7 := leader[6], leader[7]
	var f008 string
	if f := rec.First("008"); f != nil {
		f008 = f.Value
	}

	// title
	for _, f := range rec.Lookup("245") {
		add("title", subfieldSelect(f, "abfghk", " "))
	}
	for _, f := range rec.Lookup("246") {
		add("title", subfieldSelect(f, "abnp", " "))
	}
	// creator
	for _, f := range rec.Lookup("100", "110", "111", "700", "710", "711", "720") {
		add("creator", nonControl(f))
	}
	// type
	if l7 == 'c' {
		add("type", "collection")
	}
	switch l6 {
	case 'd', 'f', 'p', 't':
		add("type", "manuscript")
	}
	switch l6 {
	case 'a', 't':
		add("type", "text")
	case 'e', 'f':
		add("type", "cartographic")
	case 'c', 'd':
		add("type", "notated music")
	case 'i', 'j':
		add("type", "sound recording")
	case 'k':
		add("type", "still image")
	case 'g':
		add("type", "moving image")
	case 'r':
		add("type", "three dimensional object")
	case 'm':
		add("type", "software, multimedia")
	case 'p':
		add("type", "mixed material")
	}
	for _, f := range rec.Lookup("655") {
		add("type", nonControl(f))
	}
	// publisher
	for _, f := range rec.Lookup("260", "264") {
		if f.Tag == "264" && f.Ind2 != '1' {
			continue
		}
		add("publisher", subfieldSelect(f, "ab", " "))
	}
	// date
	nDates := len(out)
	for _, f := range rec.Lookup("260", "264") {
		for _, v := range f.Values("c") {
			add("date", v)
		}
	}
	if len(out) == nDates && len(f008) >= 11 {
		if y := f008[7:11]; isYear(y) {
			add("date", y)
		}
	}
	// language
	seen := map[string]bool{}
	addLang := func(code string) {
		code = strings.TrimSpace(code)
		if code == "" || strings.Trim(code, "|") == "" || seen[code] {
			return
		}
		seen[code] = true
		addRaw("language", code)
	}
	if len(f008) >= 38 {
		addLang(f008[35:38])
	}
	for _, f := range rec.Lookup("041") {
		for _, v := range f.Values("abdefghj") {
			v = strings.TrimSpace(v)
			if len(v) > 3 && len(v)%3 == 0 && isLetters(v) {
				for i := 0; i < len(v); i += 3 {
					addLang(v[i : i+3])
				}
				continue
			}
			addLang(v)
		}
	}
	// format
	for _, f := range rec.Lookup("856") {
		for _, v := range f.Values("q") {
			add("format", v)
		}
	}
	for _, f := range rec.Lookup("340") {
		for _, v := range f.Values("a") {
			add("format", v)
		}
	}
	for _, f := range rec.Lookup("300") {
		add("format", subfieldSelect(f, "abc", " "))
	}
	// description
	for _, f := range rec.Lookup("520") {
		for _, v := range f.Values("a") {
			add("description", v)
		}
	}
	for i := range rec.Fields {
		f := &rec.Fields[i]
		if f.Tag < "500" || f.Tag > "599" || len(f.Tag) != 3 || !isDigit(f.Tag[1]) || !isDigit(f.Tag[2]) {
			continue
		}
		switch f.Tag {
		case "506", "520", "530", "540", "546":
			continue
		}
		for _, v := range f.Values("a") {
			add("description", v)
		}
	}
	// subject
	for _, f := range rec.Lookup("050", "060", "080", "082") {
		codes := "a"
		if f.Tag == "050" || f.Tag == "060" {
			codes = "ab"
		}
		add("subject", subfieldSelect(f, codes, " "))
	}
	subj := map[string]string{
		"600": "abcdefghjklmnopqrstu4",
		"610": "abcdefghklmnoprstu4",
		"611": "acdefghklnpqstu4",
		"630": "adfghklmnoprst",
		"650": "ae",
		"653": "a",
	}
	for _, f := range rec.Lookup("600", "610", "611", "630", "650", "653") {
		if f.Tag == "653" {
			for _, v := range f.Values("a") {
				add("subject", v)
			}
			continue
		}
		add("subject", heading(f, subj[f.Tag]))
	}
	// coverage
	for _, f := range rec.Lookup("651", "662", "752") {
		switch f.Tag {
		case "651":
			add("coverage", heading(f, "a"))
		case "662":
			add("coverage", subfieldSelect(f, "abcdefgh", " "))
		case "752":
			add("coverage", subfieldSelect(f, "abcdfgh", " "))
		}
	}
	// relation
	for _, f := range rec.Lookup("530") {
		add("relation", subfieldSelect(f, "abcdu", " "))
	}
	for i := range rec.Fields {
		f := &rec.Fields[i]
		switch f.Tag {
		case "760", "762", "765", "767", "770", "772", "773", "774", "775", "776", "777", "780", "785", "786", "787":
			add("relation", subfieldSelect(f, "ot", " "))
		}
	}
	// source
	for _, f := range rec.Lookup("534", "786") {
		codes := "t"
		if f.Tag == "786" {
			codes = "ot"
		}
		add("source", subfieldSelect(f, codes, " "))
	}
	// identifier
	for _, f := range rec.Lookup("856") {
		if v, ok := f.Subfield('u'); ok {
			addRaw("identifier", v)
		}
	}
	for _, f := range rec.Lookup("020") {
		if v, ok := f.Subfield('a'); ok && strings.TrimSpace(v) != "" {
			addRaw("identifier", "URN:ISBN:"+strings.TrimSpace(v))
		}
	}
	for _, f := range rec.Lookup("022", "024") {
		if v, ok := f.Subfield('a'); ok {
			addRaw("identifier", v)
		}
	}
	// rights
	for _, f := range rec.Lookup("506", "540") {
		for _, v := range f.Values("a") {
			add("rights", v)
		}
	}
	return out
}

// subfieldSelect joins the values of the subfields whose codes are in
// codes with sep, like the stylesheet template of the same name.
func subfieldSelect(f *Field, codes, sep string) string {
	return strings.Join(f.Values(codes), sep)
}

// heading builds a subject heading: the main subfields joined with spaces,
// then "--" and the $v$x$y$z subdivisions joined with "--".
func heading(f *Field, codes string) string {
	h := chopPunctuation(subfieldSelect(f, codes, " "))
	var subs []string
	for _, v := range f.Values("vxyz") {
		if v = chopPunctuation(strings.TrimSpace(v)); v != "" {
			subs = append(subs, v)
		}
	}
	if len(subs) > 0 {
		if h != "" {
			h += "--"
		}
		h += strings.Join(subs, "--")
	}
	return h
}

// nonControl joins all subfields except $0-$9 with spaces.
func nonControl(f *Field) string {
	var parts []string
	for _, s := range f.Subfields {
		if !isDigit(s.Code) {
			parts = append(parts, strings.TrimSpace(s.Value))
		}
	}
	return strings.Join(parts, " ")
}

// chopPunctuation removes trailing characters from ".:,;/ ", as the
// MARC21slimUtils.xsl template does.
func chopPunctuation(s string) string {
	return strings.TrimRight(s, ".:,;/ ")
}

func isYear(s string) bool {
	if len(s) != 4 || !isDigit(s[0]) {
		return false
	}
	for i := 0; i < 4; i++ {
		if !isDigit(s[i]) && s[i] != 'u' {
			return false
		}
	}
	return true
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
