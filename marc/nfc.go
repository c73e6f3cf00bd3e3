package marc

import (
	"sort"
	"unicode/utf8"
)

// canonDecomp is one canonical decomposition mapping: r decomposes to
// first (and second, when non-zero). excluded marks full composition
// exclusions.
type canonDecomp struct {
	r, first, second rune
	excluded         bool
}

// canonComposition maps a canonical pair to its primary composite.
type canonComposition struct {
	first, second, composite rune
}

// cccRange gives the canonical combining class of lo..hi.
type cccRange struct {
	lo, hi rune
	ccc    uint8
}

const (
	hangulSBase  = 0xAC00
	hangulLBase  = 0x1100
	hangulVBase  = 0x1161
	hangulTBase  = 0x11A7
	hangulLCount = 19
	hangulVCount = 21
	hangulTCount = 28
	hangulNCount = hangulVCount * hangulTCount
	hangulSCount = hangulLCount * hangulNCount
)

// combiningClass returns the canonical combining class of r.
func combiningClass(r rune) uint8 {
	if r < 0x300 {
		return 0
	}
	i := sort.Search(len(cccRanges), func(i int) bool { return cccRanges[i].hi >= r })
	if i < len(cccRanges) && cccRanges[i].lo <= r {
		return cccRanges[i].ccc
	}
	return 0
}

// appendDecomposed appends the full canonical decomposition of r.
func appendDecomposed(dst []rune, r rune) []rune {
	if r < 0xC0 {
		return append(dst, r)
	}
	if s := r - hangulSBase; s >= 0 && s < hangulSCount {
		dst = append(dst, hangulLBase+s/hangulNCount, hangulVBase+(s%hangulNCount)/hangulTCount)
		if t := s % hangulTCount; t != 0 {
			dst = append(dst, hangulTBase+t)
		}
		return dst
	}
	i := sort.Search(len(canonDecomps), func(i int) bool { return canonDecomps[i].r >= r })
	if i < len(canonDecomps) && canonDecomps[i].r == r {
		d := canonDecomps[i]
		dst = appendDecomposed(dst, d.first)
		if d.second != 0 {
			dst = appendDecomposed(dst, d.second)
		}
		return dst
	}
	return append(dst, r)
}

// compose returns the primary composite of a and b, if any.
func compose(a, b rune) (rune, bool) {
	if l := a - hangulLBase; l >= 0 && l < hangulLCount {
		if v := b - hangulVBase; v >= 0 && v < hangulVCount {
			return hangulSBase + (l*hangulVCount+v)*hangulTCount, true
		}
		return 0, false
	}
	if s := a - hangulSBase; s >= 0 && s < hangulSCount && s%hangulTCount == 0 {
		if t := b - hangulTBase; t > 0 && t < hangulTCount {
			return a + t, true
		}
		return 0, false
	}
	i := sort.Search(len(canonCompositions), func(i int) bool {
		c := canonCompositions[i]
		return c.first > a || (c.first == a && c.second >= b)
	})
	if i < len(canonCompositions) && canonCompositions[i].first == a && canonCompositions[i].second == b {
		return canonCompositions[i].composite, true
	}
	return 0, false
}

// normalizeNFC returns s in Unicode Normalization Form C. Invalid UTF-8 is
// treated as U+FFFD.
func normalizeNFC(s string) string {
	quick := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0xCC { // first byte of U+0300 and above
			quick = false
			break
		}
	}
	if quick {
		return s
	}
	runes := make([]rune, 0, len(s))
	for _, r := range s {
		runes = appendDecomposed(runes, r)
	}
	// Canonical ordering: stable sort of each run of non-starters by class.
	for i := 0; i < len(runes); {
		if combiningClass(runes[i]) == 0 {
			i++
			continue
		}
		j := i + 1
		for j < len(runes) && combiningClass(runes[j]) != 0 {
			j++
		}
		if j-i > 1 {
			run := runes[i:j]
			sort.SliceStable(run, func(a, b int) bool { return combiningClass(run[a]) < combiningClass(run[b]) })
		}
		i = j
	}
	// Canonical composition.
	if len(runes) > 0 {
		starter := -1
		var last uint8
		if combiningClass(runes[0]) == 0 {
			starter = 0
		} else {
			last = 255
		}
		out := 1
		for i := 1; i < len(runes); i++ {
			r := runes[i]
			c := combiningClass(r)
			if starter >= 0 && (last < c || (last == 0 && out == starter+1)) {
				if comp, ok := compose(runes[starter], r); ok {
					runes[starter] = comp
					continue
				}
			}
			if c == 0 {
				starter = out
			}
			last = c
			runes[out] = r
			out++
		}
		runes = runes[:out]
	}
	b := make([]byte, 0, len(s))
	for _, r := range runes {
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}
