package shelfmark

import (
	"slices"
	"strconv"
	"strings"
)

// Fielded search: a term may be restricted to one field of a work's or
// collection's record (title:moby, creator:"herman melville",
// subject:whal*, date:1850..1860). A record's document indexes those
// fields apart (SearchDoc.Creator, Subject, DateLo and DateHi) besides
// its title and body; a page's document has none of them, so a field term
// matches records only, and every term of a query, as always, must match
// in one document: creator:melville whale finds the records of Melville's
// works that mention whale. The restriction is part of the index's own
// expression (an FTS5 column filter, a tsquery weight), so a field term
// costs what a word costs.
//
// Dates are matched by tokens rather than numbers, so that a date range
// is found through the full-text index like a word, in the same bounded
// windows: a record dated lo..hi (years) holds the token of every
// millennium (m1), century (c18), decade (d185) and year (y1851) it
// touches (SearchDateTokens); a range searched for is cut into the fewest
// whole millennia, centuries, decades and years that cover it
// (SearchDateQuery), at most 64 tokens, any of which a record that
// overlaps the range holds. A record spanning more than SearchYearSpan
// years is not given the token of every year, nor one spanning more than
// ten times that every decade: it is found by the coarser units it
// touches, not by a year or decade searched for alone.

// The fields a search term may name (SearchTerm.Field).
const (
	SearchFieldTitle   = "title"
	SearchFieldCreator = "creator"
	SearchFieldSubject = "subject"
	SearchFieldDate    = "date"
)

// SearchFields returns the fields a term may name, in the order the help
// lists them.
func SearchFields() []string {
	return []string{SearchFieldTitle, SearchFieldCreator, SearchFieldSubject, SearchFieldDate}
}

// The years a record's dates and a date term may hold: the Common Era up
// to 9999 (a year outside it is not read as one).
const (
	MinSearchYear = 1
	MaxSearchYear = 9999
	// SearchYearSpan is the widest span of years whose every year a
	// record's date tokens name (ten times it, every decade).
	SearchYearSpan = 200
)

// searchFieldOf returns the field a word names before a colon (title:,
// in any case) and the rest of the word after it; for the name of one of
// facets (language:), the field SearchFieldFacet and the facet; ok is
// false for a word that names none, whose colon is text.
func searchFieldOf(word string, facets []string) (field, facet, rest string, ok bool) {
	name, rest, found := strings.Cut(word, ":")
	if !found {
		return "", "", "", false
	}
	name = strings.ToLower(name)
	switch {
	case slices.Contains(SearchFields(), name):
		return name, "", rest, true
	case slices.Contains(facets, name):
		return SearchFieldFacet, name, rest, true
	}
	return "", "", "", false
}

// ParseSearchYears reads the years of a date term: a year (1851), a
// range (1850..1860, or 1850-1860), or one open at either end (..1860,
// 1850..), within MinSearchYear and MaxSearchYear. A range given
// backwards is turned around.
func ParseSearchYears(s string) (lo, hi int, err error) {
	s = strings.TrimSpace(s)
	bad := Errorf(EINVALID, "date: takes a year or a range of years (1851, 1850..1860, ..1860 or 1850..), from %d to %d, not %q.",
		MinSearchYear, MaxSearchYear, clip(s, 40))
	from, to, isRange := strings.Cut(s, "..")
	if !isRange {
		if i := strings.IndexByte(s[min(1, len(s)):], '-'); i >= 0 {
			from, to, isRange = s[:i+1], s[i+2:], true
		}
	}
	year := func(v string, open int) (int, bool) {
		if v == "" && isRange {
			return open, true
		}
		n, err := strconv.Atoi(v)
		return n, err == nil && n >= MinSearchYear && n <= MaxSearchYear && v[0] != '+'
	}
	lo, ok1 := year(from, MinSearchYear)
	hi, ok2 := year(to, MaxSearchYear)
	if !isRange {
		hi, ok2 = lo, ok1
	}
	if !ok1 || !ok2 || from == "" && to == "" {
		return 0, 0, bad
	}
	if lo > hi {
		lo, hi = hi, lo
	}
	return lo, hi, nil
}

// FormatSearchYears writes the years lo..hi as a date term's text
// ParseSearchYears reads back: 1851 for one year, else 1850..1860.
func FormatSearchYears(lo, hi int) string {
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return strconv.Itoa(lo) + ".." + strconv.Itoa(hi)
}

// searchDateUnits are the units of date tokens, widest first, with the
// letter that begins their tokens.
var searchDateUnits = []struct {
	size   int
	letter byte
}{{1000, 'm'}, {100, 'c'}, {10, 'd'}, {1, 'y'}}

// dateToken is the token of the unit of size that holds year.
func dateToken(letter byte, size, year int) string {
	return string(letter) + strconv.Itoa(year/size)
}

// SearchDateTokens returns the tokens a record dated lo..hi is indexed
// under, separated by spaces: every millennium, century, decade and year
// the span touches, but years only for a span of at most SearchYearSpan
// years and decades only for one of at most ten times that. Empty for an
// undated record (lo 0).
func SearchDateTokens(lo, hi int) string {
	if lo < MinSearchYear || hi < lo || hi > MaxSearchYear {
		return ""
	}
	var b strings.Builder
	for _, u := range searchDateUnits {
		if u.size == 1 && hi-lo >= SearchYearSpan || u.size == 10 && hi-lo >= 10*SearchYearSpan {
			continue
		}
		for n := lo / u.size; n <= hi/u.size; n++ {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(dateToken(u.letter, u.size, n*u.size))
		}
	}
	return b.String()
}

// SearchDateQuery returns the tokens any of which a record whose dates
// overlap lo..hi holds (SearchDateTokens): the range cut, from its
// beginning, into the widest whole units that fit, at most 64.
func SearchDateQuery(lo, hi int) []string {
	var out []string
	for y := lo; y <= hi; {
		for _, u := range searchDateUnits {
			if y%u.size == 0 && y+u.size-1 <= hi || u.size == 1 {
				out = append(out, dateToken(u.letter, u.size, y))
				y += u.size
				break
			}
		}
	}
	return out
}

// recordYears returns the span of the years a record's date values name:
// every run of four digits standing alone (1851, 1851-03-04, c. 1850,
// 1850/1860), a trailing X or u standing for any digit (185X: 1850..1859;
// 18XX), a decade written 1850s; not a year after a leading minus (before
// the Common Era), nor five digits or more. ok is false when no value
// names a year.
func recordYears(values []string) (lo, hi int, ok bool) {
	for _, v := range values {
		for i := 0; i+4 <= len(v); i++ {
			if i > 0 && isASCIIAlnum(v[i-1]) || !isDigit(v[i]) {
				continue
			}
			if i == 1 && v[0] == '-' || i > 1 && v[i-1] == '-' && !isASCIIAlnum(v[i-2]) {
				continue // before the Common Era
			}
			var a, b int
			good := true
			for _, c := range []byte(v[i : i+4]) {
				switch {
				case isDigit(c):
					a, b = a*10+int(c-'0'), b*10+int(c-'0')
				case c == 'X' || c == 'x' || c == 'u':
					a, b = a*10, b*10+9
				default:
					good = false
				}
			}
			end := i + 4
			if good && end < len(v) && v[end] == 's' && a%10 == 0 && a == b {
				b, end = a+9, end+1 // 1850s
			}
			if !good || end < len(v) && isASCIIAlnum(v[end]) || a < MinSearchYear {
				continue
			}
			if !ok || a < lo {
				lo = a
			}
			if !ok || b > hi {
				hi = b
			}
			ok = true
			i = end - 1
		}
	}
	return lo, hi, ok
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isASCIIAlnum(c byte) bool {
	return isDigit(c) || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// Years returns the span of a date term (Field SearchFieldDate), whose
// Text the parser wrote with FormatSearchYears; 0, 0 for another term.
func (t SearchTerm) Years() (lo, hi int) {
	if t.Field != SearchFieldDate {
		return 0, 0
	}
	lo, hi, err := ParseSearchYears(t.Text)
	if err != nil {
		return 0, 0
	}
	return lo, hi
}

// SearchRecordsOnly reports whether only records can match terms: when
// one of the groups they must match (SearchGroups) is made of field terms
// alone, since a page's document has no field. Such a query matches at
// most one document of a work, its record.
func SearchRecordsOnly(terms []SearchTerm) bool {
	groups, _ := SearchGroups(terms)
	for _, g := range groups {
		if !slices.ContainsFunc(g, func(t SearchTerm) bool { return t.Field == "" }) {
			return true
		}
	}
	return false
}

// searchFieldError is the EINVALID of a field with no term after it.
func searchFieldError(field string) error {
	return Errorf(EINVALID, "%s: needs a word or a \"phrase\" after it (%s:whales); the fields are %s.",
		field, field, strings.Join(SearchFields(), ":, ")+":")
}
