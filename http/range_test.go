package http

import (
	"bytes"
	"fmt"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestRangeAbuse checks the Range header against RFC 9110: many or
// overlapping ranges are coalesced, and beyond maxRanges the whole
// representation is sent; a syntactically invalid Range is ignored (200);
// only a well-formed set of which no range is satisfiable is 416.
func TestRangeAbuse(t *testing.T) {
	e := newEnv(t, Options{})
	fs := e.fileset(t)
	c := content{seed: 9, size: 100_000}
	r := e.do("POST", "/api/v1/resources/"+string(fs)+"/files?name=a.bin", c.reader()).want(t, http.StatusCreated)
	var f resource
	r.json(t, &f)
	cp := "/api/v1/resources/" + string(f.ID) + "/content"
	size := strconv.FormatInt(c.size, 10)

	// 20,000 copies of 0-0 are one range: a one-byte 206.
	r = e.do("GET", cp, nil, "Range", "bytes="+strings.Repeat("0-0,", 19_999)+"0-0").want(t, http.StatusPartialContent)
	if len(r.Body) != 1 || r.Header.Get("Content-Range") != "bytes 0-0/"+size {
		t.Errorf("20,000 × 0-0: %d bytes, Content-Range %q", len(r.Body), r.Header.Get("Content-Range"))
	}
	// Overlapping and adjacent ranges are merged: 0-9, 5-19, 20-29 and
	// -10 (the last ten) make two parts.
	r = e.do("GET", cp, nil, "Range", "bytes=0-9, 5-19,20-29, -10").want(t, http.StatusPartialContent)
	parts := multiparts(t, r)
	if len(parts) != 2 || parts[0].rng != "bytes 0-29/"+size || !bytes.Equal(parts[0].body, c.slice(0, 30)) ||
		parts[1].rng != fmt.Sprintf("bytes %d-%d/%s", c.size-10, c.size-1, size) || !bytes.Equal(parts[1].body, c.slice(c.size-10, c.size)) {
		t.Errorf("coalesced parts %+v", parts)
	}
	// More than maxRanges distinct ranges: the whole file, 200.
	var many []string
	for i := range maxRanges + 1 {
		many = append(many, fmt.Sprintf("%d-%d", i*100, i*100+1))
	}
	r = e.do("GET", cp, nil, "Range", "bytes="+strings.Join(many, ",")).want(t, http.StatusOK)
	if int64(len(r.Body)) != c.size {
		t.Errorf("%d ranges: %d bytes, want the whole %d", len(many), len(r.Body), c.size)
	}
	// Exactly maxRanges distinct ranges are served as parts.
	r = e.do("GET", cp, nil, "Range", "bytes="+strings.Join(many[:maxRanges], ",")).want(t, http.StatusPartialContent)
	if parts := multiparts(t, r); len(parts) != maxRanges {
		t.Errorf("%d ranges: %d parts", maxRanges, len(parts))
	}
	// Syntactically invalid: ignored, the whole file.
	for _, bad := range []string{"bytes=5-1", "bytes=abc", "bytes=-", "bytes=1-2-3", "bytes=", "bytes=0-0,x", "bytes=--5", "bytes= 1 - 2", "bytes=1-2;x"} {
		r = e.do("GET", cp, nil, "Range", bad)
		if r.Status != http.StatusOK || int64(len(r.Body)) != c.size {
			t.Errorf("Range %q: %d, %d bytes; want 200 and the whole file", bad, r.Status, len(r.Body))
		}
	}
	// An unknown unit is ignored too.
	e.do("GET", cp, nil, "Range", "pages=1-2").want(t, http.StatusOK)
	// Well-formed, none satisfiable: 416.
	for _, unsat := range []string{"bytes=" + size + "-", "bytes=200000-300000,100000-", "bytes=-0", "bytes=99999999999999999999999-"} {
		r = e.do("GET", cp, nil, "Range", unsat)
		r.wantError(t, http.StatusRequestedRangeNotSatisfiable, ERANGE)
		if r.Header.Get("Content-Range") != "bytes */"+size {
			t.Errorf("Range %q: Content-Range %q", unsat, r.Header.Get("Content-Range"))
		}
	}
	// One satisfiable range among unsatisfiable ones is served.
	r = e.do("GET", cp, nil, "Range", "bytes=200000-,10-11").want(t, http.StatusPartialContent)
	if !bytes.Equal(r.Body, c.slice(10, 12)) {
		t.Errorf("mixed: %x", r.Body)
	}
	// A last-pos past the end is cut to the end.
	r = e.do("GET", cp, nil, "Range", "bytes=99990-200000").want(t, http.StatusPartialContent)
	if r.Header.Get("Content-Range") != "bytes 99990-99999/"+size {
		t.Errorf("clipped: Content-Range %q", r.Header.Get("Content-Range"))
	}
	// If-Range with another validator: the whole file, even when the
	// range is unsatisfiable.
	e.do("GET", cp, nil, "Range", "bytes="+size+"-", "If-Range", `"other"`).want(t, http.StatusOK)
}

type part struct {
	rng  string
	body []byte
}

func multiparts(t *testing.T, r *response) []part {
	t.Helper()
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/byteranges" {
		t.Fatalf("Content-Type %q", r.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(bytes.NewReader(r.Body), params["boundary"])
	var out []part
	for {
		p, err := mr.NextPart()
		if err != nil {
			break
		}
		var b bytes.Buffer
		b.ReadFrom(p)
		out = append(out, part{p.Header.Get("Content-Range"), b.Bytes()})
	}
	return out
}
