package warc

import (
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"
	"time"
)

// Writer writes WARC files, plain or gzipped one record per member: the
// generator of test and benchmark crawls. It is not safe for concurrent
// use.
type Writer struct {
	w       io.Writer
	gzip    bool
	version string
	off     int64
	rec     bytes.Buffer
	blk     bytes.Buffer
	zbuf    bytes.Buffer
	zw      *gzip.Writer
}

// NewWriter returns a Writer to w; version is "1.0" or "1.1".
func NewWriter(w io.Writer, gzipped bool, version string) *Writer {
	if version != "1.0" {
		version = "1.1"
	}
	wr := &Writer{w: w, gzip: gzipped, version: version}
	if gzipped {
		wr.zw, _ = gzip.NewWriterLevel(&wr.zbuf, gzip.BestSpeed)
	}
	return wr
}

// SetLevel sets the gzip compression level of the following records
// (compress/gzip's levels; the default is gzip.BestSpeed). Compressing
// costs some 25 µs a member whatever its size (flate builds its Huffman
// tables per member); gzip.NoCompression writes stored members several
// times faster, for generating large crawls where file size does not
// matter.
func (w *Writer) SetLevel(level int) error {
	if !w.gzip {
		return nil
	}
	zw, err := gzip.NewWriterLevel(&w.zbuf, level)
	if err != nil {
		return fmt.Errorf("warc writer: %w", err)
	}
	w.zw = zw
	return nil
}

// Offset returns how many bytes were written.
func (w *Writer) Offset() int64 { return w.off }

// RecordID returns the deterministic WARC-Record-ID the Writer gives a
// record of type typ for target at t.
func RecordID(typ, target string, t time.Time) string {
	h := sha1.Sum([]byte(typ + "\x00" + target + "\x00" + t.UTC().Format(time.RFC3339Nano)))
	h[6] = h[6]&0x0f | 0x50 // version 5
	h[8] = h[8]&0x3f | 0x80 // variant
	return fmt.Sprintf("<urn:uuid:%x-%x-%x-%x-%x>", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// Digest returns the "sha1:BASE32" digest of b.
func Digest(b []byte) string {
	h := sha1.Sum(b)
	return "sha1:" + base32.StdEncoding.EncodeToString(h[:])
}

func (w *Writer) date(t time.Time) string {
	if w.version == "1.0" {
		return t.UTC().Format("2006-01-02T15:04:05Z")
	}
	return t.UTC().Format("2006-01-02T15:04:05.000000Z")
}

// WriteResponse writes a response record: an HTTP/1.1 response with
// status, Content-Type and body, captured from target at t.
func (w *Writer) WriteResponse(target string, t time.Time, status int, contentType string, body []byte) (offset, length int64, err error) {
	var h [][2]string
	if contentType != "" {
		h = [][2]string{{"Content-Type", contentType}}
	}
	return w.WriteResponseHeader(target, t, status, h, body)
}

// WriteRedirect writes a response record of a redirect (status 301, 302,
// 303, 307 or 308) from target to location, captured at t, with a small
// HTML body linking to location, as servers send them.
func (w *Writer) WriteRedirect(target string, t time.Time, status int, location string) (offset, length int64, err error) {
	body := []byte(`<html><body><a href="` + html.EscapeString(location) + `">Moved</a></body></html>`)
	return w.WriteResponseHeader(target, t, status, [][2]string{{"Location", location}, {"Content-Type", "text/html"}}, body)
}

// WriteResponseHeader writes a response record: an HTTP/1.1 response
// with status, the header fields (name, value) in order and body,
// captured from target at t. Content-Length is added.
func (w *Writer) WriteResponseHeader(target string, t time.Time, status int, header [][2]string, body []byte) (offset, length int64, err error) {
	w.blk.Reset()
	fmt.Fprintf(&w.blk, "HTTP/1.1 %d %s\r\n", status, statusText(status))
	for _, f := range header {
		w.blk.WriteString(f[0] + ": " + f[1] + "\r\n")
	}
	w.blk.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
	w.blk.Write(body)
	return w.WriteRecord("response", [][2]string{
		{"WARC-Target-URI", target},
		{"WARC-Date", w.date(t)},
		{"WARC-Record-ID", RecordID("response", target, t)},
		{"WARC-Payload-Digest", Digest(body)},
		{"WARC-Block-Digest", Digest(w.blk.Bytes())},
		{"Content-Type", "application/http;msgtype=response"},
	}, w.blk.Bytes())
}

func statusText(code int) string {
	switch code {
	case 200:
		return "OK"
	case 301:
		return "Moved Permanently"
	case 302:
		return "Found"
	case 303:
		return "See Other"
	case 307:
		return "Temporary Redirect"
	case 308:
		return "Permanent Redirect"
	case 404:
		return "Not Found"
	case 500:
		return "Internal Server Error"
	}
	return "Status"
}

// WriteMetadataWAT writes a metadata record holding Common Crawl WAT JSON
// for an HTML page at target whose <a> links are links.
func (w *Writer) WriteMetadataWAT(target string, t time.Time, links []string) (offset, length int64, err error) {
	type link struct {
		Path string `json:"path"`
		URL  string `json:"url"`
	}
	ls := make([]link, len(links))
	for i, l := range links {
		ls[i] = link{"A@/href", l}
	}
	doc := map[string]any{
		"Envelope": map[string]any{
			"WARC-Header-Metadata": map[string]any{"WARC-Target-URI": target, "WARC-Type": "response"},
			"Payload-Metadata": map[string]any{
				"HTTP-Response-Metadata": map[string]any{
					"Response-Message": map[string]any{"Status": "200"},
					"HTML-Metadata":    map[string]any{"Head": map[string]any{"Title": "page"}, "Links": ls},
				},
			},
		},
	}
	block, err := json.Marshal(doc)
	if err != nil {
		return 0, 0, err
	}
	return w.WriteRecord("metadata", [][2]string{
		{"WARC-Target-URI", target},
		{"WARC-Date", w.date(t)},
		{"WARC-Record-ID", RecordID("metadata", target, t)},
		{"Content-Type", "application/json"},
	}, block)
}

// WriteWarcinfo writes a warcinfo record naming the file, dated now.
func (w *Writer) WriteWarcinfo(filename string) error {
	_, _, err := w.WriteWarcinfoAt(time.Now(), filename, [][2]string{{"software", "Shelfmark"}, {"format", "WARC File Format " + w.version}})
	return err
}

// WriteWarcinfoAt writes a warcinfo record dated t whose block holds the
// given fields.
func (w *Writer) WriteWarcinfoAt(t time.Time, filename string, fields [][2]string) (offset, length int64, err error) {
	var b bytes.Buffer
	for _, f := range fields {
		b.WriteString(f[0] + ": " + f[1] + "\r\n")
	}
	return w.WriteRecord("warcinfo", [][2]string{
		{"WARC-Date", w.date(t)},
		{"WARC-Filename", filename},
		{"WARC-Record-ID", RecordID("warcinfo", filename, t)},
		{"Content-Type", "application/warc-fields"},
	}, b.Bytes())
}

// Close ends the file. Every record is written when its Write call
// returns, so there is nothing to flush; Close does not close the
// underlying writer.
func (w *Writer) Close() error { return nil }

// WriteRecord writes a record of type typ with the header fields
// (name, value) in order and block. WARC-Type and Content-Length are
// added, and a WARC-Record-ID made from the type, target and date when
// fields have none. It returns the record's offset and length as Reader
// reports them: the gzip member when gzipped, else the record without
// its closing CRLFCRLF.
func (w *Writer) WriteRecord(typ string, fields [][2]string, block []byte) (offset, length int64, err error) {
	w.rec.Reset()
	w.rec.WriteString("WARC/" + w.version + "\r\nWARC-Type: " + typ + "\r\n")
	hasID := false
	var target, date string
	for _, f := range fields {
		switch strings.ToLower(f[0]) {
		case "warc-record-id":
			hasID = true
		case "warc-target-uri":
			target = f[1]
		case "warc-date":
			date = f[1]
		}
	}
	if !hasID {
		t, _ := time.Parse(time.RFC3339Nano, date)
		w.rec.WriteString("WARC-Record-ID: " + RecordID(typ, target+"\x00"+date, t) + "\r\n")
	}
	for _, f := range fields {
		w.rec.WriteString(f[0] + ": " + f[1] + "\r\n")
	}
	w.rec.WriteString("Content-Length: " + strconv.Itoa(len(block)) + "\r\n\r\n")
	w.rec.Write(block)
	w.rec.WriteString("\r\n\r\n")
	offset, length, err = w.WriteRaw(w.rec.Bytes())
	if !w.gzip && err == nil {
		length -= 4 // as Reader (and warcio) count a plain record
	}
	return offset, length, err
}

// WriteRaw writes b as it is (gzipped as one member when the Writer
// gzips): a record built by hand, or bad bytes for tests.
func (w *Writer) WriteRaw(b []byte) (offset, length int64, err error) {
	out := b
	if w.gzip {
		w.zbuf.Reset()
		w.zw.Reset(&w.zbuf)
		if _, err := w.zw.Write(b); err != nil {
			return 0, 0, err
		}
		if err := w.zw.Close(); err != nil {
			return 0, 0, err
		}
		out = w.zbuf.Bytes()
	}
	return w.WriteBytes(out)
}

// WriteBytes writes b to the file without compressing it.
func (w *Writer) WriteBytes(b []byte) (offset, length int64, err error) {
	offset = w.off
	n, err := w.w.Write(b)
	w.off += int64(n)
	if err != nil {
		return offset, int64(n), fmt.Errorf("warc write: %w", err)
	}
	return offset, int64(n), nil
}

// Kinds of bad record WriteBad writes; each makes Reader report one
// RecordError at the record's offset and go on with the next record.
const (
	// BadLongContentLength: a response whose Content-Length says 10 bytes
	// more than its block holds.
	BadLongContentLength = "content-length-long"
	// BadShortContentLength: a response whose Content-Length says 10 bytes
	// less than its block holds.
	BadShortContentLength = "content-length-short"
	// BadTruncated: a response cut off two thirds through (its gzip member
	// too when gzipped).
	BadTruncated = "truncated"
	// BadNoTarget: a response without WARC-Target-URI.
	BadNoTarget = "no-target"
	// BadWATJSON: a WAT metadata record whose JSON is cut off.
	BadWATJSON = "wat-json"
	// BadGarbage: bytes that are no record (not gzipped).
	BadGarbage = "garbage"
)

// WriteBad writes a bad record of the given kind for target at t, for
// tests of bad input, and returns its offset.
func (w *Writer) WriteBad(kind, target string, t time.Time) (offset int64, err error) {
	body := []byte(`<html><body><a href="/bad">bad</a></body></html>`)
	block := fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	fields := [][2]string{
		{"WARC-Target-URI", target},
		{"WARC-Date", w.date(t)},
		{"WARC-Record-ID", RecordID("bad-"+kind, target, t)},
		{"Content-Type", "application/http;msgtype=response"},
	}
	typ := "response"
	delta := 0
	switch kind {
	case BadLongContentLength:
		delta = 10
	case BadShortContentLength:
		delta = -10
	case BadTruncated:
	case BadNoTarget:
		fields = fields[1:]
	case BadWATJSON:
		typ = "metadata"
		fields[3][1] = "application/json"
		block = `{"Envelope":{"Payload-Metadata":{"HTTP-Response-Metadata":{"HTML-Metadata":{"Links":[{"path":"A@/href","url":"/x"}`
	case BadGarbage:
		offset, _, err = w.WriteBytes([]byte("this is no WARC record\r\n"))
		return offset, err
	default:
		return 0, fmt.Errorf("warc writer: no bad record kind %q", kind)
	}
	var b bytes.Buffer
	b.WriteString("WARC/" + w.version + "\r\nWARC-Type: " + typ + "\r\n")
	for _, f := range fields {
		b.WriteString(f[0] + ": " + f[1] + "\r\n")
	}
	b.WriteString("Content-Length: " + strconv.Itoa(len(block)+delta) + "\r\n\r\n" + block + "\r\n\r\n")
	raw := b.Bytes()
	if kind != BadTruncated {
		offset, _, err = w.WriteRaw(raw)
		return offset, err
	}
	if w.gzip {
		w.zbuf.Reset()
		w.zw.Reset(&w.zbuf)
		w.zw.Write(raw)
		if err := w.zw.Close(); err != nil {
			return 0, err
		}
		raw = w.zbuf.Bytes()
	}
	offset, _, err = w.WriteBytes(raw[:len(raw)*2/3])
	return offset, err
}
