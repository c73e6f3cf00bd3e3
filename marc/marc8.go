package marc

import (
	"sort"
	"unicode/utf8"
)

// marc8Table is one MARC-8 graphic character set (see marc8_table.go).
type marc8Table struct {
	final    byte
	keyWidth int
	data     string
}

const (
	setBasicLatin = 0x42
	setANSEL      = 0x45
	setEACC       = 0x31
	setSubscript  = 0x62
	setGreekSym   = 0x67
	setSuperscr   = 0x70
)

func marc8TableFor(final byte) *marc8Table {
	for i := range marc8Tables {
		if marc8Tables[i].final == final {
			return &marc8Tables[i]
		}
	}
	return nil
}

func hexVal(s string) uint32 {
	var v uint32
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | uint32(c-'0')
		default:
			v = v<<4 | uint32(c-'A'+10)
		}
	}
	return v
}

// lookupData searches a fixed-width table string for key.
func lookupData(data string, kw int, key uint32) (r rune, combining, ok bool) {
	w := kw + 6
	n := len(data) / w
	i := sort.Search(n, func(i int) bool { return hexVal(data[i*w:i*w+kw]) >= key })
	if i < n && hexVal(data[i*w:i*w+kw]) == key {
		e := data[i*w : (i+1)*w]
		return rune(hexVal(e[kw : kw+5])), e[kw+5] == '1', true
	}
	return 0, false, false
}

func (t *marc8Table) lookup(key uint32) (rune, bool, bool) {
	return lookupData(t.data, t.keyWidth, key)
}

// MARC8ToUTF8 converts a MARC-8 string to NFC UTF-8, starting with G0 =
// Basic Latin and G1 = ANSEL. It returns an error for a malformed escape
// sequence, a truncated multibyte character or an unmapped character.
func MARC8ToUTF8(b []byte) (string, error) {
	var d marc8Decoder
	d.reset()
	s, err := d.decode(b, false)
	return s, err
}

// marc8Decoder holds the G0/G1 state of a MARC-8 conversion.
type marc8Decoder struct {
	g0, g1 *marc8Table
}

func (d *marc8Decoder) reset() {
	d.g0 = marc8TableFor(setBasicLatin)
	d.g1 = marc8TableFor(setANSEL)
}

// escape parses the escape sequence at b[i] (b[i] == ESC) and returns the
// number of bytes it occupies, or 0 if it is not a valid sequence.
func (d *marc8Decoder) escape(b []byte, i int) int {
	if i+1 >= len(b) {
		return 0
	}
	switch c := b[i+1]; c {
	case 's':
		d.g0 = marc8TableFor(setBasicLatin)
		return 2
	case 'g', 'b', 'p':
		d.g0 = marc8TableFor(c)
		return 2
	case '(', ',', ')', '-', '$':
		j := i + 2
		g1 := c == ')' || c == '-'
		multi := c == '$'
		if multi && j < len(b) {
			switch b[j] {
			case ',':
				j++
			case ')', '-':
				g1 = true
				j++
			}
		}
		if !multi && j < len(b) && b[j] == '!' { // intermediate of e.g. ESC ) ! E
			j++
		}
		if j >= len(b) {
			return 0
		}
		t := marc8TableFor(b[j])
		if t == nil || multi != (t.final == setEACC) {
			return 0
		}
		if g1 {
			d.g1 = t
		} else {
			d.g0 = t
		}
		return j + 1 - i
	}
	return 0
}

// decode converts b. In lenient mode errors are repaired instead of
// returned: a bad ESC is dropped and bad characters become U+FFFD.
func (d *marc8Decoder) decode(b []byte, lenient bool) (string, error) {
	out := make([]byte, 0, len(b)+len(b)/4)
	var pending []rune // combining marks waiting for their base
	emit := func(r rune, combining bool) {
		if combining {
			pending = append(pending, r)
			return
		}
		out = utf8.AppendRune(out, r)
		for _, p := range pending {
			out = utf8.AppendRune(out, p)
		}
		pending = pending[:0]
	}
	for i := 0; i < len(b); {
		c := b[i]
		if c == 0x1B {
			n := d.escape(b, i)
			if n == 0 {
				if !lenient {
					return "", &marc8Error{i, "bad escape sequence"}
				}
				i++
				continue
			}
			i += n
			continue
		}
		if d.g0.keyWidth == 6 { // every byte but ESC is part of a triple, as in pymarc
			if i+3 > len(b) {
				if !lenient {
					return "", &marc8Error{i, "truncated multibyte character"}
				}
				emit(utf8.RuneError, false)
				break
			}
			key := uint32(b[i])<<16 | uint32(b[i+1])<<8 | uint32(b[i+2])
			r, comb, ok := d.g0.lookup(key)
			if !ok {
				r, comb, ok = lookupData(marc8Odd, 6, key)
			}
			if !ok {
				if !lenient {
					return "", &marc8Error{i, "unmapped multibyte character"}
				}
				r, comb = utf8.RuneError, false
			}
			emit(r, comb)
			i += 3
			continue
		}
		i++
		// C0 controls and the C1 range are not graphic characters; pymarc
		// drops them, and so do we.
		if c < 0x20 || (c > 0x80 && c < 0xA0) {
			continue
		}
		if c == 0x20 {
			emit(' ', false)
			continue
		}
		t := d.g0
		if c >= 0x80 {
			t = d.g1
		}
		key := uint32(c)
		r, comb, ok := t.lookup(key)
		if !ok {
			r, comb, ok = t.lookup(key ^ 0x80)
		}
		if !ok {
			if !lenient {
				return "", &marc8Error{i - 1, "unmapped character"}
			}
			r, comb = utf8.RuneError, false
		}
		emit(r, comb)
	}
	for _, p := range pending {
		out = utf8.AppendRune(out, p)
	}
	return normalizeNFC(string(out)), nil
}
