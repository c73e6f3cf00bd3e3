package kit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/rdf"
)

// MediaTypeOf returns the request's Content-Type without parameters.
func MediaTypeOf(r *http.Request) string {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return strings.ToLower(strings.TrimSpace(ct))
	}
	return mt
}

// ReadBody reads a metadata body, refusing more than limit bytes with 413.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength > limit {
		return nil, &shelfmark.Error{Code: shelfmark.ETOOLARGE, Message: fmt.Sprintf("The body is %d bytes; this server accepts at most %d.", r.ContentLength, limit),
			Details: map[string]any{"limit": limit}}
	}
	b, err := readAll(http.MaxBytesReader(w, r.Body, limit), r.ContentLength)
	if err != nil {
		var maxErr *http.MaxBytesError
		if errors.As(err, &maxErr) {
			return nil, &shelfmark.Error{Code: shelfmark.ETOOLARGE, Message: fmt.Sprintf("The body is larger than the %d bytes this server accepts.", limit),
				Details: map[string]any{"limit": limit}}
		}
		var se *shelfmark.Error
		if errors.As(err, &se) {
			return nil, err // for example a body that came too slowly (408)
		}
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "The body could not be read: %v.", err)
	}
	return b, nil
}

// readAll is io.ReadAll of a body whose Content-Length is size (-1:
// unknown): a body of the length it announced is read into one buffer of
// that size, where io.ReadAll would grow one from 512 bytes and leave
// about as much again behind (a work's metadata in Turtle, a few KB, read
// at every create).
func readAll(r io.Reader, size int64) ([]byte, error) {
	if size <= 0 {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, size+1) // one more: the read that finds the end
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) { // longer than announced: net/http refuses that, but grow all the same
			b = append(b, 0)[:len(b)]
		}
	}
}

// ReadJSON reads a JSON request body (Content-Type application/json, at
// most limit bytes) and strictly decodes it into v.
func ReadJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if mt := MediaTypeOf(r); mt != "application/json" {
		return &shelfmark.Error{Code: shelfmark.EUNSUPPORTED, Message: fmt.Sprintf("This request takes application/json, not %q.", mt),
			Details: map[string]any{"accepted": []string{"application/json"}}}
	}
	body, err := ReadBody(w, r, limit)
	if err != nil {
		return err
	}
	return DecodeJSON(body, v)
}

// DecodeJSON strictly decodes a JSON body into v: bytes that are not
// UTF-8 (which encoding/json would silently replace with U+FFFD), unknown
// fields and trailing data are errors that name their line and column.
func DecodeJSON(body []byte, v any) error {
	if err := rdf.CheckJSONText(rdf.JSON, body); err != nil {
		return err
	}
	// Every JSON body of the API is an object; null, which would decode
	// into v as no fields at all, is refused like any other value.
	if rest := bytes.TrimLeft(body, " \t\r\n"); len(rest) > 0 && rest[0] != '{' {
		line, col := lineCol(body, int64(len(body)-len(rest)))
		return &shelfmark.Error{Code: shelfmark.EINVALID, Message: fmt.Sprintf("Malformed JSON at line %d, column %d: the body must be a JSON object ({…}).", line, col),
			Details: map[string]any{"line": line, "column": col}}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(body, err, dec.InputOffset())
	}
	if dec.More() {
		return jsonError(body, errors.New("unexpected data after the JSON value"), dec.InputOffset())
	}
	return nil
}

// jsonError turns a decoding error into a 400 naming line and column.
func jsonError(body []byte, err error, offset int64) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	msg := err.Error()
	switch {
	case errors.As(err, &syn):
		// Offset counts the offending byte: point at it, not past it.
		offset = syn.Offset - 1
		msg = syn.Error()
	case errors.As(err, &typ):
		offset = typ.Offset
		msg = fmt.Sprintf("%s must be %s, not %s", orDefault(typ.Field, "the value"), typ.Type, typ.Value)
	case errors.Is(err, io.EOF):
		msg = "the body is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		offset = int64(len(body))
		msg = "the JSON ends too early"
	}
	line, col := lineCol(body, offset)
	return &shelfmark.Error{Code: shelfmark.EINVALID, Message: fmt.Sprintf("Malformed JSON at line %d, column %d: %s.", line, col, strings.TrimPrefix(msg, "json: ")),
		Details: map[string]any{"line": line, "column": col}}
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// lineCol converts a byte offset into 1-based line and column (in runes).
func lineCol(b []byte, offset int64) (int, int) {
	if offset > int64(len(b)) {
		offset = int64(len(b))
	}
	if offset < 0 {
		offset = 0
	}
	prefix := b[:offset]
	line := bytes.Count(prefix, []byte{'\n'}) + 1
	start := bytes.LastIndexByte(prefix, '\n') + 1
	return line, len([]rune(string(prefix[start:]))) + 1
}

// ParseIfMatch reads If-Match: "" or "*" give 0 (any version); a strong
// entity tag "N" gives N. Anything else can match no version: 412.
func ParseIfMatch(r *http.Request) (int64, error) {
	v := strings.TrimSpace(r.Header.Get("If-Match"))
	if v == "" || v == "*" {
		return 0, nil
	}
	for _, tag := range strings.Split(v, ",") {
		tag = strings.TrimSpace(tag)
		if n, err := strconv.ParseInt(strings.Trim(tag, `"`), 10, 64); err == nil && len(tag) > 2 && tag[0] == '"' && tag[len(tag)-1] == '"' && n > 0 {
			return n, nil
		}
	}
	return 0, &shelfmark.Error{Code: shelfmark.EPRECONDITION, Message: fmt.Sprintf("If-Match %s names no version of this resource; entity tags look like \"3\".", v)}
}

// ETag is the strong entity tag of a resource's version ("N"); one small
// allocation.
func ETag(version int64) string { return `"` + strconv.FormatInt(version, 10) + `"` }

// ParseTime reads an RFC 3339 time or a YYYY-MM-DD date (midnight UTC).
func ParseTime(field, s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, shelfmark.Errorf(shelfmark.EINVALID, "%s: %q is not a date (2030-01-31) or an RFC 3339 time (2030-01-31T12:00:00Z).", field, s)
}

// OptionalTime decodes a JSON field that may be absent (nil result), null
// (clear) or a time string.
func OptionalTime(field string, raw json.RawMessage) (**time.Time, error) {
	if raw == nil {
		return nil, nil
	}
	var clear *time.Time
	if string(raw) == "null" {
		return &clear, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "%s must be a date string or null.", field)
	}
	t, err := ParseTime(field, s)
	if err != nil {
		return nil, err
	}
	tp := &t
	return &tp, nil
}

// PageRequest reads ?after= and ?limit=.
func PageRequest(r *http.Request) (shelfmark.PageRequest, error) {
	p := shelfmark.PageRequest{After: shelfmark.Cursor(r.URL.Query().Get("after"))}
	if l := r.URL.Query().Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > shelfmark.MaxPageSize {
			return p, shelfmark.Errorf(shelfmark.EINVALID, "limit must be a whole number from 1 to %d.", shelfmark.MaxPageSize)
		}
		p.Limit = n
	}
	return p, nil
}
