// Package webarchive serves the web archive routes of the API and gives
// the interface's web archive pages what they share with them (the
// repository's web index, reading captures' parameters and records).
package webarchive

// This file serves the web archive routes of the API: captures looked up
// by URL (JSON, or CDXJ as pywb and the Wayback machine read it), one
// capture, the payload of the capture nearest a time read by offset from
// its WARC file, and the link index (a URL's links, top pages and
// domains). The engine decides what a caller sees: captures are read as
// the WARC files that hold them are, and the link index is open to the
// readers of the whole repository (or to everyone when the repository
// declares it public).

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/warc"
)

// Index is what the web archive routes need of the repository
// (shelfmark.Repository has it).
type Index interface {
	WebCaptures(ctx context.Context, q shelfmark.WebCaptureQuery) (*shelfmark.WebCapturePage, error)
	WebCapture(ctx context.Context, id int64) (*shelfmark.Capture, error)
	WebNearest(ctx context.Context, surt string, at time.Time) (*shelfmark.Capture, error)
	WebLinks(ctx context.Context, q shelfmark.WebLinkQuery) (*shelfmark.WebLinkInfo, error)
	WebTop(ctx context.Context, domain string, n int) ([]shelfmark.WebCount, error)
	MayReadWebLinks(ctx context.Context) (bool, error)
	WebFileState(ctx context.Context, file shelfmark.ID) (*shelfmark.WebFileRow, error)
	WebFileCaptures(ctx context.Context, file shelfmark.ID, after string, limit int) (*shelfmark.WebCapturePage, error)
}

// Routes are the API's web archive routes.
func (s *Handler) Routes() []kit.Route {
	return []kit.Route{
		{Method: "GET", Pattern: "/api/v1/web/captures", Handle: s.webCaptures},
		{Method: "GET", Pattern: "/api/v1/web/captures/{id}", Handle: s.webCapture},
		{Method: "GET", Pattern: "/api/v1/web/record", Handle: s.webRecord},
		{Method: "GET", Pattern: "/api/v1/web/links", Handle: s.webLinks},
		{Method: "GET", Pattern: "/api/v1/web/top", Handle: s.webTop},
	}
}

// Index returns the repository's web index; EUNAVAILABLE when the
// repository keeps none.
func (s *Handler) Index() (Index, error) {
	if wi, ok := s.deps.Resources.(Index); ok {
		return wi, nil
	}
	return nil, shelfmark.Errorf(shelfmark.EUNAVAILABLE, "This server keeps no web archive index.")
}

// webMaxURL caps the length of a URL parameter.
const webMaxURL = 8000

// webURLParam reads and canonicalises the URL parameter name.
func webURLParam(v url.Values, name string) (shelfmark.WebURL, error) {
	raw := strings.TrimSpace(v.Get(name))
	if raw == "" {
		return shelfmark.WebURL{}, shelfmark.Errorf(shelfmark.EINVALID, "%s is required: the URL to look up (http://example.org/page).", name)
	}
	return Canonical(name, raw)
}

// Canonical canonicalises a URL; a URL without a scheme is taken as
// http://, as the Wayback machine does.
func Canonical(name, raw string) (shelfmark.WebURL, error) {
	if len(raw) > webMaxURL {
		return shelfmark.WebURL{}, shelfmark.Errorf(shelfmark.EINVALID, "%s is longer than %d bytes.", name, webMaxURL)
	}
	if !hasScheme(raw) {
		raw = "http://" + raw
	}
	u, err := warc.Canonical(raw)
	if err != nil {
		why := err.Error()
		if i := strings.Index(why, `": `); i >= 0 {
			why = why[i+3:] // the reader's own quote of the URL
		}
		return shelfmark.WebURL{}, shelfmark.Errorf(shelfmark.EINVALID, "%s: %q is not a URL the web index can look up: %s.", name, kit.TruncateParam(raw), strings.TrimSuffix(why, "."))
	}
	return u, nil
}

// hasScheme reports whether a URL starts with a scheme: letters, digits,
// "+", "-" or "." then ":", and not a host's port ("example.org:8080").
func hasScheme(raw string) bool {
	i := strings.IndexByte(raw, ':')
	if i < 1 {
		return false
	}
	for j := 0; j < i; j++ {
		c := raw[j] | 0x20
		if !(c >= 'a' && c <= 'z') && !(j > 0 && (raw[j] >= '0' && raw[j] <= '9' || raw[j] == '+' || raw[j] == '-' || raw[j] == '.')) {
			return false
		}
	}
	rest := raw[i+1:]
	if strings.HasPrefix(rest, "//") {
		return true
	}
	port := rest
	if k := strings.IndexAny(rest, "/?#"); k >= 0 {
		port = rest[:k]
	}
	if port == "" {
		return true
	}
	for k := 0; k < len(port); k++ {
		if port[k] < '0' || port[k] > '9' {
			return true
		}
	}
	return false
}

// webMatch reads match= (or pywb's matchType=) and the URL it applies to:
// a URL ending in "*" is a prefix match and one starting with "*." a
// domain match, as pywb reads them.
func webMatch(v url.Values) (shelfmark.WebURL, string, error) {
	match, mt, name := v.Get("match"), v.Get("matchType"), "match"
	switch {
	case match != "" && mt != "" && match != mt:
		return shelfmark.WebURL{}, "", shelfmark.Errorf(shelfmark.EINVALID, "match %q and matchType %q disagree: send one of them.", kit.TruncateParam(match), kit.TruncateParam(mt))
	case match == "":
		match, name = mt, "matchType"
	}
	switch match {
	case "", shelfmark.MatchExact, shelfmark.MatchPrefix, shelfmark.MatchHost, shelfmark.MatchDomain:
	default:
		return shelfmark.WebURL{}, "", shelfmark.Errorf(shelfmark.EINVALID, "%s must be exact, prefix, host or domain, not %q.", name, kit.TruncateParam(match))
	}
	raw := strings.TrimSpace(v.Get("url"))
	implied := ""
	if r, ok := strings.CutSuffix(raw, "*"); ok {
		raw, implied = r, shelfmark.MatchPrefix
	}
	if r, ok := strings.CutPrefix(raw, "*."); ok {
		raw, implied = r, shelfmark.MatchDomain
	} else if i := strings.Index(raw, "://*."); i >= 0 {
		raw, implied = raw[:i+3]+raw[i+5:], shelfmark.MatchDomain
	}
	if implied != "" {
		if match != "" && match != implied {
			return shelfmark.WebURL{}, "", shelfmark.Errorf(shelfmark.EINVALID, "url %q asks for a %s match, match for %s: send one of them.", kit.TruncateParam(v.Get("url")), implied, match)
		}
		match = implied
	}
	if match == "" {
		match = shelfmark.MatchExact
	}
	if raw == "" {
		return shelfmark.WebURL{}, "", shelfmark.Errorf(shelfmark.EINVALID, "url is required: the URL to look up (http://example.org/page, http://example.org/* for a prefix).")
	}
	u, err := Canonical("url", raw)
	if err != nil {
		return u, "", err
	}
	return u, match, nil
}

// webTimestamp reads a time parameter: 1 to 14 digits of a timestamp as
// the Wayback machine writes them (yyyyMMddhhmmss, a prefix standing for
// the start of its period, or its end when up is set), or an RFC 3339
// time. The time is UTC.
func webTimestamp(name, s string, up bool) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	digits := len(s) <= 14
	for i := 0; i < len(s) && digits; i++ {
		digits = s[i] >= '0' && s[i] <= '9'
	}
	if !digits {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return time.Time{}, shelfmark.Errorf(shelfmark.EINVALID, "%s: %q is not a timestamp of 1 to 14 digits (yyyyMMddhhmmss, 2024 or 20240315) or an RFC 3339 time (2024-03-15T12:00:00Z).", name, kit.TruncateParam(s))
		}
		return t.UTC(), nil
	}
	pad := "00000101000000"
	if up {
		pad = "99991231235959"
	}
	ts := s + pad[len(s):]
	n := func(i, j int) int { v, _ := strconv.Atoi(ts[i:j]); return v }
	year, month, day, hour, minute, sec := n(0, 4), n(4, 6), n(6, 8), n(8, 10), n(10, 12), n(12, 14)
	if up {
		// a prefix's end: the last month, day, hour... that exists
		month, hour, minute, sec = min(month, 12), min(hour, 23), min(minute, 59), min(sec, 59)
		if month >= 1 {
			day = min(day, time.Date(year, time.Month(month)+1, 0, 0, 0, 0, 0, time.UTC).Day())
		}
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC)
	if month < 1 || month > 12 || day < 1 || t.Day() != day || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, shelfmark.Errorf(shelfmark.EINVALID, "%s: %q is not a time: its month, day, hour, minute or second is out of range.", name, kit.TruncateParam(s))
	}
	return t, nil
}

// webLimit reads limit= (1 to max).
func webLimit(v url.Values, name string, max int) (int, error) {
	l := v.Get(name)
	if l == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(l)
	if err != nil || n < 1 || n > max {
		return 0, shelfmark.Errorf(shelfmark.EINVALID, "%s must be a whole number from 1 to %d, not %q.", name, max, kit.TruncateParam(l))
	}
	return n, nil
}

// CaptureQuery reads the parameters of GET /api/v1/web/captures.
func CaptureQuery(v url.Values) (shelfmark.WebCaptureQuery, error) {
	var q shelfmark.WebCaptureQuery
	u, match, err := webMatch(v)
	if err != nil {
		return q, err
	}
	q.SURT, q.Match = u.SURT, match
	if q.Since, err = webTimestamp("from", v.Get("from"), false); err != nil {
		return q, err
	}
	to := v.Get("to")
	if q.Until, err = webTimestamp("to", to, true); err != nil {
		return q, err
	}
	if !q.Until.IsZero() {
		// to is inclusive: up to the end of its second (or instant)
		if len(to) <= 14 && !strings.ContainsAny(to, "-:T") {
			q.Until = q.Until.Add(time.Second)
		} else {
			q.Until = q.Until.Add(time.Nanosecond)
		}
	}
	if !q.Since.IsZero() && !q.Until.IsZero() && !q.Since.Before(q.Until) {
		return q, shelfmark.Errorf(shelfmark.EINVALID, "from %q is after to %q.", kit.TruncateParam(v.Get("from")), kit.TruncateParam(to))
	}
	if q.Limit, err = webLimit(v, "limit", shelfmark.MaxWebLimit); err != nil {
		return q, err
	}
	q.After = v.Get("cursor")
	return q, nil
}

// webCapturesJSON is the answer of GET /api/v1/web/captures.
type webCapturesJSON struct {
	Captures []*shelfmark.Capture `json:"captures"`
	Next     string               `json:"next,omitempty"`
}

// webCaptures handles GET /api/v1/web/captures?url=&match=&from=&to=&limit=&cursor=&output=.
func (s *Handler) webCaptures(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	output := v.Get("output")
	switch output {
	case "", "json", "cdxj":
	default:
		return shelfmark.Errorf(shelfmark.EINVALID, "output must be json or cdxj, not %q.", kit.TruncateParam(output))
	}
	q, err := CaptureQuery(v)
	if err != nil {
		return err
	}
	wi, err := s.Index()
	if err != nil {
		return err
	}
	page, err := wi.WebCaptures(r.Context(), q)
	if err != nil {
		if shelfmark.ErrorCode(err) == shelfmark.EINVALID && q.After != "" {
			return shelfmark.Errorf(shelfmark.EINVALID, "cursor: %s", shelfmark.ErrorMessage(err))
		}
		return err
	}
	if page.Next != "" {
		v.Set("cursor", page.Next)
		w.Header().Add("Link", "<"+r.URL.Path+"?"+v.Encode()+`>; rel="next"`)
	}
	if output == "cdxj" {
		w.Header().Set("Content-Type", "text/x-cdxj; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		var b []byte
		for _, c := range page.Captures {
			b = appendCDXJ(b[:0], c, string(c.File))
			if _, err := w.Write(b); err != nil {
				return err
			}
		}
		return nil
	}
	out := webCapturesJSON{Captures: page.Captures, Next: page.Next}
	if out.Captures == nil {
		out.Captures = []*shelfmark.Capture{}
	}
	return kit.WriteJSON(w, http.StatusOK, out)
}

// Time14 is the 14-digit timestamp of the Wayback machine.
const Time14 = "20060102150405"

// appendCDXJ appends the CDXJ line of a capture as pywb's indexer writes
// it: the SURT, the 14-digit time and a JSON block with url, mime,
// status, digest (without its algorithm, as CDX has it for SHA-1),
// length, offset and filename, every value a string, in Python's
// json.dumps form (", " and ": " between items, non-ASCII escaped).
func appendCDXJ(b []byte, c *shelfmark.Capture, filename string) []byte {
	b = append(b, c.SURT...)
	b = append(b, ' ')
	b = c.Time.UTC().AppendFormat(b, Time14)
	b = append(b, ' ', '{')
	first := true
	field := func(k, v string) {
		if !first {
			b = append(b, ',', ' ')
		}
		first = false
		b = appendPyString(b, k)
		b = append(b, ':', ' ')
		b = appendPyString(b, v)
	}
	field("url", c.URL)
	mime := c.MIME
	if c.Type == "revisit" {
		mime = "warc/revisit"
	}
	if mime != "" {
		field("mime", mime)
	}
	if c.Status != 0 {
		field("status", strconv.Itoa(c.Status))
	}
	if c.Digest != "" {
		d := c.Digest
		if a, rest, ok := strings.Cut(d, ":"); ok && strings.EqualFold(a, "sha1") {
			d = rest
		}
		field("digest", d)
	}
	field("length", strconv.FormatInt(c.Length, 10))
	field("offset", strconv.FormatInt(c.Offset, 10))
	field("filename", filename)
	return append(b, '}', '\n')
}

// appendPyString appends s as a JSON string the way Python's json.dumps
// writes it (ensure_ascii): '"' and '\' escaped, controls and every
// non-ASCII character as \uXXXX (surrogate pairs above U+FFFF).
func appendPyString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	u := func(r rune) {
		b = append(b, '\\', 'u', hex[r>>12&0xf], hex[r>>8&0xf], hex[r>>4&0xf], hex[r&0xf])
	}
	b = append(b, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, '\\', 'n')
		case r == '\r':
			b = append(b, '\\', 'r')
		case r == '\t':
			b = append(b, '\\', 't')
		case r == '\b':
			b = append(b, '\\', 'b')
		case r == '\f':
			b = append(b, '\\', 'f')
		case r < 0x20 || (r >= 0x7f && r <= 0xffff):
			if r == 0x7f {
				b = append(b, byte(r))
				continue
			}
			u(r)
		case r > 0xffff:
			r -= 0x10000
			u(0xd800 + (r>>10)&0x3ff)
			u(0xdc00 + r&0x3ff)
		default:
			b = append(b, byte(r))
		}
	}
	return append(b, '"')
}

// CaptureID reads a capture id of the path.
func CaptureID(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		// the value is not repeated: it may be another resource's id
		return 0, shelfmark.Errorf(shelfmark.EINVALID, "id must be a capture id: a whole number from 1.")
	}
	return n, nil
}

// webCapture handles GET /api/v1/web/captures/{id}.
func (s *Handler) webCapture(w http.ResponseWriter, r *http.Request) error {
	id, err := CaptureID(r.PathValue("id"))
	if err != nil {
		return err
	}
	wi, err := s.Index()
	if err != nil {
		return err
	}
	c, err := wi.WebCapture(r.Context(), id)
	if err != nil {
		return err
	}
	return kit.WriteJSON(w, http.StatusOK, c)
}

// webRevisitScan bounds the captures read to find the response a revisit
// record repeats.
const webRevisitScan = 2000

// webOriginal finds the capture whose payload a revisit record repeats: a
// response (or resource) of the URL the revisit refers to
// (WARC-Refers-To-Target-URI, else its own) with the same payload digest,
// the one at WARC-Refers-To-Date when the revisit names it, else the
// latest before the revisit, looked for backwards in windows four times
// longer each time, at most webRevisitScan captures in all.
func (s *Handler) webOriginal(ctx context.Context, wi Index, c *shelfmark.Capture) (*shelfmark.Capture, error) {
	if c.Digest == "" {
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "The capture %d is a revisit record without a payload digest: the payload it repeats cannot be found.", c.ID)
	}
	surt, target := c.SURT, c.URL
	var refAt time.Time
	if o, err := s.Open(ctx, c); err == nil {
		if u := o.Record.Header.Get("WARC-Refers-To-Target-URI"); u != "" {
			if wu, err := warc.Canonical(u); err == nil {
				surt, target = wu.SURT, wu.URL
			}
		}
		if d := o.Record.Header.Get("WARC-Refers-To-Date"); d != "" {
			if t, err := time.Parse(time.RFC3339Nano, d); err == nil {
				refAt = t.UTC()
			}
		}
		o.Close()
	}
	same := func(o *shelfmark.Capture) bool {
		return o.ID != c.ID && o.Digest == c.Digest && (o.Type == "response" || o.Type == "resource")
	}
	scanned := 0
	// latest returns the latest capture in [since, until) with the payload.
	latest := func(since, until time.Time) (*shelfmark.Capture, error) {
		q := shelfmark.WebCaptureQuery{SURT: surt, Match: shelfmark.MatchExact, Since: since, Until: until, Limit: 1000}
		var found *shelfmark.Capture
		for scanned < webRevisitScan {
			page, err := wi.WebCaptures(ctx, q)
			if err != nil {
				return nil, err
			}
			for _, o := range page.Captures {
				if same(o) {
					found = o
				}
			}
			scanned += len(page.Captures)
			if page.Next == "" {
				break
			}
			q.After = page.Next
		}
		return found, nil
	}
	if !refAt.IsZero() {
		if o, err := latest(refAt, refAt.Add(time.Second)); err != nil || o != nil {
			return o, err
		}
	}
	oldest := time.Date(1990, 1, 1, 0, 0, 0, 0, time.UTC) // before the first web crawls
	for until, span := c.Time, time.Hour; scanned < webRevisitScan && until.After(oldest); span *= 4 {
		since := until.Add(-span)
		o, err := latest(since, until)
		if err != nil || o != nil {
			return o, err
		}
		until = since
	}
	return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "The capture %d is a revisit of a payload (%s) no earlier capture of %s you can read holds.", c.ID, c.Digest, target)
}

// Opened is a WARC record opened for reading (Handler.Open); Close it
// when done.
type Opened struct {
	// Record is the record, its headers read, its payload next.
	Record *warc.Record
	close  func()
}

// Close releases the record and the blob it was read from.
func (o *Opened) Close() { o.close() }

// Open opens the WARC record of a capture from the blob store, reading
// its file by offset (one read of the file's row, then of the record's
// bytes only).
func (s *Handler) Open(ctx context.Context, c *shelfmark.Capture) (*Opened, error) {
	f, err := s.deps.Resources.FindResource(ctx, c.File)
	if err != nil {
		return nil, err
	}
	if f.File == nil || !f.File.Managed() {
		return nil, shelfmark.Errorf(shelfmark.ENOTFOUND, "The WARC file %s of the capture %d holds no stored bytes.", c.File, c.ID)
	}
	if s.deps.Blobs == nil {
		return nil, shelfmark.Errorf(shelfmark.EUNAVAILABLE, "This server keeps no file content.")
	}
	rc, err := s.deps.Blobs.Open(ctx, f.File.SHA256)
	if err != nil {
		return nil, err
	}
	rec, err := warc.OpenRecord(kit.ReaderAt(rc), c.Offset, c.Length)
	if err != nil {
		rc.Close()
		return nil, fmt.Errorf("open the WARC record of capture %d (%s at %d): %w", c.ID, c.File, c.Offset, err)
	}
	return &Opened{Record: rec, close: func() { rec.Close(); rc.Close() }}, nil
}

// webMaxOrigHeaders caps the original headers a record answer repeats.
const webMaxOrigHeaders = 200

// contentCodings are the Content-Encodings passed on as they are (the
// payload is stored encoded).
var contentCodings = map[string]bool{"gzip": true, "x-gzip": true, "deflate": true, "br": true, "zstd": true, "compress": true}

// webRecord handles GET /api/v1/web/record?url=&at=: the payload of the
// capture of url nearest at (now by default), with its original headers
// as X-Archive-Orig-*, as a Memento (RFC 7089). A revisit record answers
// with the payload it repeats.
func (s *Handler) webRecord(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	u, err := webURLParam(v, "url")
	if err != nil {
		return err
	}
	at := s.deps.Now().UTC()
	if a := v.Get("at"); a != "" {
		if at, err = webTimestamp("at", a, false); err != nil {
			return err
		}
	}
	wi, err := s.Index()
	if err != nil {
		return err
	}
	ctx := r.Context()
	c, err := wi.WebNearest(ctx, u.SURT, at)
	if err != nil {
		return err
	}
	payload := c
	if c.Type == "revisit" {
		if payload, err = s.webOriginal(ctx, wi, c); err != nil {
			return err
		}
	}
	o, err := s.Open(ctx, payload)
	if err != nil {
		return err
	}
	defer o.Close()
	h := w.Header()
	ctype := o.Record.HTTPHeader.Get("Content-Type")
	if ctype == "" && o.Record.HTTPHeader == nil {
		ctype = payload.MIME
	}
	if ctype == "" || !validHeaderValue(ctype) {
		ctype = "application/octet-stream"
	}
	h.Set("Content-Type", ctype)
	n := 0
	for name, vals := range o.Record.HTTPHeader {
		if !validHeaderName(name) {
			continue
		}
		for _, val := range vals {
			if n == webMaxOrigHeaders {
				break
			}
			if validHeaderValue(val) {
				h.Add("X-Archive-Orig-"+name, val)
				n++
			}
		}
	}
	if ce := strings.ToLower(strings.TrimSpace(o.Record.HTTPHeader.Get("Content-Encoding"))); contentCodings[ce] {
		h.Set("Content-Encoding", ce)
	}
	if o.Record.Status != 0 {
		h.Set("X-Archive-Orig-Status", strconv.Itoa(o.Record.Status))
	}
	h.Set("Memento-Datetime", c.Time.UTC().Format(http.TimeFormat))
	if validHeaderValue(c.URL) && !strings.ContainsAny(c.URL, "<>") {
		h.Set("Link", "<"+c.URL+`>; rel="original"`)
	}
	h.Set("Shelfmark-Capture", strconv.FormatInt(c.ID, 10))
	if payload != c {
		h.Set("Shelfmark-Payload-Capture", strconv.FormatInt(payload.ID, 10))
	}
	h.Set("Cache-Control", "private, no-cache")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	if _, err := io.Copy(w, o.Record.Body); err != nil {
		return fmt.Errorf("payload of capture %d: %w", payload.ID, err)
	}
	return nil
}

// validHeaderName reports whether s is an HTTP token.
func validHeaderName(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// validHeaderValue reports whether s may be sent as a header value: no
// controls but tab, and bounded.
func validHeaderValue(s string) bool {
	if len(s) > 8000 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// webLinks handles GET /api/v1/web/links?url=&inbound_after=&outbound_after=&limit=.
func (s *Handler) webLinks(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	u, err := webURLParam(v, "url")
	if err != nil {
		return err
	}
	q := shelfmark.WebLinkQuery{SURT: u.SURT}
	for _, p := range []struct {
		name string
		to   *string
	}{{"inbound_after", &q.InboundAfter}, {"outbound_after", &q.OutboundAfter}} {
		c := v.Get(p.name)
		if c == "" {
			continue
		}
		if n, err := strconv.ParseInt(c, 10, 64); err != nil || n < 0 {
			return shelfmark.Errorf(shelfmark.EINVALID, "%s must be the next_%s of the previous answer, unchanged, not %q.", p.name,
				strings.TrimSuffix(p.name, "_after"), kit.TruncateParam(c))
		}
		*p.to = c
	}
	if q.Limit, err = webLimit(v, "limit", shelfmark.MaxWebLimit); err != nil {
		return err
	}
	wi, err := s.Index()
	if err != nil {
		return err
	}
	info, err := wi.WebLinks(r.Context(), q)
	if err != nil {
		return err
	}
	return kit.WriteJSON(w, http.StatusOK, info)
}

// DomainParam reads a domain name: a host, lowercased, its registered
// domain as the index keys it.
func DomainParam(name, raw string) (string, error) {
	raw = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(raw)), ".")
	if raw == "" || len(raw) > 253 || strings.ContainsAny(raw, "/?#@:[] \t") {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "%s: %q is not a domain name (example.org).", name, kit.TruncateParam(raw))
	}
	u, err := warc.Canonical("http://" + raw + "/")
	if err != nil || u.Domain == "" {
		return "", shelfmark.Errorf(shelfmark.EINVALID, "%s: %q is not a domain name (example.org).", name, kit.TruncateParam(raw))
	}
	return u.Domain, nil
}

// webTop handles GET /api/v1/web/top?domain=&n=: the pages of a domain
// with the most inbound links, or without domain the domains with the
// most.
func (s *Handler) webTop(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	n, err := webLimit(v, "n", shelfmark.MaxWebTop)
	if err != nil {
		return err
	}
	if n == 0 {
		n = 10
	}
	domain := ""
	if d := v.Get("domain"); d != "" {
		if domain, err = DomainParam("domain", d); err != nil {
			return err
		}
	}
	wi, err := s.Index()
	if err != nil {
		return err
	}
	top, err := wi.WebTop(r.Context(), domain, n)
	if err != nil {
		return err
	}
	if top == nil {
		top = []shelfmark.WebCount{}
	}
	if domain == "" {
		return kit.WriteJSON(w, http.StatusOK, struct {
			Domains []shelfmark.WebCount `json:"domains"`
		}{top})
	}
	return kit.WriteJSON(w, http.StatusOK, struct {
		Domain string               `json:"domain"`
		Pages  []shelfmark.WebCount `json:"pages"`
	}{domain, top})
}
