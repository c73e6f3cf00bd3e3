package marc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

const (
	maxRecordLen     = 99999
	minRecordLen     = LeaderLen + 2 // leader, directory terminator, record terminator
	fieldTerminator  = 0x1E
	recordTerminator = 0x1D
	subfieldDelim    = 0x1F
)

// Reader reads ISO 2709 records from a stream.
type Reader struct {
	// Lenient makes the reader repair records instead of rejecting them
	// where that is possible (see the package documentation). Set it
	// before the first call to Next.
	Lenient bool

	br  *bufio.Reader
	n   int   // records seen so far
	off int64 // offset of the next unread byte
	raw []byte
	err error // sticky I/O error
}

// NewReader returns a Reader reading ISO 2709 records from r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 1<<17)}
}

// Raw returns the bytes of the record last returned by Next (also when
// Next returned a *RecordError), exactly as they were in the stream. The
// slice is only valid until the next call to Next.
func (r *Reader) Raw() []byte { return r.raw }

// Next returns the next record. At the end of the input it returns io.EOF.
// A malformed record yields a *RecordError and the next call continues
// with the following record; any other error is an I/O error and ends the
// stream.
func (r *Reader) Next() (*Record, error) {
	r.raw = r.raw[:0]
	if r.err != nil {
		return nil, r.err
	}
	// Skip whitespace and NUL padding between records.
	for {
		b, err := r.br.Peek(1)
		if err != nil {
			return nil, r.fail(err)
		}
		if c := b[0]; c != ' ' && c != '\n' && c != '\r' && c != '\t' && c != 0 {
			break
		}
		_, _ = r.br.Discard(1)
		r.off++
	}
	r.n++
	start := r.off
	recErr := func(reason string, err error) *RecordError {
		return &RecordError{Position: r.n, Offset: start, Reason: reason, Err: err}
	}
	head, err := r.br.Peek(5)
	if len(head) < 5 {
		if err != nil && err != io.EOF {
			return nil, r.fail(err)
		}
		r.consume(len(head))
		return nil, recErr("truncated record", io.ErrUnexpectedEOF)
	}
	n, perr := strconv.Atoi(string(head))
	if perr != nil || !allDigits(head) || n < minRecordLen {
		if err := r.skipToTerminator(); err != nil {
			return nil, err
		}
		return nil, recErr(fmt.Sprintf("invalid record length %q", head), nil)
	}
	chunk, err := r.br.Peek(n)
	if err != nil && err != io.EOF {
		return nil, r.fail(err)
	}
	if len(chunk) == n && chunk[n-1] == recordTerminator && bytes.IndexByte(chunk[:n-1], recordTerminator) < 0 {
		r.consume(n)
		rec, err := decodeRecord(r.raw, r.Lenient)
		if err != nil {
			return nil, recErr("invalid record", err)
		}
		return rec, nil
	}
	// The length does not agree with the terminators: resynchronise on the
	// first record terminator.
	if i := bytes.IndexByte(chunk, recordTerminator); i >= 0 {
		r.consume(i + 1)
		return nil, recErr(fmt.Sprintf("record terminator at byte %d, but leader says length %d", i+1, n), nil)
	}
	if len(chunk) < n {
		r.consume(len(chunk))
		return nil, recErr(fmt.Sprintf("truncated record: %d of %d bytes", len(chunk), n), io.ErrUnexpectedEOF)
	}
	if err := r.skipToTerminator(); err != nil {
		return nil, err
	}
	return nil, recErr("missing record terminator", nil)
}

// consume moves n peeked bytes into raw.
func (r *Reader) consume(n int) {
	b, _ := r.br.Peek(n)
	r.raw = append(r.raw, b...)
	_, _ = r.br.Discard(n)
	r.off += int64(n)
}

// skipToTerminator consumes input up to and including the next record
// terminator (or to the end of input), keeping at most maxRecordLen bytes
// in raw.
func (r *Reader) skipToTerminator() error {
	for {
		b, err := r.br.ReadSlice(recordTerminator)
		r.off += int64(len(b))
		if room := maxRecordLen - len(r.raw); room > 0 {
			r.raw = append(r.raw, b[:min(room, len(b))]...)
		}
		switch {
		case err == nil, err == io.EOF:
			return nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return r.fail(err)
		}
	}
}

func (r *Reader) fail(err error) error {
	if err == io.EOF {
		r.err = io.EOF
	} else {
		r.err = fmt.Errorf("marc: reading record %d: %w", r.n+1, err)
	}
	return r.err
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

// Decode decodes one complete ISO 2709 record (strict mode). The returned
// error describes what is wrong with it.
func Decode(data []byte) (*Record, error) {
	return decodeRecord(data, false)
}

func decodeRecord(data []byte, lenient bool) (*Record, error) {
	if len(data) < minRecordLen || data[len(data)-1] != recordTerminator {
		return nil, errors.New("missing record terminator")
	}
	leader := data[:LeaderLen]
	for _, c := range leader {
		if c < 0x20 || c > 0x7E {
			return nil, fmt.Errorf("leader contains byte 0x%02X", c)
		}
	}
	if !allDigits(leader[12:17]) {
		return nil, fmt.Errorf("invalid base address %q", leader[12:17])
	}
	base, _ := strconv.Atoi(string(leader[12:17]))
	if base <= LeaderLen || base >= len(data) {
		return nil, fmt.Errorf("base address %d out of range", base)
	}
	if data[base-1] != fieldTerminator {
		return nil, errors.New("directory not terminated by a field terminator")
	}
	dir := data[LeaderLen : base-1]
	if len(dir)%12 != 0 {
		return nil, fmt.Errorf("directory length %d is not a multiple of 12", len(dir))
	}
	if len(dir) == 0 {
		return nil, errors.New("no fields")
	}
	body := data[base : len(data)-1]
	utf8Rec := leader[9] == 'a'
	rec := &Record{Fields: make([]Field, 0, len(dir)/12)}
	for i := 0; i < len(dir); i += 12 {
		e := dir[i : i+12]
		tag := string(e[:3])
		if !allDigits(e[3:12]) {
			return nil, fmt.Errorf("directory entry %d (%q): invalid length or offset", i/12+1, e)
		}
		if !validTag(tag) && !lenient {
			return nil, fmt.Errorf("directory entry %d: invalid tag %q", i/12+1, tag)
		}
		flen, _ := strconv.Atoi(string(e[3:7]))
		foff, _ := strconv.Atoi(string(e[7:12]))
		if flen < 1 || foff+flen > len(body) {
			return nil, fmt.Errorf("field %s (entry %d): length %d at offset %d exceeds the record", tag, i/12+1, flen, foff)
		}
		fd := body[foff : foff+flen]
		if fd[len(fd)-1] != fieldTerminator {
			if !lenient {
				return nil, fmt.Errorf("field %s (entry %d): missing field terminator", tag, i/12+1)
			}
		} else {
			fd = fd[:len(fd)-1]
		}
		var m8 *marc8Decoder
		if !utf8Rec {
			m8 = &marc8Decoder{}
			m8.reset()
		}
		f, err := decodeField(tag, fd, utf8Rec, m8, lenient)
		if err != nil {
			return nil, fmt.Errorf("field %s (entry %d): %w", tag, i/12+1, err)
		}
		rec.Fields = append(rec.Fields, f)
	}
	l := []byte(string(leader))
	if !utf8Rec {
		l[9] = 'a'
	}
	rec.Leader = string(l)
	return rec, nil
}

func decodeText(b []byte, utf8Rec bool, m8 *marc8Decoder, lenient bool) (string, error) {
	if utf8Rec {
		if utf8.Valid(b) {
			return string(b), nil
		}
		if !lenient {
			return "", errors.New("invalid UTF-8")
		}
		return string(bytes.ToValidUTF8(b, []byte("\uFFFD"))), nil
	}
	return m8.decode(b, lenient)
}

func decodeField(tag string, fd []byte, utf8Rec bool, m8 *marc8Decoder, lenient bool) (Field, error) {
	f := Field{Tag: tag}
	if IsControlTag(tag) {
		v, err := decodeText(fd, utf8Rec, m8, lenient)
		if err != nil {
			return f, err
		}
		f.Value = v
		return f, nil
	}
	parts := bytes.Split(fd, []byte{subfieldDelim})
	ind := parts[0]
	if len(ind) != 2 || !printable(ind[0]) || !printable(ind[1]) {
		if !lenient {
			return f, fmt.Errorf("invalid indicators %q", ind)
		}
		f.Ind1, f.Ind2 = ' ', ' '
		if len(ind) > 0 && printable(ind[0]) {
			f.Ind1 = ind[0]
		}
		if len(ind) > 1 && printable(ind[1]) {
			f.Ind2 = ind[1]
		}
	} else {
		f.Ind1, f.Ind2 = ind[0], ind[1]
	}
	for _, p := range parts[1:] {
		if len(p) == 0 {
			continue
		}
		code, skip := p[0], 1
		if code <= 0x20 || code >= 0x7F {
			if !lenient {
				return f, fmt.Errorf("invalid subfield code 0x%02X", code)
			}
			code, skip = repairCode(p)
		}
		v, err := decodeText(p[skip:], utf8Rec, m8, lenient)
		if err != nil {
			return f, fmt.Errorf("subfield %c: %w", code, err)
		}
		f.Subfields = append(f.Subfields, Subfield{Code: code, Value: v})
	}
	return f, nil
}

func printable(c byte) bool { return c >= 0x20 && c < 0x7F }

// repairCode derives a subfield code from a subfield starting with an
// invalid code byte, like pymarc: a UTF-8 letter is replaced by its base
// letter (á → a) and the whole character is skipped; otherwise the code
// becomes '?' and one byte is skipped.
func repairCode(p []byte) (byte, int) {
	r, size := utf8.DecodeRune(p)
	if size > 1 {
		d := appendDecomposed(nil, r)
		if len(d) > 0 && d[0] > 0x20 && d[0] < 0x7F {
			return byte(d[0]), size
		}
		return '?', size
	}
	return '?', 1
}

// Marshal encodes rec as an ISO 2709 record in UTF-8: leader/09 is set to
// 'a' and the record length and base address are recomputed. It fails if a
// tag is not three bytes, a value contains a MARC delimiter byte (0x1D,
// 0x1E, 0x1F), or the record or a field is too long for the format.
func Marshal(rec *Record) ([]byte, error) {
	if len(rec.Leader) != LeaderLen {
		return nil, fmt.Errorf("marc: marshal: leader has %d bytes, want %d", len(rec.Leader), LeaderLen)
	}
	var dir, body []byte
	for i := range rec.Fields {
		f := &rec.Fields[i]
		if len(f.Tag) != 3 {
			return nil, fmt.Errorf("marc: marshal: field %d: invalid tag %q", i+1, f.Tag)
		}
		start := len(body)
		if f.IsControl() {
			if hasDelim(f.Value) {
				return nil, fmt.Errorf("marc: marshal: field %s: value contains a delimiter", f.Tag)
			}
			body = append(body, f.Value...)
		} else {
			body = append(body, f.Ind1, f.Ind2)
			for _, s := range f.Subfields {
				if hasDelim(s.Value) || s.Code == subfieldDelim || s.Code == fieldTerminator || s.Code == recordTerminator {
					return nil, fmt.Errorf("marc: marshal: field %s: subfield contains a delimiter", f.Tag)
				}
				body = append(body, subfieldDelim, s.Code)
				body = append(body, s.Value...)
			}
		}
		body = append(body, fieldTerminator)
		flen := len(body) - start
		if flen > 9999 || start > 99999 {
			return nil, fmt.Errorf("marc: marshal: field %s too long for ISO 2709", f.Tag)
		}
		dir = append(dir, f.Tag...)
		dir = fmt.Appendf(dir, "%04d%05d", flen, start)
	}
	dir = append(dir, fieldTerminator)
	base := LeaderLen + len(dir)
	total := base + len(body) + 1
	if total > maxRecordLen {
		return nil, fmt.Errorf("marc: marshal: record length %d exceeds %d", total, maxRecordLen)
	}
	out := make([]byte, 0, total)
	out = fmt.Appendf(out, "%05d", total)
	out = append(out, rec.Leader[5:9]...)
	out = append(out, 'a')
	out = append(out, rec.Leader[10:12]...)
	out = fmt.Appendf(out, "%05d", base)
	out = append(out, rec.Leader[17:]...)
	out = append(out, dir...)
	out = append(out, body...)
	out = append(out, recordTerminator)
	return out, nil
}

func hasDelim(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == subfieldDelim || c == fieldTerminator || c == recordTerminator {
			return true
		}
	}
	return false
}
