package kit

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/shelfmark/shelfmark"
)

// This file reads the checksums a client sends with the bytes it uploads:
// the Content-Digest and Repr-Digest fields of RFC 9530, which are
// Structured Field Dictionaries (RFC 8941, updated by RFC 9651), and the
// older Digest field of RFC 3230 that Fedora clients send.

// ParseContentDigest parses the value of a Content-Digest or Repr-Digest
// field (RFC 9530): a Structured Field Dictionary whose keys name algorithms
// and whose values are Byte Sequences, such as
//
//	sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:, sha-512=:...:
//
// It returns the digests of the algorithms sha-256, sha-512, md5 and sha in
// the order they appear, ignoring other algorithms and any parameters; it
// returns nil when none of these algorithms is present. A value that is not
// a valid Dictionary, a recognised algorithm whose value is not a Byte
// Sequence, and a digest of the wrong length are EINVALID. As RFC 8941
// requires, a key given twice takes its last value.
func ParseContentDigest(v string) ([]shelfmark.Digest, error) {
	return parseDigestDictionary("Content-Digest", v)
}

// ParseLegacyDigest parses the value of an RFC 3230 Digest field as Fedora
// clients send it: comma-separated algorithm=value pairs such as
//
//	sha-256=X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=, md5=...
//
// Algorithm names are case-insensitive; sha-256 and sha256, sha-512 and
// sha512, md5, and sha, sha-1 and sha1 (all shelfmark.SHA1) are recognised,
// others are ignored. A value made of exactly as many hex digits as the
// algorithm's digest needs is read as hex, any other as base64 (standard or
// URL alphabet, padded or not). It returns nil when no recognised algorithm
// is present; a malformed pair, a digest of the wrong length, and two
// different values for one algorithm are EINVALID.
func ParseLegacyDigest(v string) ([]shelfmark.Digest, error) {
	var out []shelfmark.Digest
	for member := range strings.SplitSeq(v, ",") {
		member = strings.Trim(member, " \t")
		if member == "" {
			continue // empty list elements are allowed (RFC 9110, 5.6.1)
		}
		name, value, ok := strings.Cut(member, "=")
		if !ok {
			return nil, digestError("Digest", nil,
				"The Digest header is malformed: %.60q is not of the form algorithm=value.", member)
		}
		alg, ok := legacyAlgorithm(strings.Trim(name, " \t"))
		if !ok {
			continue
		}
		value = strings.Trim(value, " \t")
		b, err := decodeLegacyValue(alg, value)
		if err != nil {
			return nil, err
		}
		if out, err = addDigest(out, shelfmark.Digest{Algorithm: alg, Value: b}, "Digest"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// legacyAlgorithm maps an RFC 3230 algorithm name to a supported algorithm.
func legacyAlgorithm(name string) (shelfmark.DigestAlgorithm, bool) {
	switch strings.ToLower(name) {
	case "sha-256", "sha256":
		return shelfmark.SHA256, true
	case "sha-512", "sha512":
		return shelfmark.SHA512, true
	case "md5":
		return shelfmark.MD5, true
	case "sha", "sha-1", "sha1":
		return shelfmark.SHA1, true
	}
	return "", false
}

// decodeLegacyValue decodes the hex or base64 value of alg in a Digest field.
func decodeLegacyValue(alg shelfmark.DigestAlgorithm, v string) ([]byte, error) {
	n := alg.Size()
	if v == "" {
		return nil, digestError("Digest", map[string]any{"algorithm": string(alg)},
			"The Digest header gives no value for %s.", alg)
	}
	if len(v) == 2*n && isHex(v) {
		return hex.DecodeString(v)
	}
	b, ok := decodeBase64(v, true)
	if !ok {
		return nil, digestError("Digest", map[string]any{"algorithm": string(alg)},
			"The %s value in the Digest header is neither %d hex digits nor base64: %.100q.", alg, 2*n, v)
	}
	if len(b) != n {
		return nil, lengthError("Digest", alg, len(b))
	}
	return b, nil
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') && (c < 'A' || c > 'F') {
			return false
		}
	}
	return true
}

// decodeBase64 decodes s, padded or not, ignoring non-zero pad bits as RFC
// 8941 asks of parsers. The URL alphabet is accepted only when urlOK.
func decodeBase64(s string, urlOK bool) ([]byte, bool) {
	data := strings.TrimRight(s, "=")
	if pad := len(s) - len(data); pad > 2 || (pad > 0 && len(s)%4 != 0) {
		return nil, false
	}
	std, url := false, false
	for i := 0; i < len(data); i++ {
		switch c := data[i]; {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '+' || c == '/':
			std = true
		case (c == '-' || c == '_') && urlOK:
			url = true
		default:
			return nil, false
		}
	}
	enc := base64.RawStdEncoding
	if url {
		if std {
			return nil, false // a mix of both alphabets
		}
		enc = base64.RawURLEncoding
	}
	b, err := enc.DecodeString(data)
	return b, err == nil
}

// RequestDigests returns the digests a request carries in its
// Content-Digest, Repr-Digest and Digest fields, in that order of
// preference, one per algorithm; nil when there are none. Several lines of
// one field are combined as RFC 9110 says. Two fields giving different
// values for one algorithm are EINVALID.
//
// Content-Digest covers the content as sent and Repr-Digest the
// representation before any Content-Encoding: the two agree, and both
// describe the bytes to store, only for a request without Content-Encoding,
// which is what this function assumes.
func RequestDigests(h http.Header) ([]shelfmark.Digest, error) {
	var out []shelfmark.Digest
	from := map[shelfmark.DigestAlgorithm]string{}
	for _, field := range []string{"Content-Digest", "Repr-Digest", "Digest"} {
		v := fieldValue(h, field)
		if v == "" {
			continue
		}
		var ds []shelfmark.Digest
		var err error
		if field == "Digest" {
			ds, err = ParseLegacyDigest(v)
		} else {
			ds, err = parseDigestDictionary(field, v)
		}
		if err != nil {
			return nil, err
		}
		for _, d := range ds {
			prev, seen := from[d.Algorithm]
			if !seen {
				from[d.Algorithm] = field
				out = append(out, d)
				continue
			}
			for _, o := range out {
				if o.Algorithm == d.Algorithm && !bytes.Equal(o.Value, d.Value) {
					return nil, &shelfmark.Error{
						Code: shelfmark.EINVALID,
						Message: fmt.Sprintf("The %s and %s headers give different %s digests (%s and %s).",
							prev, field, d.Algorithm,
							base64.StdEncoding.EncodeToString(o.Value), base64.StdEncoding.EncodeToString(d.Value)),
						Details: map[string]any{"algorithm": string(d.Algorithm), "headers": []string{prev, field}},
					}
				}
			}
		}
	}
	return out, nil
}

// fieldValue combines the non-empty lines of a field with commas.
func fieldValue(h http.Header, field string) string {
	var vs []string
	for _, v := range h.Values(field) {
		if v = strings.Trim(v, " \t"); v != "" {
			vs = append(vs, v)
		}
	}
	return strings.Join(vs, ", ")
}

// addDigest appends d to ds unless ds has the algorithm already; a
// different value for it is EINVALID.
func addDigest(ds []shelfmark.Digest, d shelfmark.Digest, field string) ([]shelfmark.Digest, error) {
	for _, o := range ds {
		if o.Algorithm != d.Algorithm {
			continue
		}
		if !bytes.Equal(o.Value, d.Value) {
			return nil, digestError(field, map[string]any{"algorithm": string(d.Algorithm)},
				"The %s header gives two different %s digests.", field, d.Algorithm)
		}
		return ds, nil
	}
	return append(ds, d), nil
}

func digestError(field string, details map[string]any, format string, args ...any) error {
	if details == nil {
		details = map[string]any{}
	}
	details["header"] = field
	return &shelfmark.Error{Code: shelfmark.EINVALID, Message: fmt.Sprintf(format, args...), Details: details}
}

func lengthError(field string, alg shelfmark.DigestAlgorithm, n int) error {
	return digestError(field,
		map[string]any{"algorithm": string(alg), "length": n, "expected_length": alg.Size()},
		"The %s digest in the %s header is %d bytes long; a %s digest has %d bytes.",
		alg, field, n, alg, alg.Size())
}

// Structured Field parsing (RFC 8941 section 4.2, RFC 9651 section 4.2).
// Everything a Dictionary may hold is parsed, so that parameters and
// members of unknown algorithms are skipped exactly; only Byte Sequence
// values are kept.

// sfMember is the last value of one Dictionary key.
type sfMember struct {
	key    string
	binary bool   // whether the value is a Byte Sequence
	value  []byte // the decoded Byte Sequence
	column int    // where the value starts, 1-based
}

type sfParser struct {
	field string
	s     string
	i     int
}

// parseDigestDictionary parses a Content-Digest or Repr-Digest value.
func parseDigestDictionary(field, v string) ([]shelfmark.Digest, error) {
	p := &sfParser{field: field, s: v}
	members, err := p.dictionary()
	if err != nil {
		return nil, err
	}
	var out []shelfmark.Digest
	for _, m := range members {
		alg := shelfmark.DigestAlgorithm(m.key)
		n := alg.Size()
		if n == 0 {
			continue // RFC 9530: unknown algorithms are ignored
		}
		if !m.binary {
			return nil, digestError(field, map[string]any{"algorithm": m.key, "column": m.column},
				"The %s value in the %s header (character %d) is not a byte sequence such as :base64:.",
				m.key, field, m.column)
		}
		if len(m.value) != n {
			return nil, lengthError(field, alg, len(m.value))
		}
		out = append(out, shelfmark.Digest{Algorithm: alg, Value: m.value})
	}
	return out, nil
}

func (p *sfParser) eof() bool { return p.i >= len(p.s) }

// peek returns the next character, or 0 at the end.
func (p *sfParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}

// fail returns the EINVALID error of a malformed field at the current
// position: "expected ..., found ...".
func (p *sfParser) fail(expected string) error {
	col := p.i + 1
	return digestError(p.field, map[string]any{"column": col},
		"The %s header is not a valid structured field dictionary: at character %d, expected %s, found %s.",
		p.field, col, expected, p.found())
}

// found describes the character at the current position.
func (p *sfParser) found() string {
	if p.eof() {
		return "the end of the value"
	}
	c := p.s[p.i]
	if c > 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", string(c))
	}
	return fmt.Sprintf("the byte 0x%02x", c)
}

func (p *sfParser) skipSP() {
	for !p.eof() && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *sfParser) skipOWS() {
	for !p.eof() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// dictionary parses a whole field value as a Dictionary and returns its
// members in order of first appearance, each with its last value.
func (p *sfParser) dictionary() ([]sfMember, error) {
	var members []sfMember
	index := map[string]int{}
	p.skipSP()
	for !p.eof() {
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		m := sfMember{key: key}
		if p.peek() == '=' {
			p.i++
			m.column = p.i + 1
			if p.peek() == '(' {
				if err := p.innerList(); err != nil {
					return nil, err
				}
			} else {
				m.binary = p.peek() == ':'
				m.value, err = p.bareItem()
				if err != nil {
					return nil, err
				}
				if err := p.parameters(); err != nil {
					return nil, err
				}
			}
		} else {
			m.column = p.i + 1 // Boolean true, perhaps with parameters
			if err := p.parameters(); err != nil {
				return nil, err
			}
		}
		if j, ok := index[key]; ok {
			members[j] = m
		} else {
			index[key] = len(members)
			members = append(members, m)
		}
		p.skipOWS()
		if p.eof() {
			break
		}
		if p.s[p.i] != ',' {
			return nil, p.fail(`"," between members`)
		}
		p.i++
		p.skipOWS()
		if p.eof() {
			return nil, p.fail("a member after the comma")
		}
	}
	return members, nil
}

func isLCAlpha(c byte) bool { return c >= 'a' && c <= 'z' }
func isAlpha(c byte) bool   { return isLCAlpha(c) || (c >= 'A' && c <= 'Z') }
func isDigit(c byte) bool   { return c >= '0' && c <= '9' }

// key parses a key: ( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." / "*" ).
func (p *sfParser) key() (string, error) {
	if c := p.peek(); !isLCAlpha(c) && c != '*' {
		return "", p.fail("a key (a lower-case letter or \"*\")")
	}
	start := p.i
	for !p.eof() {
		c := p.s[p.i]
		if !isLCAlpha(c) && !isDigit(c) && c != '_' && c != '-' && c != '.' && c != '*' {
			break
		}
		p.i++
	}
	return p.s[start:p.i], nil
}

// parameters skips the parameters of an item or inner list.
func (p *sfParser) parameters() error {
	for p.peek() == ';' {
		p.i++
		p.skipSP()
		if _, err := p.key(); err != nil {
			return err
		}
		if p.peek() == '=' {
			p.i++
			if _, err := p.bareItem(); err != nil {
				return err
			}
		}
	}
	return nil
}

// innerList skips an Inner List: "(" items separated by spaces ")" and its
// parameters.
func (p *sfParser) innerList() error {
	p.i++ // "("
	for {
		p.skipSP()
		if p.peek() == ')' {
			p.i++
			return p.parameters()
		}
		if p.eof() {
			return p.fail(`")" to close the inner list`)
		}
		if _, err := p.bareItem(); err != nil {
			return err
		}
		if err := p.parameters(); err != nil {
			return err
		}
		if c := p.peek(); c != ' ' && c != ')' {
			return p.fail(`" " or ")" after an inner list item`)
		}
	}
}

// bareItem parses a Bare Item and returns its bytes when it is a Byte
// Sequence, nil otherwise.
func (p *sfParser) bareItem() ([]byte, error) {
	c := p.peek()
	switch {
	case c == '-' || isDigit(c):
		return nil, p.number()
	case c == '"':
		return nil, p.str()
	case c == ':':
		return p.byteSequence()
	case c == '?':
		p.i++
		if c := p.peek(); c != '0' && c != '1' {
			return nil, p.fail(`"0" or "1" after "?" in a boolean`)
		}
		p.i++
		return nil, nil
	case c == '@':
		p.i++
		if c := p.peek(); c != '-' && !isDigit(c) {
			return nil, p.fail(`an integer after "@" in a date`)
		}
		start := p.i
		if err := p.number(); err != nil {
			return nil, err
		}
		if strings.Contains(p.s[start:p.i], ".") {
			p.i = start
			return nil, p.fail("an integer, not a decimal, in a date")
		}
		return nil, nil
	case c == '%':
		return nil, p.displayString()
	case isAlpha(c) || c == '*':
		p.token()
		return nil, nil
	}
	return nil, p.fail("a value (a byte sequence such as :base64:, a number, a string, a token or a boolean)")
}

// number parses an Integer (at most 15 digits) or a Decimal (at most 12
// digits, a point and 1 to 3 digits).
func (p *sfParser) number() error {
	if p.peek() == '-' {
		p.i++
	}
	if !isDigit(p.peek()) {
		return p.fail("a digit")
	}
	start, point := p.i, -1
	for !p.eof() {
		c := p.s[p.i]
		if c == '.' && point < 0 {
			if p.i-start > 12 {
				return p.fail("at most 12 digits before the decimal point")
			}
			point = p.i
		} else if !isDigit(c) {
			break
		}
		p.i++
		if point < 0 && p.i-start > 15 {
			p.i--
			return p.fail("at most 15 digits in an integer")
		}
		if point >= 0 && p.i-start > 16 {
			p.i--
			return p.fail("at most 16 characters in a decimal")
		}
	}
	if point >= 0 {
		if frac := p.i - point - 1; frac == 0 {
			return p.fail("a digit after the decimal point")
		} else if frac > 3 {
			p.i = point + 4
			return p.fail("at most 3 digits after the decimal point")
		}
	}
	return nil
}

// str parses a String: printable ASCII between double quotes, in which
// only \" and \\ are escapes.
func (p *sfParser) str() error {
	p.i++ // '"'
	for !p.eof() {
		c := p.s[p.i]
		switch {
		case c == '\\':
			p.i++
			if c := p.peek(); c != '"' && c != '\\' {
				return p.fail(`"\"" or "\\" after a backslash in a string`)
			}
		case c == '"':
			p.i++
			return nil
		case c < 0x20 || c > 0x7e:
			return p.fail("a printable ASCII character in a string")
		}
		p.i++
	}
	return p.fail(`a closing '"'`)
}

// displayString parses a Display String (RFC 9651): %"..." in which
// non-ASCII bytes are written %xx in lower-case hex and form UTF-8.
func (p *sfParser) displayString() error {
	p.i++ // '%'
	if p.peek() != '"' {
		return p.fail(`'"' after "%" in a display string`)
	}
	p.i++
	var b []byte
	for !p.eof() {
		c := p.s[p.i]
		switch {
		case c < 0x20 || c > 0x7e:
			return p.fail("a printable ASCII character in a display string")
		case c == '%':
			p.i++
			hi, lo := p.peekHexLower(0), p.peekHexLower(1)
			if hi < 0 || lo < 0 {
				return p.fail(`two lower-case hex digits after "%" in a display string`)
			}
			b = append(b, byte(hi<<4|lo))
			p.i += 2
			continue
		case c == '"':
			if !utf8.Valid(b) {
				return p.fail("a display string that decodes to valid UTF-8")
			}
			p.i++
			return nil
		}
		b = append(b, c)
		p.i++
	}
	return p.fail(`a closing '"'`)
}

// peekHexLower returns the value of the lower-case hex digit at p.i+k, or
// -1.
func (p *sfParser) peekHexLower(k int) int {
	if p.i+k >= len(p.s) {
		return -1
	}
	switch c := p.s[p.i+k]; {
	case isDigit(c):
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return -1
}

// token parses a Token: ( ALPHA / "*" ) *( tchar / ":" / "/" ).
func (p *sfParser) token() {
	p.i++
	for !p.eof() {
		c := p.s[p.i]
		if !isAlpha(c) && !isDigit(c) && !strings.ContainsRune("!#$%&'*+-.^_`|~:/", rune(c)) {
			return
		}
		p.i++
	}
}

// byteSequence parses a Byte Sequence: base64 between colons.
func (p *sfParser) byteSequence() ([]byte, error) {
	p.i++ // ':'
	end := strings.IndexByte(p.s[p.i:], ':')
	if end < 0 {
		p.i = len(p.s)
		return nil, p.fail(`a closing ":" to end the byte sequence`)
	}
	content := p.s[p.i : p.i+end]
	for k := 0; k < len(content); k++ {
		if c := content[k]; !isAlpha(c) && !isDigit(c) && c != '+' && c != '/' && c != '=' {
			p.i += k
			return nil, p.fail(`a base64 character (A-Z, a-z, 0-9, "+", "/", "=") in the byte sequence`)
		}
	}
	b, ok := decodeBase64(content, false)
	if !ok {
		col := p.i // 1-based column of the opening ":"
		return nil, digestError(p.field, map[string]any{"column": col},
			"The %s header is not a valid structured field dictionary: the byte sequence at character %d is not valid base64.",
			p.field, col)
	}
	p.i += end + 1
	return b, nil
}
