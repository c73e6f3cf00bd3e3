package kit

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/shelfmark/shelfmark"
)

// TestReadBody: a body is read whole whether its length is announced or
// not, in one buffer of the announced length; a body over the limit is
// refused with ETOOLARGE, announced or found while reading; a body that
// ends before its announced length, or fails, is refused as EINVALID.
func TestReadBody(t *testing.T) {
	body := strings.Repeat("<> <http://purl.org/dc/terms/title> \"A title\" .\n", 100)
	req := func(r io.Reader, length int64) *http.Request {
		q := httptest.NewRequest("POST", "/api/v1/works", r)
		q.ContentLength = length
		return q
	}
	for name, q := range map[string]*http.Request{
		"announced":  req(strings.NewReader(body), int64(len(body))),
		"chunked":    req(strings.NewReader(body), -1),
		"one a read": req(iotest.OneByteReader(strings.NewReader(body)), int64(len(body))),
	} {
		b, err := ReadBody(httptest.NewRecorder(), q, 1<<20)
		if err != nil || string(b) != body {
			t.Fatalf("%s: %d bytes of %d, %v", name, len(b), len(body), err)
		}
		if name == "announced" && cap(b) > len(body)+1 {
			t.Fatalf("a body of %d bytes read into a buffer of %d", len(body), cap(b))
		}
	}
	code := func(err error) string {
		var se *shelfmark.Error
		if errors.As(err, &se) {
			return se.Code
		}
		return ""
	}
	if _, err := ReadBody(httptest.NewRecorder(), req(strings.NewReader(body), int64(len(body))), 100); code(err) != shelfmark.ETOOLARGE {
		t.Fatalf("an announced body over the limit: %v", err)
	}
	if _, err := ReadBody(httptest.NewRecorder(), req(strings.NewReader(body), -1), 100); code(err) != shelfmark.ETOOLARGE {
		t.Fatalf("a chunked body over the limit: %v", err)
	}
	short := req(io.MultiReader(strings.NewReader(body[:10]), iotest.ErrReader(io.ErrUnexpectedEOF)), int64(len(body)))
	if _, err := ReadBody(httptest.NewRecorder(), short, 1<<20); code(err) != shelfmark.EINVALID {
		t.Fatalf("a body cut short: %v", err)
	}
	// more bytes than announced (a reader that ignores the length) are
	// still all read
	long := req(bytes.NewReader([]byte(body+body)), int64(len(body)))
	if b, err := ReadBody(httptest.NewRecorder(), long, 1<<20); err != nil || len(b) != 2*len(body) {
		t.Fatalf("a body longer than announced: %d bytes, %v", len(b), err)
	}
}
