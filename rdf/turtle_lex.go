package rdf

import (
	"strings"
	"unicode/utf8"

	"github.com/shelfmark/shelfmark"
)

// The terms of the Turtle reader: IRIs, escapes, strings, numbers, prefixed
// names and the character classes of the grammar.

// iriRef reads an IRI in < >, unescapes it, resolves it against the base
// and checks that it is absolute.
func (p *turtleReader) iriRef() (string, error) {
	start := p.pos
	p.pos++
	seg := p.pos
	buf := p.buf[:0]
	escaped := false
	for {
		if p.pos >= len(p.src) {
			return "", p.errAt(start, "the IRI is not closed with '>'")
		}
		c := p.src[p.pos]
		switch {
		case c == '>':
			var iri string
			if escaped {
				buf = append(buf, p.src[seg:p.pos]...)
				iri = string(buf)
				p.buf = buf
			} else {
				iri = string(p.src[seg:p.pos])
			}
			p.pos++
			// The scan below and the checks of escapes leave no character
			// IRIs may not contain, and resolution against a checked
			// base adds none.
			iri = resolveIRI(p.base, iri)
			if !isAbsoluteIRI(iri) {
				return "", p.errAt(start, "the IRI <%s> is relative and there is no base IRI to resolve it against", iri)
			}
			if barePercent(iri) {
				return "", p.errAt(start, "the IRI <%s> has a %% that does not start a percent-encoded octet (write %%25 for a percent sign)", iri)
			}
			return iri, nil
		case c == '\\':
			buf = append(buf, p.src[seg:p.pos]...)
			escAt := p.pos
			r, err := p.escape(false)
			if err != nil {
				return "", err
			}
			if badIRIChar(string(r)) >= 0 {
				return "", p.errAt(escAt, "the escape stands for %q, which IRIs may not contain", r)
			}
			buf = utf8.AppendRune(buf, r)
			escaped = true
			seg = p.pos
		case isBadIRIByte(c): // '>' and '\\' were handled above
			return "", p.errAt(p.pos, "the character %q is not allowed in an IRI", rune(c))
		case c == 0xC2 && p.pos+1 < len(p.src) && p.src[p.pos+1] >= 0x80 && p.src[p.pos+1] <= 0x9F:
			return "", p.errAt(p.pos, "the control character %q is not allowed in an IRI", rune(p.src[p.pos+1]))
		default:
			p.pos++
		}
	}
}

// escape reads an escape sequence at the current '\': \uXXXX and
// \UXXXXXXXX always, and \t \b \n \r \f \" \' \\ when inString.
func (p *turtleReader) escape(inString bool) (rune, error) {
	start := p.pos
	if start+1 >= len(p.src) {
		return 0, p.errAt(start, "the escape sequence is not complete")
	}
	var r rune
	switch c := p.src[start+1]; c {
	case 'u', 'U':
		n := 4
		if c == 'U' {
			n = 8
		}
		if start+2+n > len(p.src) {
			return 0, p.errAt(start, "\\%c needs %d hexadecimal digits", c, n)
		}
		for _, h := range p.src[start+2 : start+2+n] {
			d, ok := hexValue(h)
			if !ok {
				return 0, p.errAt(start, "\\%c needs %d hexadecimal digits", c, n)
			}
			r = r<<4 | rune(d)
		}
		if r > utf8.MaxRune || r >= 0xD800 && r <= 0xDFFF {
			return 0, p.errAt(start, "the escape %s is not a Unicode character", p.src[start:start+2+n])
		}
		p.pos = start + 2 + n
		return r, nil
	case 't', 'b', 'n', 'r', 'f', '"', '\'', '\\':
		if !inString {
			return 0, p.errAt(start, "only \\u and \\U escapes are allowed in an IRI")
		}
		p.pos = start + 2
		return rune(echar(c)), nil
	}
	r, _ = utf8.DecodeRune(p.src[start+1:])
	return 0, p.errAt(start, "\\%c is not an escape sequence", r)
}

// echar returns the character an escape \c stands for.
func echar(c byte) byte {
	switch c {
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 'f':
		return '\f'
	}
	return c
}

// hexValue returns the value of a hexadecimal digit.
func hexValue(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// rdfLiteral reads a quoted string with an optional language tag or
// datatype.
func (p *turtleReader) rdfLiteral() (shelfmark.Term, error) {
	value, err := p.quotedString()
	if err != nil {
		return shelfmark.Term{}, err
	}
	// White space may separate the string from its tag or datatype.
	save := p.pos
	p.skipWS()
	switch {
	case p.at('@'):
		start := p.pos
		p.pos++
		tag := p.langTag()
		if tag == "" {
			return shelfmark.Term{}, p.errAt(start, "expected a language tag after '@'")
		}
		return shelfmark.NewLangLiteral(value, tag), nil
	case p.at('^') && p.pos+1 < len(p.src) && p.src[p.pos+1] == '^':
		p.pos += 2
		p.skipWS()
		start := p.pos
		var datatype string
		if p.at('<') {
			datatype, err = p.iriRef()
		} else {
			var word string
			datatype, word, err = p.name()
			if err == nil && word != "" {
				err = p.errAt(start, "expected a datatype IRI after '^^', found %q", word)
			}
		}
		if err != nil {
			return shelfmark.Term{}, err
		}
		term, reason := newLiteral(value, "", datatype)
		if reason != "" {
			return shelfmark.Term{}, p.errAt(start, "%s", reason)
		}
		return term, nil
	}
	p.pos = save
	return shelfmark.NewLiteral(value), nil
}

// langTag reads [a-zA-Z]+ ('-' [a-zA-Z0-9]+)* and returns it in lower case,
// or "" when there is none.
func (p *turtleReader) langTag() string {
	start, i := p.pos, p.pos
	for i < len(p.src) && isASCIILetter(p.src[i]) {
		i++
	}
	if i == start {
		return ""
	}
	for i+1 < len(p.src) && p.src[i] == '-' && isASCIIAlnum(p.src[i+1]) {
		i++
		for i < len(p.src) && isASCIIAlnum(p.src[i]) {
			i++
		}
	}
	p.pos = i
	return strings.ToLower(string(p.src[start:i]))
}

// isASCIILetter reports whether c is an ASCII letter.
func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// isASCIIAlnum reports whether c is an ASCII letter or digit.
func isASCIIAlnum(c byte) bool { return isASCIILetter(c) || c >= '0' && c <= '9' }

// quotedString reads a string in single or double quotes, short or tripled
// (long strings may span lines), and returns its unescaped value.
func (p *turtleReader) quotedString() (string, error) {
	start := p.pos
	q := p.src[start]
	long := start+2 < len(p.src) && p.src[start+1] == q && p.src[start+2] == q
	if long {
		p.pos += 3
	} else {
		p.pos++
	}
	seg := p.pos
	buf := p.buf[:0]
	escaped := false
	for {
		if p.pos >= len(p.src) {
			return "", p.errAt(start, "the string is not closed")
		}
		switch c := p.src[p.pos]; {
		case c == q && (!long || p.pos+2 < len(p.src) && p.src[p.pos+1] == q && p.src[p.pos+2] == q):
			var s string
			if escaped {
				buf = append(buf, p.src[seg:p.pos]...)
				s = string(buf)
				p.buf = buf
			} else {
				s = string(p.src[seg:p.pos])
			}
			if long {
				p.pos += 3
			} else {
				p.pos++
			}
			return s, nil
		case c == '\\':
			buf = append(buf, p.src[seg:p.pos]...)
			r, err := p.escape(true)
			if err != nil {
				return "", err
			}
			buf = utf8.AppendRune(buf, r)
			escaped = true
			seg = p.pos
		case !long && (c == '\n' || c == '\r'):
			return "", p.errAt(p.pos, `a string in single quotes cannot span lines; use """ quotes or the escape \n`)
		default:
			p.pos++
		}
	}
}

// number reads an integer, decimal or double and returns it with its
// lexical form as written.
func (p *turtleReader) number() (shelfmark.Term, error) {
	start, i := p.pos, p.pos
	if p.src[i] == '+' || p.src[i] == '-' {
		i++
	}
	intStart := i
	i = skipDigits(p.src, i)
	intDigits := i - intStart
	datatype := xsdInteger
	if i < len(p.src) && p.src[i] == '.' {
		if j := skipDigits(p.src, i+1); j > i+1 {
			i, datatype = j, xsdDecimal
		} else if intDigits > 0 && exponentLen(p.src, i+1) > 0 {
			i++ // "1.e5": the '.' belongs to the double
		}
	}
	if intDigits == 0 && datatype == xsdInteger {
		return shelfmark.Term{}, p.errAt(start, "expected an object, found %s", p.found(start))
	}
	if n := exponentLen(p.src, i); n > 0 {
		i, datatype = i+n, xsdDouble
	}
	p.pos = i
	return shelfmark.NewTypedLiteral(string(p.src[start:i]), datatype), nil
}

// skipDigits returns the offset after the ASCII digits at b[i:].
func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// exponentLen returns the length of an exponent ([eE] [+-]? [0-9]+) at
// b[i:], or 0.
func exponentLen(b []byte, i int) int {
	if i >= len(b) || b[i] != 'e' && b[i] != 'E' {
		return 0
	}
	j := i + 1
	if j < len(b) && (b[j] == '+' || b[j] == '-') {
		j++
	}
	k := skipDigits(b, j)
	if k == j {
		return 0
	}
	return k - i
}

// scanPrefix returns the end of the PN_PREFIX at the current position (the
// current position itself when there is none), without a trailing '.'.
func (p *turtleReader) scanPrefix() int {
	i := p.pos
	r, n := utf8.DecodeRune(p.src[i:])
	if i >= len(p.src) || !isPNCharsBase(r) {
		return i
	}
	i += n
	end := i
	for i < len(p.src) {
		if c := p.src[i]; c < utf8.RuneSelf {
			if !isASCIIAlnum(c) && c != '_' && c != '-' && c != '.' {
				break
			}
			i++
			if c != '.' {
				end = i
			}
			continue
		}
		r, n = utf8.DecodeRune(p.src[i:])
		if !isPNChars(r) {
			break
		}
		i += n
		end = i
	}
	return end
}

// name reads a prefixed name and returns its IRI, or a bare word (such as
// the keywords a, true and false) when no ':' follows it.
func (p *turtleReader) name() (iri, word string, err error) {
	start := p.pos
	end := p.scanPrefix()
	if end >= len(p.src) || p.src[end] != ':' {
		if end == start {
			return "", "", p.errAt(start, "expected an IRI, a prefixed name or a literal, found %s", p.found(start))
		}
		p.pos = end
		return "", string(p.src[start:end]), nil
	}
	localStart := end + 1
	p.pos = localStart
	localEnd, escaped, err := p.scanLocalName()
	if err != nil {
		return "", "", err
	}
	p.pos = localEnd
	// Names repeat (every dcterms:subject of a record); expanding each
	// once saves an allocation per use.
	if iri, ok := p.names[string(p.src[start:localEnd])]; ok {
		return iri, "", nil
	}
	ns, ok := p.prefixes[string(p.src[start:end])]
	if !ok {
		prefix := string(p.src[start:end])
		if known := namespaceOf(prefix); known != "" {
			return "", "", p.errAt(start, "the prefix %q is not declared; add @prefix %s: <%s> .", prefix, prefix, known)
		}
		return "", "", p.errAt(start, "the prefix %q is not declared", prefix)
	}
	// The namespace was checked when declared, and PN_LOCAL admits no
	// character that IRIs may not contain.
	local := p.src[localStart:localEnd]
	if escaped {
		b := make([]byte, 0, len(local))
		for j := 0; j < len(local); j++ {
			if local[j] == '\\' {
				j++
			}
			b = append(b, local[j])
		}
		local = b
	}
	iri = ns + string(local)
	if p.names == nil {
		p.names = make(map[string]string)
	}
	p.names[string(p.src[start:localEnd])] = iri
	return iri, "", nil
}

// scanLocalName scans the PN_LOCAL part of a prefixed name (possibly
// empty) and returns its end and whether it has \-escapes.
func (p *turtleReader) scanLocalName() (end int, escaped bool, err error) {
	start, i := p.pos, p.pos
	end = start
scan:
	for i < len(p.src) {
		switch c := p.src[i]; {
		case c == '%':
			if i+2 >= len(p.src) {
				return 0, false, p.errAt(i, "'%%' in a name needs two hexadecimal digits")
			}
			_, ok1 := hexValue(p.src[i+1])
			_, ok2 := hexValue(p.src[i+2])
			if !ok1 || !ok2 {
				return 0, false, p.errAt(i, "'%%' in a name needs two hexadecimal digits")
			}
			i += 3
			end = i
		case c == '\\':
			if i+1 >= len(p.src) || !strings.ContainsRune("_~.-!$&'()*+,;=/?#@%", rune(p.src[i+1])) {
				return 0, false, p.errAt(i, "this character cannot be escaped with '\\' in a name")
			}
			escaped = true
			i += 2
			end = i
		case c == ':':
			i++
			end = i
		case c == '.':
			if i == start {
				break scan
			}
			i++
		case isASCIIAlnum(c) || c == '_':
			i++
			end = i
		case c == '-':
			if i == start {
				break scan
			}
			i++
			end = i
		case c < utf8.RuneSelf:
			break scan
		default:
			r, n := utf8.DecodeRune(p.src[i:])
			if i == start && !isPNCharsU(r) || i > start && !isPNChars(r) {
				break scan
			}
			i += n
			end = i
		}
	}
	return end, escaped, nil
}

// isPNCharsBase reports whether r is a PN_CHARS_BASE of the grammar.
func isPNCharsBase(r rune) bool {
	switch {
	case r >= 'A' && r <= 'Z', r >= 'a' && r <= 'z':
		return true
	case r < 0xC0:
		return false
	case r <= 0xD6, r >= 0xD8 && r <= 0xF6, r >= 0xF8 && r <= 0x2FF,
		r >= 0x370 && r <= 0x37D, r >= 0x37F && r <= 0x1FFF, r >= 0x200C && r <= 0x200D,
		r >= 0x2070 && r <= 0x218F, r >= 0x2C00 && r <= 0x2FEF, r >= 0x3001 && r <= 0xD7FF,
		r >= 0xF900 && r <= 0xFDCF, r >= 0xFDF0 && r <= 0xFFFD, r >= 0x10000 && r <= 0xEFFFF:
		return true
	}
	return false
}

// isPNCharsU reports whether r is a PN_CHARS_U (PN_CHARS_BASE or '_').
func isPNCharsU(r rune) bool { return r == '_' || isPNCharsBase(r) }

// isPNChars reports whether r is a PN_CHARS of the grammar.
func isPNChars(r rune) bool {
	return isPNCharsU(r) || r == '-' || r >= '0' && r <= '9' || r == 0xB7 ||
		r >= 0x300 && r <= 0x36F || r >= 0x203F && r <= 0x2040
}
