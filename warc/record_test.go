package warc

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

func TestOpenRecord(t *testing.T) {
	for _, gz := range []bool{false, true} {
		t.Run(fmt.Sprintf("gzip=%v", gz), func(t *testing.T) {
			var buf bytes.Buffer
			w := NewWriter(&buf, gz, "1.1")
			w.WriteResponse("http://a.example/", t0, 200, "text/html", []byte("<p>hello</p>"))
			chunked := "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
			w.WriteRecord("response", [][2]string{{"WARC-Target-URI", "http://a.example/c"}, {"WARC-Date", "2024-05-01T12:00:00Z"}, {"Content-Type", "application/http;msgtype=response"}},
				[]byte(httpBlock(404, "Content-Type: text/plain\r\nContent-Encoding: identity\r\nTransfer-Encoding: chunked\r\n", chunked)))
			w.WriteRecord("resource", [][2]string{{"WARC-Target-URI", "http://a.example/r"}, {"WARC-Date", "2024-05-01T12:00:00Z"}, {"Content-Type", "text/plain"}}, []byte("a resource"))
			data := buf.Bytes()
			recs, errs := readAll(t, data, 0)
			if len(errs) != 0 || len(recs) != 3 {
				t.Fatalf("%d records, %v", len(recs), errs)
			}
			want := []struct {
				status int
				ctype  string
				body   string
				target string
			}{
				{200, "text/html", "<p>hello</p>", "http://a.example/"},
				{404, "text/plain", "hello world", "http://a.example/c"},
				{0, "", "a resource", "http://a.example/r"},
			}
			for i, rec := range recs {
				o, err := OpenRecord(bytes.NewReader(data), rec.Offset, rec.Length)
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(o.Body)
				if err != nil {
					t.Fatal(err)
				}
				o.Close()
				if o.Status != want[i].status || o.HTTPHeader.Get("Content-Type") != want[i].ctype || string(body) != want[i].body || o.Header.Get("warc-target-uri") != want[i].target {
					t.Errorf("record %d: %d %q %q %q", i, o.Status, o.HTTPHeader.Get("Content-Type"), body, o.Header.Get("WARC-Target-URI"))
				}
				if i == 1 && o.HTTPHeader.Get("Transfer-Encoding") != "chunked" {
					t.Errorf("original headers lost: %v", o.HTTPHeader)
				}
				if i == 2 && o.HTTPHeader != nil {
					t.Errorf("resource has HTTP headers %v", o.HTTPHeader)
				}
			}
			if _, err := OpenRecord(bytes.NewReader(data), recs[1].Offset+1, recs[1].Length); err == nil {
				t.Error("OpenRecord at a wrong offset: no error")
			}
		})
	}
}

// TestWriteRedirect: a redirect the Writer writes reads back as a response
// at its own URL (never its Location's), with its status, its Location
// header and a link to where it leads.
func TestWriteRedirect(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, true, "1.1")
	if _, _, err := w.WriteRedirect("http://a.example/visit", t0, 301, "https://www.a.example/visit/?x=1&y=2"); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	recs, errs := readAll(t, data, 0)
	if len(errs) != 0 || len(recs) != 1 {
		t.Fatalf("%d records, %v", len(recs), errs)
	}
	r := recs[0]
	if r.Type != "response" || r.Target.URL != "http://a.example/visit" || r.Status != 301 || r.MIME != "text/html" ||
		len(r.Links) != 1 || r.Links[0].URL != "https://www.a.example/visit/?x=1&y=2" {
		t.Errorf("the redirect reads as %+v", r)
	}
	o, err := OpenRecord(bytes.NewReader(data), r.Offset, r.Length)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.Status != 301 || o.HTTPHeader.Get("Location") != "https://www.a.example/visit/?x=1&y=2" || o.Header.Get("WARC-Target-URI") != "http://a.example/visit" {
		t.Errorf("the redirect opens as %d %v %v", o.Status, o.HTTPHeader, o.Header)
	}
}
