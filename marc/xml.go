package marc

import (
	"bufio"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Namespace is the MARCXML namespace.
const Namespace = "http://www.loc.gov/MARC21/slim"

// XMLReader reads records from a MARCXML document.
type XMLReader struct {
	d   *xml.Decoder
	n   int
	err error
}

// NewXMLReader returns an XMLReader reading MARCXML from r. The document
// may be a <collection>, a bare <record>, or any XML containing MARCXML
// record elements; elements must be in the MARCXML namespace or in no
// namespace. Declared encodings other than UTF-8, US-ASCII and ISO-8859-1
// are rejected.
func NewXMLReader(r io.Reader) *XMLReader {
	d := xml.NewDecoder(bufio.NewReaderSize(r, 1<<16))
	d.CharsetReader = charsetReader
	return &XMLReader{d: d}
}

func charsetReader(label string, in io.Reader) (io.Reader, error) {
	switch strings.ToLower(label) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return in, nil
	case "iso-8859-1", "latin1", "latin-1", "iso8859-1":
		return &latin1Reader{r: bufio.NewReader(in)}, nil
	}
	return nil, fmt.Errorf("unsupported XML encoding %q", label)
}

// latin1Reader converts ISO-8859-1 to UTF-8.
type latin1Reader struct {
	r       *bufio.Reader
	pending []byte
}

func (l *latin1Reader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(l.pending) > 0 {
			c := copy(p[n:], l.pending)
			l.pending = l.pending[c:]
			n += c
			continue
		}
		b, err := l.r.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		if b < 0x80 {
			p[n] = b
			n++
			continue
		}
		l.pending = utf8.AppendRune(l.pending[:0], rune(b))
	}
	return n, nil
}

func isMARC(name xml.Name, local string) bool {
	return name.Local == local && (name.Space == "" || name.Space == Namespace)
}

// Next returns the next record. At the end of the document it returns
// io.EOF. A record element whose content is not a valid MARC record yields
// a *RecordError and the next call continues with the following record. An
// XML syntax error (or an I/O error) ends the stream with an error giving
// the line of the error.
func (x *XMLReader) Next() (*Record, error) {
	if x.err != nil {
		return nil, x.err
	}
	for {
		off := x.d.InputOffset()
		tok, err := x.d.Token()
		if err != nil {
			return nil, x.fail(err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || !isMARC(se.Name, "record") {
			continue
		}
		x.n++
		rec, reason, err := x.readRecord()
		if err != nil {
			return nil, x.fail(err)
		}
		if reason != "" {
			return nil, &RecordError{Position: x.n, Offset: off, Reason: reason}
		}
		return rec, nil
	}
}

func (x *XMLReader) fail(err error) error {
	if err == io.EOF {
		x.err = io.EOF
		return x.err
	}
	line, _ := x.d.InputPos()
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		line = se.Line
	}
	x.err = fmt.Errorf("marc: MARCXML line %d (after %d records): %w", line, x.n, err)
	return x.err
}

// text reads character data up to the end of the current element.
func (x *XMLReader) text() (string, bool, error) {
	var b strings.Builder
	nested := false
	depth := 0
	for {
		tok, err := x.d.Token()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return "", false, err
		}
		switch t := tok.(type) {
		case xml.CharData:
			if depth == 0 {
				b.Write(t)
			}
		case xml.StartElement:
			nested = true
			depth++
		case xml.EndElement:
			if depth == 0 {
				return b.String(), nested, nil
			}
			depth--
		}
	}
}

func attr(se xml.StartElement, name string) (string, bool) {
	for _, a := range se.Attr {
		if a.Name.Local == name && a.Name.Space == "" {
			return a.Value, true
		}
	}
	return "", false
}

// readRecord reads the content of a record element. A non-empty reason
// means the record is invalid (the element has been consumed).
func (x *XMLReader) readRecord() (*Record, string, error) {
	rec := &Record{}
	reason := ""
	bad := func(format string, args ...any) {
		if reason == "" {
			reason = fmt.Sprintf(format, args...)
		}
	}
	hasLeader := false
	for {
		tok, err := x.d.Token()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, "", err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			if !hasLeader {
				bad("missing leader")
			}
			if reason != "" {
				return nil, reason, nil
			}
			return rec, "", nil
		case xml.StartElement:
			switch {
			case isMARC(t.Name, "leader"):
				s, nested, err := x.text()
				if err != nil {
					return nil, "", err
				}
				if hasLeader {
					bad("more than one leader")
				}
				hasLeader = true
				if nested || len(s) != LeaderLen || !isASCIIPrintable(s) {
					bad("invalid leader %q", s)
				}
				rec.Leader = s
			case isMARC(t.Name, "controlfield"):
				tag, _ := attr(t, "tag")
				s, nested, err := x.text()
				if err != nil {
					return nil, "", err
				}
				if !IsControlTag(tag) {
					bad("invalid control field tag %q", tag)
				}
				if nested {
					bad("control field %s has child elements", tag)
				}
				rec.Fields = append(rec.Fields, Field{Tag: tag, Value: s})
			case isMARC(t.Name, "datafield"):
				f, why, err := x.readDataField(t)
				if err != nil {
					return nil, "", err
				}
				if why != "" {
					bad("%s", why)
				}
				rec.Fields = append(rec.Fields, f)
			default:
				if err := x.d.Skip(); err != nil {
					return nil, "", err
				}
			}
		}
	}
}

func (x *XMLReader) readDataField(se xml.StartElement) (Field, string, error) {
	tag, _ := attr(se, "tag")
	f := Field{Tag: tag}
	reason := ""
	if !validTag(tag) || IsControlTag(tag) {
		reason = fmt.Sprintf("invalid data field tag %q", tag)
	}
	for i, name := range []string{"ind1", "ind2"} {
		v, _ := attr(se, name)
		if len(v) != 1 || !printable(v[0]) {
			if reason == "" {
				reason = fmt.Sprintf("field %s: invalid %s %q", tag, name, v)
			}
			v = " "
		}
		if i == 0 {
			f.Ind1 = v[0]
		} else {
			f.Ind2 = v[0]
		}
	}
	for {
		tok, err := x.d.Token()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return f, "", err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return f, reason, nil
		case xml.StartElement:
			if !isMARC(t.Name, "subfield") {
				if err := x.d.Skip(); err != nil {
					return f, "", err
				}
				continue
			}
			code, _ := attr(t, "code")
			s, nested, err := x.text()
			if err != nil {
				return f, "", err
			}
			if len(code) != 1 || code[0] <= 0x20 || code[0] >= 0x7F {
				if reason == "" {
					reason = fmt.Sprintf("field %s: invalid subfield code %q", tag, code)
				}
				continue
			}
			if nested && reason == "" {
				reason = fmt.Sprintf("field %s: subfield %s has child elements", tag, code)
			}
			f.Subfields = append(f.Subfields, Subfield{Code: code[0], Value: s})
		}
	}
}

func isASCIIPrintable(s string) bool {
	for i := 0; i < len(s); i++ {
		if !printable(s[i]) {
			return false
		}
	}
	return true
}

// WriteXML writes rec to w as a MARCXML record element; see AppendXML.
func WriteXML(w io.Writer, rec *Record) error {
	b, err := AppendXML(nil, rec)
	if err != nil {
		return err
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("marc: write MARCXML: %w", err)
	}
	return nil
}

// AppendXML appends rec to dst as one MARCXML element
//
//	<record xmlns="http://www.loc.gov/MARC21/slim"><leader>…</leader><controlfield tag="001">…</controlfield><datafield tag="245" ind1="1" ind2="0"><subfield code="a">…</subfield></datafield></record>
//
// with no insignificant whitespace, so that the same record always gives
// the same bytes. The output is valid against MARC21slim.xsd:
//
//   - a leader that is not 24 bytes, or a tag that does not match the
//     schema's patterns, is an error (nothing is appended);
//   - in the leader, a character its position does not allow becomes a
//     blank, except that an invalid type of record (leader/06) is an error
//     and leader/20-23 other than "4500" or four blanks becomes "4500";
//   - an uppercase indicator is written in lowercase, any other indicator
//     outside [0-9a-z ] as a blank;
//   - a subfield code the schema does not allow (a blank, '@', '|' or a
//     non-ASCII byte) is written as '?';
//   - characters XML 1.0 cannot carry (control characters other than tab,
//     line feed and carriage return, U+FFFE, U+FFFF and invalid UTF-8) are
//     replaced by U+FFFD. Carriage returns are written as &#xD; so that they
//     survive XML line-end normalisation.
//
// A record produced by the readers without repairs therefore reads back
// from the output unchanged.
func AppendXML(dst []byte, rec *Record) ([]byte, error) {
	leader, err := xmlLeader(rec.Leader)
	if err != nil {
		return dst, err
	}
	out := append(dst, `<record xmlns="`+Namespace+`"><leader>`...)
	out = append(out, leader...)
	out = append(out, "</leader>"...)
	for i := range rec.Fields {
		f := &rec.Fields[i]
		if f.IsControl() {
			if !validControlTag(f.Tag) {
				return dst, fmt.Errorf("marc: MARCXML: field %d: invalid control field tag %q", i+1, f.Tag)
			}
			out = append(out, `<controlfield tag="`...)
			out = append(out, f.Tag...)
			out = append(out, `">`...)
			out = appendEscaped(out, f.Value, false)
			out = append(out, "</controlfield>"...)
			continue
		}
		if !validDataTag(f.Tag) {
			return dst, fmt.Errorf("marc: MARCXML: field %d: invalid data field tag %q", i+1, f.Tag)
		}
		out = append(out, `<datafield tag="`...)
		out = append(out, f.Tag...)
		out = append(out, `" ind1="`...)
		out = append(out, xmlIndicator(f.Ind1))
		out = append(out, `" ind2="`...)
		out = append(out, xmlIndicator(f.Ind2))
		out = append(out, `">`...)
		for _, s := range f.Subfields {
			out = append(out, `<subfield code="`...)
			out = appendEscaped(out, string(xmlCode(s.Code)), true)
			out = append(out, `">`...)
			out = appendEscaped(out, s.Value, false)
			out = append(out, "</subfield>"...)
		}
		out = append(out, "</datafield>"...)
	}
	return append(out, "</record>"...), nil
}

// xmlLeader sanitises a leader for the schema pattern
// [\d ]{5}[\dA-Za-z ]{1}[\dA-Za-z]{1}[\dA-Za-z ]{3}(2| )(2| )[\d ]{5}[\dA-Za-z ]{3}(4500|    ).
func xmlLeader(l string) (string, error) {
	if len(l) != LeaderLen {
		return "", fmt.Errorf("marc: MARCXML: leader has %d bytes, want %d", len(l), LeaderLen)
	}
	b := []byte(l)
	for i := 0; i < 20; i++ {
		c := b[i]
		var ok bool
		switch {
		case i < 5 || (i >= 12 && i < 17):
			ok = isDigit(c) || c == ' '
		case i == 6:
			if !isAlnum(c) {
				return "", fmt.Errorf("marc: MARCXML: invalid type of record %q in leader/06", c)
			}
			ok = true
		case i == 10 || i == 11:
			ok = c == '2' || c == ' '
		default:
			ok = isAlnum(c) || c == ' '
		}
		if !ok {
			b[i] = ' '
		}
	}
	if tail := string(b[20:]); tail != "4500" && tail != "    " {
		copy(b[20:], "4500")
	}
	return string(b), nil
}

// validControlTag matches the schema pattern 00[1-9A-Za-z]{1}.
func validControlTag(t string) bool {
	return len(t) == 3 && t[0] == '0' && t[1] == '0' && isAlnum(t[2]) && t[2] != '0'
}

// validDataTag matches the schema pattern
// (0([1-9A-Z][0-9A-Z])|0([1-9a-z][0-9a-z]))|(([1-9A-Z][0-9A-Z]{2})|([1-9a-z][0-9a-z]{2})).
func validDataTag(t string) bool {
	if len(t) != 3 {
		return false
	}
	upper := func(c byte) bool { return isDigit(c) || ('A' <= c && c <= 'Z') }
	lower := func(c byte) bool { return isDigit(c) || ('a' <= c && c <= 'z') }
	if t[0] == '0' {
		return t[1] != '0' && ((upper(t[1]) && upper(t[2])) || (lower(t[1]) && lower(t[2])))
	}
	return (upper(t[0]) && upper(t[1]) && upper(t[2])) || (lower(t[0]) && lower(t[1]) && lower(t[2]))
}

func xmlIndicator(c byte) byte {
	switch {
	case isDigit(c), 'a' <= c && c <= 'z', c == ' ':
		return c
	case 'A' <= c && c <= 'Z':
		return c + 'a' - 'A'
	}
	return ' '
}

func xmlCode(c byte) byte {
	if c <= 0x20 || c >= 0x7F || c == '@' || c == '|' {
		return '?'
	}
	return c
}

func appendEscaped(dst []byte, s string, attr bool) []byte {
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
			case c == '"' && attr:
				dst = append(dst, "&quot;"...)
			case c == '\r':
				dst = append(dst, "&#xD;"...)
			case c == '\n' && attr:
				dst = append(dst, "&#xA;"...)
			case c == '\t' && attr:
				dst = append(dst, "&#x9;"...)
			case c < 0x20 && c != '\n' && c != '\t':
				dst = append(dst, "\uFFFD"...)
			default:
				dst = append(dst, c)
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == 0xFFFE || r == 0xFFFF {
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}
