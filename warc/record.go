package warc

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/textproto"
	"strconv"
	"strings"
)

// Field is one WARC header field.
type Field struct {
	Name, Value string
}

// Fields are a record's WARC header fields in their order.
type Fields []Field

// Get returns the value of the first field named name (case does not
// matter), or "".
func (f Fields) Get(name string) string {
	for _, x := range f {
		if strings.EqualFold(x.Name, name) {
			return x.Value
		}
	}
	return ""
}

// Record is one WARC record opened in place for replay.
type Record struct {
	// Header holds the WARC header fields.
	Header Fields
	// Status is the HTTP status of a response or revisit record with an
	// HTTP block; 0 otherwise.
	Status int
	// HTTPHeader holds the original HTTP response headers, as captured
	// (Transfer-Encoding and Content-Encoding included); nil when the
	// block is not an HTTP response.
	HTTPHeader http.Header
	// Body is the payload: for an HTTP response the body, de-chunked
	// when it was sent chunked but not content-decoded; else the block.
	Body io.Reader

	gz *gzip.Reader
}

// Close releases the record's decompressor.
func (r *Record) Close() error {
	if r.gz != nil {
		return r.gz.Close()
	}
	return nil
}

// OpenRecord reads the record at offset of length bytes (a gzip member
// when the file is gzipped, as Reader reports them) from r, streaming its
// payload.
func OpenRecord(r io.ReaderAt, offset, length int64) (*Record, error) {
	if offset < 0 || length <= 0 {
		return nil, fmt.Errorf("warc record at %d: bad length %d", offset, length)
	}
	sr := io.NewSectionReader(r, offset, length)
	var in io.Reader = sr
	rec := &Record{}
	var m [2]byte
	if n, _ := r.ReadAt(m[:], offset); n == 2 && m[0] == 0x1f && m[1] == 0x8b {
		gz, err := gzip.NewReader(bufio.NewReader(sr))
		if err != nil {
			return nil, fmt.Errorf("warc record at %d: gzip: %w", offset, err)
		}
		gz.Multistream(false)
		rec.gz, in = gz, gz
	}
	br := bufio.NewReaderSize(in, 16<<10)
	fail := func(format string, args ...any) (*Record, error) {
		rec.Close()
		return nil, fmt.Errorf("warc record at %d: %s", offset, fmt.Sprintf(format, args...))
	}
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "WARC/1.") {
		return fail("no WARC record here")
	}
	size := 0
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return fail("truncated WARC header")
		}
		if size += len(line); size > maxHeader {
			return fail("WARC header longer than %d bytes", maxHeader)
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if (line[0] == ' ' || line[0] == '\t') && len(rec.Header) > 0 {
			rec.Header[len(rec.Header)-1].Value += " " + strings.TrimSpace(line)
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return fail("bad WARC header line %q", trunc(line))
		}
		rec.Header = append(rec.Header, Field{strings.TrimSpace(name), strings.TrimSpace(value)})
	}
	cl, err := strconv.ParseInt(rec.Header.Get("Content-Length"), 10, 64)
	if err != nil || cl < 0 {
		return fail("bad Content-Length %q", rec.Header.Get("Content-Length"))
	}
	block := io.LimitReader(br, cl)
	typ := strings.ToLower(rec.Header.Get("WARC-Type"))
	ct := strings.ToLower(rec.Header.Get("Content-Type"))
	rec.Body = block
	if (typ == "response" || typ == "revisit") && strings.HasPrefix(ct, "application/http") {
		bb := bufio.NewReader(block)
		if p, _ := bb.Peek(5); !bytes.Equal(p, []byte("HTTP/")) {
			// not an HTTP response after all: the block as it is
			rec.Body = bb
			return rec, nil
		}
		tp := textproto.NewReader(bb)
		status, err := tp.ReadLine()
		if err != nil {
			return fail("HTTP status line: %v", err)
		}
		f := strings.Fields(status)
		if len(f) < 2 {
			return fail("bad HTTP status line %q", trunc(status))
		}
		if rec.Status, err = strconv.Atoi(f[1]); err != nil {
			return fail("bad HTTP status line %q", trunc(status))
		}
		h, err := tp.ReadMIMEHeader()
		if err != nil && !errors.Is(err, io.EOF) {
			return fail("HTTP header: %v", err)
		}
		rec.HTTPHeader = http.Header(h)
		if rec.HTTPHeader == nil {
			rec.HTTPHeader = http.Header{}
		}
		rec.Body = bb
		for _, te := range rec.HTTPHeader.Values("Transfer-Encoding") {
			if strings.Contains(strings.ToLower(te), "chunked") {
				rec.Body = httputil.NewChunkedReader(bb)
				break
			}
		}
	}
	return rec, nil
}
