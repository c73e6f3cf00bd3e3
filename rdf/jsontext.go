package rdf

// LoneSurrogate returns the offset of the first \u escape in the JSON text
// src that names half of a UTF-16 surrogate pair without its other half
// (encoding/json silently decodes one as U+FFFD), or -1 when there is none.
// Escapes are only looked for where a backslash begins one, so an escaped
// backslash followed by "ud800" is not taken for one.
func LoneSurrogate(src []byte) int {
	for i := 0; i < len(src); i++ {
		if src[i] != '\\' {
			continue
		}
		if i+1 < len(src) && src[i+1] != 'u' {
			i++ // a two-character escape such as \\ or \"
			continue
		}
		r, ok := hex4(src, i)
		if !ok {
			continue // not an escape encoding/json accepts: its own error
		}
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if low, ok := hex4(src, i+6); !ok || low < 0xDC00 || low > 0xDFFF {
				return i
			}
			i += 11
		case r >= 0xDC00 && r <= 0xDFFF:
			return i
		default:
			i += 5
		}
	}
	return -1
}

// hex4 reads the escape \uXXXX at src[i:].
func hex4(src []byte, i int) (rune, bool) {
	if i+6 > len(src) || src[i] != '\\' || src[i+1] != 'u' {
		return 0, false
	}
	var r rune
	for _, c := range src[i+2 : i+6] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// CheckJSONText refuses a JSON document that is not valid UTF-8 or holds
// a lone surrogate escape, naming the position: encoding/json would store
// U+FFFD in place of either.
func CheckJSONText(mediaType string, src []byte) error {
	if err := checkUTF8(mediaType, src); err != nil {
		return err
	}
	if off := LoneSurrogate(src); off >= 0 {
		line, col := position(src, off)
		return positionError(mediaType, line, col, "%s is half of a UTF-16 surrogate pair, which is no character", src[off:off+6])
	}
	return nil
}
