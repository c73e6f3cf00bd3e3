package kit

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// MaxRanges is the most ranges one request may ask for once overlapping
// and adjacent ranges are merged; beyond it the whole representation is
// sent (200), as RFC 9110 (section 14.2) allows a server facing many small
// ranges to do.
const MaxRanges = 32

// byteRange is the range [start, end] of a representation, inclusive.
type byteRange struct{ start, end int64 }

// NormalizeRange rewrites the Range header of r, before http.ServeContent
// reads it, for a representation of size bytes:
//
//   - a Range that is not a valid bytes ranges-specifier (RFC 9110,
//     section 14.1.1), or that names another unit, is removed: the whole
//     representation is sent, as RFC 9110 asks, instead of a 416;
//   - the satisfiable ranges are sorted, overlapping and adjacent ones
//     merged, and written back as absolute first-last pairs; more than
//     MaxRanges of them remove the header (200 with everything);
//   - a well-formed set of which no range is satisfiable becomes
//     "bytes=<size>-", which ServeContent answers 416 with Content-Range
//     "bytes */<size>" (unless If-Range sends the whole representation).
func NormalizeRange(r *http.Request, size int64) {
	v := r.Header.Get("Range")
	if v == "" {
		return
	}
	ranges, ok := parseRanges(v, size)
	switch {
	case !ok:
		r.Header.Del("Range")
	case len(ranges) == 0:
		r.Header.Set("Range", "bytes="+strconv.FormatInt(size, 10)+"-")
	case len(ranges) > MaxRanges:
		r.Header.Del("Range")
	default:
		var b strings.Builder
		b.WriteString("bytes=")
		for i, br := range ranges {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatInt(br.start, 10))
			b.WriteByte('-')
			b.WriteString(strconv.FormatInt(br.end, 10))
		}
		r.Header.Set("Range", b.String())
	}
}

// parseRanges parses a Range field value against a representation of size
// bytes. It returns the satisfiable ranges, clipped to the representation,
// sorted and merged where they overlap or touch, and whether v is a
// well-formed bytes ranges-specifier (the unit is case-insensitive; list
// elements may be empty and surrounded by spaces or tabs).
func parseRanges(v string, size int64) ([]byteRange, bool) {
	unit, set, found := strings.Cut(v, "=")
	if !found || !strings.EqualFold(strings.Trim(unit, " \t"), "bytes") {
		return nil, false
	}
	var out []byteRange
	elements := 0
	for spec := range strings.SplitSeq(set, ",") {
		spec = strings.Trim(spec, " \t")
		if spec == "" {
			continue
		}
		elements++
		first, last, found := strings.Cut(spec, "-")
		if !found {
			return nil, false
		}
		if first == "" { // suffix-range: the last n bytes
			n, ok := digits(last)
			if !ok {
				return nil, false
			}
			if n > 0 && size > 0 {
				out = append(out, byteRange{max(0, size-n), size - 1})
			}
			continue
		}
		start, ok := digits(first)
		if !ok {
			return nil, false
		}
		end := int64(-1)
		if last != "" {
			if end, ok = digits(last); !ok || end < start {
				return nil, false
			}
		}
		if start >= size {
			continue // unsatisfiable, but well-formed
		}
		if end < 0 || end >= size {
			end = size - 1
		}
		out = append(out, byteRange{start, end})
	}
	if elements == 0 {
		return nil, false
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	merged := out[:0]
	for _, br := range out {
		if n := len(merged); n > 0 && br.start <= merged[n-1].end+1 {
			merged[n-1].end = max(merged[n-1].end, br.end)
			continue
		}
		merged = append(merged, br)
	}
	return merged, true
}

// digits parses a non-empty run of decimal digits, saturating at the
// largest int64 instead of failing, since a position past the end is
// well-formed (and unsatisfiable, or clipped).
func digits(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if n > (1<<63-1-9)/10 {
			n = 1<<63 - 1
			continue
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}
