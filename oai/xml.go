package oai

import (
	"time"
	"unicode/utf8"
)

// appendEscaped appends s to dst escaped for XML character data and
// attribute values. Characters XML 1.0 does not allow (control characters
// other than tab, newline and carriage return, lone surrogates, U+FFFE and
// U+FFFF) and invalid UTF-8 are dropped: a record must never make a
// response that is not well-formed.
func appendEscaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == '&':
				dst = append(dst, "&amp;"...)
			case c == '<':
				dst = append(dst, "&lt;"...)
			case c == '>':
				dst = append(dst, "&gt;"...)
			case c == '"':
				dst = append(dst, "&quot;"...)
			case c == '\'':
				dst = append(dst, "&apos;"...)
			case c == '\r':
				dst = append(dst, "&#13;"...)
			case c == '\t' || c == '\n' || c >= 0x20:
				dst = append(dst, c)
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == 0xFFFE || r == 0xFFFF {
			i += size
			continue
		}
		dst = append(dst, s[i:i+size]...)
		i += size
	}
	return dst
}

// datestampLayout is the second granularity Identify declares.
const datestampLayout = "2006-01-02T15:04:05Z"

// appendDatestamp appends t in UTC at second granularity.
func appendDatestamp(dst []byte, t time.Time) []byte {
	return t.UTC().AppendFormat(dst, datestampLayout)
}
