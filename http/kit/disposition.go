package kit

import "strings"

// ContentDisposition is the Content-Disposition of a file's content, as RFC
// 6266 advises: the exact name in filename* (UTF-8, percent-encoded as RFC
// 8187 says, so that no quote, semicolon or byte outside ASCII reaches the
// header), preceded by an ASCII approximation in filename= for clients
// that do not read filename* (characters outside printable ASCII, quotes,
// backslashes and percent signs replaced by "_").
//
// Content a browser would run (HTML, SVG, XML, scripts) is sent as an
// attachment, so that a deposited page never runs on the repository's
// origin (the sandbox policy sent with it is the second guard).
func ContentDisposition(name, mediaType string) string {
	var b strings.Builder
	b.Grow(len(`attachment; filename=""; filename*=UTF-8''`) + 4*len(name))
	if ActiveContent(mediaType) {
		b.WriteString(`attachment; filename="`)
	} else {
		b.WriteString(`inline; filename="`)
	}
	for _, c := range name {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '%' {
			c = '_'
		}
		b.WriteRune(c)
	}
	b.WriteString(`"; filename*=UTF-8''`)
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(name); i++ {
		c := name[i]
		if isAttrChar(c) {
			b.WriteByte(c)
		} else {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// isAttrChar reports whether c may stand for itself in an RFC 8187
// ext-value (attr-char).
func isAttrChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$&+-.^_`|~", c) >= 0
}
