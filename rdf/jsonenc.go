package rdf

import (
	"unicode/utf8"

	"github.com/shelfmark/shelfmark"
)

// hexDigits are the digits of \u escapes.
const hexDigits = "0123456789ABCDEF"

// appendJSONString appends s as a JSON string. Control characters, U+2028
// and U+2029 are escaped, and invalid UTF-8 becomes U+FFFD.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += n
			start = i
			continue
		}
		i += n
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendJSONValue appends the JSON form of a term: a string for a plain
// literal, {"@value", "@language"} or {"@value", "@type"} for a tagged or
// typed literal (the datatype compacted with a known prefix), and
// {"@id"} with the full IRI for an IRI.
func appendJSONValue(dst []byte, t shelfmark.Term) []byte {
	switch {
	case t.Kind == shelfmark.IRI:
		dst = append(dst, `{"@id":`...)
		dst = appendJSONString(dst, t.Value)
		return append(dst, '}')
	case t.Lang != "":
		dst = append(dst, `{"@value":`...)
		dst = appendJSONString(dst, t.Value)
		dst = append(dst, `,"@language":`...)
		dst = appendJSONString(dst, t.Lang)
		return append(dst, '}')
	case t.Datatype != "":
		dst = append(dst, `{"@value":`...)
		dst = appendJSONString(dst, t.Value)
		dst = append(dst, `,"@type":`...)
		dst = appendJSONString(dst, Compact(t.Datatype))
		return append(dst, '}')
	}
	return appendJSONString(dst, t.Value)
}

// appendJSONProperties appends one member per predicate of stmts, keyed by
// the compacted predicate, in order of first appearance; a predicate with
// several values gets an array. afterMember tells whether the enclosing
// object already has members (then a ',' comes first). It closes the
// object.
func appendJSONProperties(dst []byte, stmts []shelfmark.Statement, afterMember bool) []byte {
	order := groupByPredicate(stmts)
	for i := 0; i < len(order); {
		pred := stmts[order[i]].Predicate
		j := i + 1
		for j < len(order) && stmts[order[j]].Predicate == pred {
			j++
		}
		if afterMember {
			dst = append(dst, ',')
		}
		afterMember = true
		dst = appendJSONString(dst, Compact(pred))
		dst = append(dst, ':')
		if j-i == 1 {
			dst = appendJSONValue(dst, stmts[order[i]].Object)
		} else {
			dst = append(dst, '[')
			for k := i; k < j; k++ {
				if k > i {
					dst = append(dst, ',')
				}
				dst = appendJSONValue(dst, stmts[order[k]].Object)
			}
			dst = append(dst, ']')
		}
		i = j
	}
	return append(dst, '}')
}

// groupByPredicate returns the indices of stmts ordered so that statements
// with the same predicate are adjacent, predicates in order of first
// appearance and values in their original order.
func groupByPredicate(stmts []shelfmark.Statement) []int {
	order := make([]int, 0, len(stmts))
	if len(stmts) <= 64 {
		var done uint64
		for i := range stmts {
			if done&(1<<i) != 0 {
				continue
			}
			p := stmts[i].Predicate
			for j := i; j < len(stmts); j++ {
				if done&(1<<j) == 0 && stmts[j].Predicate == p {
					done |= 1 << j
					order = append(order, j)
				}
			}
		}
		return order
	}
	group := make(map[string]int)
	gid := make([]int, len(stmts))
	var count []int
	for i, st := range stmts {
		g, ok := group[st.Predicate]
		if !ok {
			g = len(count)
			group[st.Predicate] = g
			count = append(count, 0)
		}
		gid[i] = g
		count[g]++
	}
	next := make([]int, len(count))
	for g := 1; g < len(count); g++ {
		next[g] = next[g-1] + count[g-1]
	}
	order = order[:len(stmts)]
	for i, g := range gid {
		order[next[g]] = i
		next[g]++
	}
	return order
}
