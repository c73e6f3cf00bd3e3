package shelfmark

import (
	"strings"
)

// Sorting by title within a window (SearchSortTitle) compares numbers, as
// every order of the search statements does (SearchCursor.Score): a
// record's title is turned into a whole number whose order is the order
// of the title's first SearchTitleKeyChars letters and digits, folded
// (case and diacritics) and without a leading English article (the, a,
// an), as a catalogue files them. Each character is a digit of base 38:
// 0 a run of spaces and punctuation, 1–10 the digits, 11–36 a to z, 37 any
// other letter (Greek, Cyrillic, CJK: after z, in the order of their keys).
// 38^10 is below 2^53, so the number is exact in a float64 and a cursor
// compares it exactly. Titles alike in their first ten characters come
// in key order.

// SearchTitleKeyChars is how many characters of a title its sort key
// orders by.
const SearchTitleKeyChars = 10

// SearchUntitled is the Score of a hit whose work has no title under
// SearchSortTitle, below every title's.
const SearchUntitled = -1e16

// SearchTitleKey returns the sort key of a title (see above); ok is false
// for a title without a letter or a digit.
func SearchTitleKey(title string) (key int64, ok bool) {
	s := SearchFold(strings.TrimSpace(title))
	for _, art := range []string{"the ", "a ", "an "} {
		if rest, found := strings.CutPrefix(s, art); found && strings.TrimSpace(rest) != "" {
			s = rest
			break
		}
	}
	var digits []int64
	gap := false
	for _, r := range s {
		if len(digits) == SearchTitleKeyChars {
			break
		}
		var d int64
		switch {
		case r >= '0' && r <= '9':
			d = 1 + int64(r-'0')
		case r >= 'a' && r <= 'z':
			d = 11 + int64(r-'a')
		case isWordRune(r):
			d = 37
		default:
			gap = len(digits) > 0 // a run of anything else is one space, none at the start
			continue
		}
		if gap && len(digits) < SearchTitleKeyChars {
			digits = append(digits, 0)
		}
		gap = false
		if len(digits) < SearchTitleKeyChars {
			digits = append(digits, d)
		}
	}
	if len(digits) == 0 {
		return 0, false
	}
	for len(digits) < SearchTitleKeyChars {
		digits = append(digits, 0)
	}
	for _, d := range digits {
		key = key*38 + d
	}
	return key, true
}
