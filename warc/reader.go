package warc

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"time"

	gowarc "github.com/nlnwa/gowarc/v2"

	"github.com/shelfmark/shelfmark"
)

// Options tune a Reader.
type Options struct {
	// MaxLinkBytes caps the bytes of an HTML payload (after transfer and
	// content decoding) parsed for links; 0 is 4 MiB.
	MaxLinkBytes int64
	// MaxWATBytes caps the size of a WAT JSON metadata record whose links
	// are read; a larger one is a RecordError. 0 is 32 MiB.
	MaxWATBytes int64
	// TempDir is where gowarc would spill a block it buffers beyond
	// BufferMemBytes ("" is os.TempDir; BufferMemBytes 0 is 1 MiB). With
	// the options the Reader gives gowarc (no validation, no digests
	// recomputed) it buffers no block, so nothing is written there today.
	TempDir        string
	BufferMemBytes int64
}

func (o Options) withDefaults() Options {
	if o.MaxLinkBytes <= 0 {
		o.MaxLinkBytes = 4 << 20
	}
	if o.MaxWATBytes <= 0 {
		o.MaxWATBytes = 32 << 20
	}
	if o.BufferMemBytes <= 0 {
		o.BufferMemBytes = 1 << 20
	}
	return o
}

// RecordError reports a record that could not be read; the Reader goes
// on with the next record.
type RecordError struct {
	// Offset is where the bad record starts in the file.
	Offset int64
	// Reason tells what is wrong with it.
	Reason string
}

// Error implements error.
func (e *RecordError) Error() string {
	return fmt.Sprintf("offset %d: %s", e.Offset, e.Reason)
}

// maxHeader caps a record's WARC header; maxHTTPHeader caps the HTTP
// header of a block gowarc parses (it holds it in memory).
const (
	maxHeader     = 64 << 10
	maxHTTPHeader = 64 << 10
)

// Reader reads the records of one WARC file (plain or gzipped one record
// per member, WARC 1.0 or 1.1) in order, as index rows. It is not safe
// for concurrent use.
type Reader struct {
	src    *source
	size   int64
	off    int64
	gzip   bool
	opts   Options
	u      gowarc.Unmarshaler // parses HTTP blocks
	uSkip  gowarc.Unmarshaler // streams the block past
	gz     *gzip.Reader
	br     *bufio.Reader
	st     stream
	probed bool
	body   bytes.Reader
	hdr    header
}

// NewReader returns a Reader of the file r of size bytes, starting at
// offset, which is 0 or a value Offset returned.
func NewReader(r io.ReaderAt, size, offset int64, opts Options) *Reader {
	opts = opts.withDefaults()
	rd := &Reader{
		src:  newSource(r, size),
		size: size,
		off:  offset,
		opts: opts,
	}
	base := []gowarc.WarcRecordOption{
		gowarc.WithSyntaxErrorPolicy(gowarc.ErrIgnore),
		gowarc.WithSpecViolationPolicy(gowarc.ErrIgnore),
		gowarc.WithUnknownRecordTypePolicy(gowarc.ErrIgnore),
		gowarc.WithBlockErrorPolicy(gowarc.ErrIgnore),
		gowarc.WithAddMissingRecordId(false),
		gowarc.WithAddMissingContentLength(false),
		gowarc.WithAddMissingDigest(false),
		gowarc.WithFixContentLength(false),
		gowarc.WithFixDigest(false),
		gowarc.WithFixSyntaxErrors(false),
		gowarc.WithBufferMaxMemBytes(opts.BufferMemBytes),
		gowarc.WithBufferTmpDir(opts.TempDir),
	}
	rd.u = gowarc.NewUnmarshaler(base...)
	rd.uSkip = gowarc.NewUnmarshaler(append(base, gowarc.WithSkipParseBlock())...)
	rd.br = bufio.NewReaderSize(&rd.st, maxHeader+maxHTTPHeader)
	return rd
}

// Offset returns where the next record starts: a Reader made with it
// continues exactly after the records read so far.
func (r *Reader) Offset() int64 { return r.off }

// probe detects a gzipped file by its first bytes.
func (r *Reader) probe() {
	r.probed = true
	var m [2]byte
	if n, _ := r.src.r.ReadAt(m[:], 0); n == 2 && m[0] == 0x1f && m[1] == 0x8b {
		r.gzip = true
	}
}

// Next returns the next record, io.EOF after the last, or a *RecordError
// for a bad one (the following call goes on after it).
func (r *Reader) Next(ctx context.Context) (*shelfmark.WebRecord, error) {
	if !r.probed {
		r.probe()
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if r.off >= r.size {
			return nil, io.EOF
		}
		start := r.off
		if !r.atRecord(start) {
			next, err := r.resync(ctx, start)
			if err != nil {
				return nil, err
			}
			next = max(next, start+1)
			r.off = next
			if r.blank(start, next) {
				continue
			}
			return nil, &RecordError{Offset: start, Reason: fmt.Sprintf("no WARC record starts here (%d bytes skipped)", next-start)}
		}
		rec, next, reason := r.read(start)
		if reason == "" {
			r.off = next
			return rec, nil
		}
		if next <= start {
			n, err := r.resync(ctx, start+1)
			if err != nil {
				return nil, err
			}
			next = n
		}
		r.off = next
		return nil, &RecordError{Offset: start, Reason: reason}
	}
}

// atRecord reports whether a record (or gzip member) starts at off.
func (r *Reader) atRecord(off int64) bool {
	var b [7]byte
	n, _ := r.src.r.ReadAt(b[:], off)
	if r.gzip {
		return n >= 3 && b[0] == 0x1f && b[1] == 0x8b && b[2] == 8
	}
	return n == 7 && string(b[:]) == "WARC/1."
}

// blank reports whether [from, to) holds only whitespace or NULs
// (padding some writers leave between or after records).
func (r *Reader) blank(from, to int64) bool {
	buf := make([]byte, 4096)
	for p := from; p < to; {
		n, _ := r.src.r.ReadAt(buf[:min(int64(len(buf)), to-p)], p)
		if n == 0 {
			return false
		}
		for _, c := range buf[:n] {
			if c != '\r' && c != '\n' && c != ' ' && c != '\t' && c != 0 {
				return false
			}
		}
		p += int64(n)
	}
	return true
}

// resync finds the first record start at or after from (the file size
// when there is none): for a gzipped file a gzip member that decompresses
// to "WARC/1.", for a plain one "WARC/1." at the start of a line or a
// whole "WARC/1.0" or "WARC/1.1" line.
func (r *Reader) resync(ctx context.Context, from int64) (int64, error) {
	pat := []byte("WARC/1.")
	if r.gzip {
		pat = []byte{0x1f, 0x8b, 8}
	}
	const chunk = 1 << 20
	buf := make([]byte, min(chunk, max(r.size-from, 0))+int64(len(pat)))
	for p := from; p < r.size; p += chunk {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		n, _ := r.src.r.ReadAt(buf[:min(int64(len(buf)), r.size-p)], p)
		if n == 0 {
			break
		}
		b := buf[:n]
		for i := 0; ; {
			j := bytes.Index(b[i:], pat)
			if j < 0 || i+j >= chunk {
				break
			}
			c := p + int64(i+j)
			if r.gzip && r.validMember(c) || !r.gzip && (r.lineStart(c, b, p) || r.versionLine(c)) {
				return c, nil
			}
			i += j + 1
		}
	}
	return r.size, nil
}

// versionLine reports whether a whole "WARC/1.0" or "WARC/1.1" line
// starts at c (a record that follows a truncated one starts mid-line).
func (r *Reader) versionLine(c int64) bool {
	var x [10]byte
	n, _ := r.src.r.ReadAt(x[:], c)
	return n == 10 && (string(x[:]) == "WARC/1.0\r\n" || string(x[:]) == "WARC/1.1\r\n")
}

func (r *Reader) lineStart(c int64, b []byte, p int64) bool {
	if c == 0 {
		return true
	}
	if c-1 >= p {
		return b[c-1-p] == '\n'
	}
	var x [1]byte
	n, _ := r.src.r.ReadAt(x[:], c-1)
	return n == 1 && x[0] == '\n'
}

// validMember reports whether a gzip member starting at off begins with a
// WARC record.
func (r *Reader) validMember(off int64) bool {
	r.src.seek(off)
	if err := r.resetGzip(); err != nil {
		return false
	}
	var b [7]byte
	_, err := io.ReadFull(r.gz, b[:])
	return err == nil && string(b[:]) == "WARC/1."
}

func (r *Reader) resetGzip() error {
	var err error
	if r.gz == nil {
		r.gz, err = gzip.NewReader(r.src)
	} else {
		err = r.gz.Reset(r.src)
	}
	if err != nil {
		return err
	}
	r.gz.Multistream(false)
	return nil
}

// header is what read learns from a WARC header before gowarc parses it.
type header struct {
	length      int // of the header, with its blank line
	contentLen  int64
	typ         string
	contentType string
}

// peekHeader finds the end of the WARC header in br and reads the fields
// framing needs.
func peekHeader(br *bufio.Reader) (header, string) {
	var h header
	var p []byte
	for n := 2048; ; n *= 4 {
		n = min(n, maxHeader)
		var err error
		p, err = br.Peek(n)
		if i := bytes.Index(p, []byte("\r\n\r\n")); i >= 0 {
			p = p[:i+2]
			h.length = i + 4
			break
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return h, "truncated WARC header"
		}
		if n == maxHeader {
			return h, fmt.Sprintf("WARC header longer than %d bytes", maxHeader)
		}
	}
	haveLen := false
	first := true
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		line := p[:i]
		p = p[i+1:]
		if first {
			first = false
			continue
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			if len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
				continue // a continuation line
			}
			return h, fmt.Sprintf("bad WARC header line %q", trunc(string(bytes.TrimSpace(line))))
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Length")):
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 {
				return h, fmt.Sprintf("bad Content-Length %q", value)
			}
			h.contentLen, haveLen = n, true
		case bytes.EqualFold(bytes.TrimSpace(name), []byte("WARC-Type")):
			h.typ = strings.ToLower(string(value))
		case bytes.EqualFold(bytes.TrimSpace(name), []byte("Content-Type")):
			h.contentType = strings.ToLower(string(value))
		}
	}
	if !haveLen {
		return h, "no Content-Length"
	}
	return h, ""
}

// read reads the record at start. It returns the record and where the
// next one starts, or a reason why it is bad and where the next one
// starts (a value <= start when that is unknown).
func (r *Reader) read(start int64) (*shelfmark.WebRecord, int64, string) {
	r.src.seek(start)
	if r.gzip {
		if err := r.resetGzip(); err != nil {
			return nil, -1, "gzip: " + err.Error()
		}
		r.st.reset(r.gz, 0)
	} else {
		r.st.reset(r.src, 8<<10)
	}
	r.br.Reset(&r.st)
	rec, reason := r.parse(start)
	if !r.gzip {
		if reason != "" {
			return nil, rec.endOrUnknown(), reason
		}
		// warcio's length of a plain record leaves out the CRLFCRLF
		rec.Length -= 4
		return rec.WebRecord, rec.end, ""
	}
	// read the member to its end: its length, its CRC, and whether the
	// record filled it exactly
	whole := false
	if reason == "" {
		p, _ := r.br.Peek(7)
		whole = string(p) == "WARC/1."
	}
	_, err := io.Copy(io.Discard, r.br)
	if err != nil {
		if reason == "" {
			reason = "gzip: " + err.Error()
		}
		return nil, -1, reason
	}
	end := r.src.pos
	if whole {
		reason = "the gzip member holds more than one record: the file is gzipped as a whole, not record by record"
	} else if reason == "" && r.st.n != rec.Length {
		reason = fmt.Sprintf("Content-Length %d does not match the gzip member, which holds %d bytes after the header", rec.Length-int64(r.hdr.length)-4, r.st.n-int64(r.hdr.length))
	}
	if reason != "" {
		return nil, end, reason
	}
	rec.Length = end - start
	return rec.WebRecord, end, ""
}

// parsed is a record being read: WebRecord's Length is first the length
// of the uncompressed record.
type parsed struct {
	*shelfmark.WebRecord
	end int64
}

func (p *parsed) endOrUnknown() int64 {
	if p == nil {
		return -1
	}
	return p.end
}

// parse reads the record from r.br; for a plain file the returned
// record's end is known when the framing is good even if the record is
// bad.
func (r *Reader) parse(start int64) (*parsed, string) {
	if p, _ := r.br.Peek(7); string(p) != "WARC/1." {
		return nil, "no WARC record at the start of the gzip member"
	}
	h, reason := peekHeader(r.br)
	if reason != "" {
		return nil, reason
	}
	r.hdr = h
	total := int64(h.length) + h.contentLen + 4
	out := &parsed{WebRecord: &shelfmark.WebRecord{Offset: start, Length: total}, end: -1}
	if !r.gzip {
		end := start + total
		if end > r.size {
			return nil, fmt.Sprintf("Content-Length %d runs past the end of the file", h.contentLen)
		}
		var m [4]byte
		if n, _ := r.src.r.ReadAt(m[:], end-4); n != 4 || string(m[:]) != "\r\n\r\n" {
			return nil, fmt.Sprintf("Content-Length %d does not end at the record's end (no CRLFCRLF there)", h.contentLen)
		}
		out.end = end
	}
	// capture the start of the block for links
	var capMax int64
	switch {
	case h.typ == "response" && strings.HasPrefix(h.contentType, "application/http"):
		capMax = r.opts.MaxLinkBytes + 64<<10
	case h.typ == "metadata" && strings.HasPrefix(h.contentType, "application/json"):
		if h.contentLen > r.opts.MaxWATBytes {
			return out, fmt.Sprintf("WAT metadata of %d bytes is larger than %d bytes", h.contentLen, r.opts.MaxWATBytes)
		}
		capMax = h.contentLen
	}
	if capMax > 0 {
		r.st.capTo = int64(h.length) + min(h.contentLen, capMax)
		buffered := r.br.Buffered()
		p, _ := r.br.Peek(buffered)
		if int64(buffered) > int64(h.length) {
			r.st.capture = append(r.st.capture, p[h.length:min(int64(buffered), r.st.capTo)]...)
		}
		r.st.capFrom = max(int64(buffered), int64(h.length))
	}
	u := r.uSkip
	if r.parseHTTP(h) {
		u = r.u
	}
	wr, _, _, err := u.Unmarshal(r.br)
	if wr != nil {
		defer wr.Close()
	}
	if err != nil {
		return out, "WARC record: " + err.Error()
	}
	if reason := r.fill(out.WebRecord, wr, h); reason != "" {
		return out, reason
	}
	return out, ""
}

// parseHTTP reports whether gowarc should parse the record's block as
// HTTP: a response whose HTTP header ends within maxHTTPHeader bytes, or a
// revisit of at most that size (gowarc holds both in memory). Other
// blocks are streamed past unparsed.
func (r *Reader) parseHTTP(h header) bool {
	if !strings.HasPrefix(h.contentType, "application/http") && h.typ != "revisit" {
		return false
	}
	switch h.typ {
	case "revisit":
		return h.contentLen <= maxHTTPHeader
	case "response":
		n := int64(h.length) + min(h.contentLen, maxHTTPHeader)
		p, _ := r.br.Peek(int(n))
		if len(p) < h.length {
			return false
		}
		block := p[h.length:]
		for len(block) > 0 {
			i := bytes.IndexByte(block, '\n')
			if i < 0 {
				break
			}
			if i < 2 { // gowarc's header ends at a line shorter than 3 bytes
				return true
			}
			block = block[i+1:]
		}
		return h.contentLen <= maxHTTPHeader
	}
	return false
}

// needsTarget lists the record types that must have a WARC-Target-URI.
var needsTarget = map[string]bool{"response": true, "resource": true, "revisit": true, "request": true, "metadata": true}

// fill sets the fields of rec from the parsed record.
func (r *Reader) fill(rec *shelfmark.WebRecord, wr gowarc.WarcRecord, h header) string {
	wh := wr.WarcHeader()
	rec.Type = strings.ToLower(strings.TrimSpace(wh.Get(gowarc.WarcType)))
	raw := strings.TrimSpace(wh.Get(gowarc.WarcTargetURI))
	if len(raw) >= 2 && raw[0] == '<' && raw[len(raw)-1] == '>' {
		raw = raw[1 : len(raw)-1]
	}
	if raw == "" {
		if needsTarget[rec.Type] {
			return "no WARC-Target-URI"
		}
	} else {
		t, err := Canonical(raw)
		switch {
		case errors.Is(err, ErrNotHTTP):
			// dns:, ftp: ... kept with an empty Target, as warcinfo
		case err != nil:
			return "WARC-Target-URI: " + err.Error()
		default:
			rec.Target = t
		}
	}
	d := strings.TrimSpace(wh.Get(gowarc.WarcDate))
	t, err := time.Parse(time.RFC3339Nano, d)
	if err != nil {
		return fmt.Sprintf("bad WARC-Date %q", d)
	}
	rec.Time = t.UTC()
	rec.RecordID = strings.TrimSpace(wh.Get(gowarc.WarcRecordID))
	rec.Digest = strings.TrimSpace(wh.Get(gowarc.WarcPayloadDigest))
	rec.MIME = mediaType(wh.Get(gowarc.ContentType))
	capture := r.st.capture
	switch b := wr.Block().(type) {
	case gowarc.HttpResponseBlock:
		rec.Status = b.HttpStatusCode()
		var hh http.Header
		if p := b.HttpHeader(); p != nil {
			hh = *p
		}
		rec.MIME = mediaType(hh.Get("Content-Type"))
		if rec.Type == "response" && (rec.MIME == "text/html" || rec.MIME == "application/xhtml+xml") && rec.Target.URL != "" {
			rec.HasLinks = true
			hb := len(b.ProtocolHeaderBytes())
			if hb <= len(capture) {
				chunked := strings.Contains(strings.ToLower(rawHeader(b.ProtocolHeaderBytes(), "transfer-encoding")), "chunked")
				rec.Links = r.htmlLinks(capture[hb:], hh, chunked, rec.Target.URL)
			}
		}
	case gowarc.ProtocolHeaderBlock:
		// a revisit: the HTTP headers without the payload
		hb := b.ProtocolHeaderBytes()
		if bytes.HasPrefix(hb, []byte("HTTP/")) {
			if resp, err := http.ReadResponse(bufio.NewReader(io.MultiReader(bytes.NewReader(hb), strings.NewReader("\r\n"))), nil); err == nil {
				rec.Status = resp.StatusCode
				rec.MIME = mediaType(resp.Header.Get("Content-Type"))
			}
		}
	}
	if rec.Type == "metadata" && strings.HasPrefix(h.contentType, "application/json") && rec.Target.URL != "" {
		links, has, err := watLinks(capture, rec.Target.URL)
		if err != nil {
			return "WAT JSON: " + err.Error()
		}
		rec.HasLinks, rec.Links = has, links
	}
	return ""
}

// mediaType returns a Content-Type's media type, lowercase, without
// parameters.
func mediaType(ct string) string {
	if ct == "" {
		return ""
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		return mt
	}
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// htmlLinks decodes a captured HTTP body (chunked, gzip or deflate) and
// extracts its links.
func (r *Reader) htmlLinks(body []byte, hh http.Header, chunked bool, page string) []shelfmark.WebURL {
	r.body.Reset(body)
	var in io.Reader = &r.body
	if chunked {
		in = httputil.NewChunkedReader(in)
	}
	switch strings.ToLower(strings.TrimSpace(hh.Get("Content-Encoding"))) {
	case "gzip", "x-gzip":
		if z, err := gzip.NewReader(in); err == nil {
			in = z
		}
	case "deflate":
		var buf [2]byte
		n, _ := io.ReadFull(in, buf[:])
		in = io.MultiReader(bytes.NewReader(buf[:n]), in)
		if n == 2 && (uint16(buf[0])<<8|uint16(buf[1]))%31 == 0 && buf[0]&0x0f == 8 {
			if z, err := zlib.NewReader(in); err == nil {
				in = z
			}
		} else {
			in = flate.NewReader(in)
		}
	}
	links, _ := ExtractLinks(in, page, r.opts.MaxLinkBytes)
	return links
}

// rawHeader returns the values of the header name (lowercase) in raw
// HTTP header bytes, joined by commas (net/http's parser drops
// Transfer-Encoding from the map).
func rawHeader(hb []byte, name string) string {
	var out []string
	for len(hb) > 0 {
		line := hb
		if i := bytes.IndexByte(hb, '\n'); i >= 0 {
			line, hb = hb[:i], hb[i+1:]
		} else {
			hb = nil
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if ok && strings.EqualFold(string(bytes.TrimSpace(k)), name) {
			out = append(out, string(bytes.TrimSpace(v)))
		}
	}
	return strings.Join(out, ",")
}

// wat is the part of a Common Crawl WAT record that holds links.
type wat struct {
	Envelope struct {
		PayloadMetadata struct {
			HTTPResponseMetadata *struct {
				HTMLMetadata *struct {
					Head struct {
						Base string `json:"Base"`
					} `json:"Head"`
					Links []struct {
						Path string `json:"path"`
						URL  string `json:"url"`
					} `json:"Links"`
				} `json:"HTML-Metadata"`
			} `json:"HTTP-Response-Metadata"`
		} `json:"Payload-Metadata"`
	} `json:"Envelope"`
}

// watLinks reads the <a> and <area> links of a WAT record; has is false
// when it describes no HTML page.
func watLinks(block []byte, page string) (links []shelfmark.WebURL, has bool, err error) {
	var w wat
	if err := json.Unmarshal(block, &w); err != nil {
		return nil, false, err
	}
	hrm := w.Envelope.PayloadMetadata.HTTPResponseMetadata
	if hrm == nil || hrm.HTMLMetadata == nil {
		return nil, false, nil
	}
	base, err := url.Parse(page)
	if err != nil {
		return nil, false, err
	}
	if b := hrm.HTMLMetadata.Head.Base; b != "" {
		if u, ok := resolveURL(base, b); ok {
			base = u
		}
	}
	for _, l := range hrm.HTMLMetadata.Links {
		if l.Path != "A@/href" && l.Path != "AREA@/href" {
			continue
		}
		if u, ok := Resolve(base, l.URL); ok {
			links = append(links, u)
		}
	}
	return links, true, nil
}
