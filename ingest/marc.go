package ingest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/marc"
)

// Media types of the source records a MARC file gives its works.
const (
	mediaMARC    = "application/marc"
	mediaMARCXML = "application/marcxml+xml"
)

// marcSource reads a file of MARC 21 records, ISO 2709 (MARC-8 or UTF-8)
// or MARCXML: each record becomes one work. Its metadata is the record
// mapped to Dublin Core by the Library of Congress crosswalk (marc.DublinCore),
// and the record itself is kept as the work's source file (use "source"):
// an ISO 2709 record byte for byte as it came, a MARCXML record as the
// MARCXML of that one record. The OAI-PMH provider disseminates it as
// marcxml.
//
// A work's source key is "marc:" followed by the record's 003 (when
// present), a colon, and its 001 control number, so the same record
// ingested twice, from any file, is stored once (the control number is the
// record's stated identifier, as a CSV manifest's source_identifier is); a
// record without a 001 is keyed by its content, "marc:record:" and a
// fingerprint of the record as it is kept (the ISO 2709 bytes, or the
// MARCXML of the record), so that records of different files never share a
// key and the same record is still stored once. A bad record is reported
// by the file's name and its position, and skipped.
type marcSource struct {
	path, name string
	f          *os.File
	xml        bool
	iso        *marc.Reader
	xr         *marc.XMLReader
	pos        int
}

var _ Counter = (*marcSource)(nil)

// IsMARCFile reports whether path names a file the MARC reader takes, by
// its extension: .mrc, .marc, .dat or .iso (ISO 2709) or .xml (MARCXML).
func IsMARCFile(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".mrc", ".marc", ".dat", ".iso", ".xml":
		return true
	}
	return false
}

// OpenMARC opens a file of MARC records: MARCXML when its name ends in
// .xml, ISO 2709 otherwise.
func OpenMARC(path string) (Source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	s := &marcSource{path: path, name: filepath.Base(path), f: f, xml: strings.EqualFold(filepath.Ext(path), ".xml")}
	br := bufio.NewReaderSize(f, 256<<10)
	if s.xml {
		s.xr = marc.NewXMLReader(br)
	} else {
		s.iso = marc.NewReader(br)
	}
	return s, nil
}

// Next implements Source.
func (s *marcSource) Next(ctx context.Context) (*Item, error) {
	if s.f == nil {
		return nil, errClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var rec *marc.Record
	var err error
	if s.xml {
		rec, err = s.xr.Next()
	} else {
		rec, err = s.iso.Next()
	}
	if err == io.EOF {
		return nil, io.EOF
	}
	s.pos++
	var re *marc.RecordError
	if errors.As(err, &re) {
		s.pos = re.Position
		return nil, &ItemError{Key: s.positionKey(), Row: re.Position, Reason: fmt.Sprintf("record %d (byte %d) is not a valid MARC record: %s", re.Position, re.Offset, re.Reason), Err: err}
	}
	if err != nil {
		return nil, fmt.Errorf("ingest: %s: record %d: %w", s.name, s.pos, err)
	}
	var data []byte
	var media, name string
	if s.xml {
		media, name = mediaMARCXML, "record.xml"
		if data, err = marc.AppendXML(nil, rec); err != nil {
			return nil, &ItemError{Key: s.positionKey(), Row: s.pos, Reason: fmt.Sprintf("record %d cannot be written as MARCXML: %v", s.pos, err), Err: err}
		}
	} else {
		data, media, name = bytes.Clone(s.iso.Raw()), mediaMARC, "record.mrc"
	}
	it := &Item{Key: s.recordKey(rec, data), Metadata: marcMetadata(rec)}
	if strings.HasPrefix(it.Key, "marc:record:") {
		it.FormerKey = s.positionKey()
	}
	it.Files = []FileRef{{Path: s.path, Name: name, Size: int64(len(data)), MediaType: media, Use: shelfmark.UseSource,
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}}
	return it, nil
}

// positionKey keys the record at the current position.
func (s *marcSource) positionKey() string { return fmt.Sprintf("marc:%s#%d", s.name, s.pos) }

// recordKey is the source key of a record kept as data (see marcSource).
func (s *marcSource) recordKey(rec *marc.Record, data []byte) string {
	var id, org string
	for _, f := range rec.Fields {
		switch f.Tag {
		case "001":
			if id == "" {
				id = strings.TrimSpace(f.Value)
			}
		case "003":
			if org == "" {
				org = strings.TrimSpace(f.Value)
			}
		}
	}
	if id == "" {
		fp := newFingerprint("marc")
		fp.str(string(data))
		return "marc:record:" + fp.sum()
	}
	return "marc:" + org + ":" + id
}

// marcMetadata maps a record to Dublin Core statements.
func marcMetadata(rec *marc.Record) []shelfmark.Statement {
	dc := marc.DublinCore(rec)
	out := make([]shelfmark.Statement, 0, len(dc))
	for _, v := range dc {
		o := shelfmark.NewLiteral(v.Value)
		if v.Lang != "" {
			o = shelfmark.NewLangLiteral(v.Value, v.Lang)
		}
		out = append(out, shelfmark.Statement{Predicate: shelfmark.NSDC + v.Element, Object: o})
	}
	return shelfmark.DedupeStatements(out)
}

// Close implements Source.
func (s *marcSource) Close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// Count implements Counter: record terminators (ISO 2709) or closing
// record tags (MARCXML), in one pass over the file.
func (s *marcSource) Count(ctx context.Context) (int64, error) {
	f, err := os.Open(s.path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var n int64
	buf := make([]byte, 1<<20)
	var carry []byte
	tail := false
	for {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		k, err := f.Read(buf)
		chunk := append(carry, buf[:k]...)
		if s.xml {
			n += int64(countRecordEnds(chunk, len(carry)))
			if len(chunk) > 64 {
				carry = append(carry[:0], chunk[len(chunk)-64:]...)
			} else {
				carry = append(carry[:0], chunk...)
			}
		} else {
			n += int64(bytes.Count(buf[:k], []byte{0x1D}))
			// bytes after the last terminator are one more (truncated) record
			if k > 0 {
				if i := bytes.LastIndexByte(buf[:k], 0x1D); i < 0 {
					tail = tail || len(bytes.TrimSpace(buf[:k])) > 0
				} else {
					tail = len(bytes.TrimSpace(buf[i+1:k])) > 0
				}
			}
		}
		if err == io.EOF {
			if tail {
				n++
			}
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// countRecordEnds counts "</record>" and "</prefix:record>" in b that end
// after byte skip (the tail carried over from the previous chunk, whose
// tags were counted there).
func countRecordEnds(b []byte, skip int) int {
	n := 0
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte("record>"))
		if j < 0 {
			return n
		}
		end := i + j
		k := end - 1
		for k >= 0 && k > end-40 && b[k] != '<' {
			k--
		}
		if k >= 0 && b[k] == '<' && k+1 < len(b) && b[k+1] == '/' {
			tag := b[k+2 : end]
			if (len(tag) == 0 || tag[len(tag)-1] == ':') && end+len("record>") > skip {
				n++
			}
		}
		i = end + len("record>")
	}
}
