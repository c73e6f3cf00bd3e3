package warc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzReader: any bytes are read to the end without a panic, with record
// and error offsets strictly increasing, and each record inside the file.
func FuzzReader(f *testing.F) {
	for _, gz := range []bool{false, true} {
		data, _ := genCrawl(f, gz, "1.1", 3)
		f.Add(data)
		f.Add(data[:len(data)/2])
		f.Add(append(bytes.Clone(data[:len(data)/3]), data...))
	}
	f.Add(rawRecord("response", [][2]string{{"WARC-Target-URI", "http://a.example/"}, {"WARC-Date", "2024-05-01T12:00:00Z"}, {"Content-Type", "application/http;msgtype=response"}},
		httpBlock(200, "Content-Type: text/html\r\nTransfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n", "5\r\nhello\r\n0\r\n\r\n"), 3))
	f.Add(rawRecord("metadata", [][2]string{{"WARC-Target-URI", "http://a.example/"}, {"WARC-Date", "2024-05-01T12:00:00Z"}, {"Content-Type", "application/json"}}, `{"Envelope":{"Payload-Metadata":{"HTTP-Response-Metadata":{"HTML-Metadata":{"Links":[{"path":"A@/href","url":"x"}]}}}}}`, 0))
	f.Add([]byte("WARC/1.0\r\n\r\n\r\n\r\n"))
	f.Add([]byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), int64(len(data)), 0, Options{MaxLinkBytes: 1 << 16})
		last := int64(-1)
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatalf("%d results from %d bytes", i, len(data))
			}
			rec, err := r.Next(context.Background())
			if err == io.EOF {
				break
			}
			var re *RecordError
			switch {
			case errors.As(err, &re):
				if re.Offset <= last || re.Offset >= int64(len(data)) {
					t.Fatalf("error at %d after %d (size %d)", re.Offset, last, len(data))
				}
				last = re.Offset
			case err != nil:
				t.Fatal(err)
			default:
				if rec.Offset <= last || rec.Length <= 0 || rec.Offset+rec.Length > int64(len(data)) {
					t.Fatalf("record %d+%d after %d (size %d)", rec.Offset, rec.Length, last, len(data))
				}
				last = rec.Offset
				// OpenRecord reads what Reader read (its HTTP parsing is
				// stricter than gowarc's)
				if _, err := OpenRecord(bytes.NewReader(data), rec.Offset, rec.Length); err != nil && !strings.Contains(err.Error(), "HTTP") {
					t.Fatalf("OpenRecord %d+%d: %v", rec.Offset, rec.Length, err)
				}
			}
			if r.Offset() <= last {
				t.Fatalf("Offset %d not past %d", r.Offset(), last)
			}
		}
	})
}

// FuzzCanonical: no panic; a result is canonical again unchanged, and
// its SURT and URL are valid UTF-8.
func FuzzCanonical(f *testing.F) {
	for _, c := range surtCases {
		f.Add(c.in)
	}
	for _, u := range extraSurtURLs {
		f.Add(u)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := Canonical(raw)
		if err != nil {
			return
		}
		if !utf8.ValidString(u.URL) || !utf8.ValidString(u.SURT) || u.Domain == "" {
			t.Fatalf("Canonical(%q) = %+v", raw, u)
		}
		v, err := Canonical(u.URL)
		if err != nil {
			t.Fatalf("Canonical(%q) = %q, which fails: %v", raw, u.URL, err)
		}
		if v.URL != u.URL {
			t.Fatalf("Canonical(%q) = %q, then %q", raw, u.URL, v.URL)
		}
	})
}
