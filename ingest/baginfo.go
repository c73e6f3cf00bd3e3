package ingest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// BagInfoField is one "Label: value" field of a BagIt tag file such as
// bag-info.txt or bagit.txt.
type BagInfoField struct {
	Label string
	Value string
}

// maxTagFile bounds the size of bagit.txt and bag-info.txt.
const maxTagFile = 1 << 20

// ParseBagInfo reads a BagIt tag file of "Label: value" lines (RFC 8493
// §2.2.2), in order. Lines end in LF, CR or CRLF; a line that starts with a
// space or tab continues the previous value (joined with one space); blank
// lines and a leading byte order mark are tolerated. Labels and values are
// trimmed of surrounding spaces and tabs. A line without a colon, an empty
// label, a continuation before any field, invalid UTF-8 or a NUL character
// is an error that names the line. Labels may repeat.
func ParseBagInfo(r io.Reader) ([]BagInfoField, error) {
	raw, err := io.ReadAll(io.LimitReader(r, maxTagFile+1))
	if err != nil {
		return nil, err
	}
	if len(raw) > maxTagFile {
		return nil, fmt.Errorf("longer than %d bytes", maxTagFile)
	}
	raw = bytes.TrimPrefix(raw, []byte("\ufeff"))
	if !utf8.Valid(raw) {
		return nil, fmt.Errorf("not valid UTF-8")
	}
	if bytes.IndexByte(raw, 0) >= 0 {
		return nil, fmt.Errorf("contains a NUL character")
	}
	var fields []BagInfoField
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 4096), maxTagFile+1)
	sc.Split(scanAnyLines)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if len(fields) == 0 {
				return nil, fmt.Errorf("line %d: a continuation line comes before any field", n)
			}
			f := &fields[len(fields)-1]
			if f.Value == "" {
				f.Value = strings.Trim(line, " \t")
			} else {
				f.Value += " " + strings.Trim(line, " \t")
			}
			continue
		}
		label, value, ok := strings.Cut(line, ":")
		if !ok {
			return nil, fmt.Errorf("line %d: %q is not a \"Label: value\" field", n, line)
		}
		label = strings.Trim(label, " \t")
		if label == "" {
			return nil, fmt.Errorf("line %d: the field has no label", n)
		}
		fields = append(fields, BagInfoField{Label: label, Value: strings.Trim(value, " \t")})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return fields, nil
}

// scanAnyLines is a bufio.SplitFunc for lines ending in LF, CR or CRLF.
func scanAnyLines(data []byte, atEOF bool) (int, []byte, error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		if data[i] == '\n' {
			return i + 1, data[:i], nil
		}
		if i+1 < len(data) {
			if data[i+1] == '\n' {
				return i + 2, data[:i], nil
			}
			return i + 1, data[:i], nil
		}
		if atEOF {
			return i + 1, data[:i], nil
		}
		return 0, nil, nil // a CR at the end: wait for a possible LF
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}
