package warc

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"
)

// rawRecord builds a record by hand; clDelta makes its Content-Length lie.
func rawRecord(typ string, fields [][2]string, block string, clDelta int) []byte {
	var b bytes.Buffer
	b.WriteString("WARC/1.1\r\nWARC-Type: " + typ + "\r\n")
	for _, f := range fields {
		b.WriteString(f[0] + ": " + f[1] + "\r\n")
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(block)+clDelta)
	b.WriteString(block)
	b.WriteString("\r\n\r\n")
	return b.Bytes()
}

func gzipped(b []byte) []byte {
	var out bytes.Buffer
	z := gzip.NewWriter(&out)
	z.Write(b)
	z.Close()
	return out.Bytes()
}

func httpBlock(status int, headers, body string) string {
	return fmt.Sprintf("HTTP/1.1 %d X\r\n%s\r\n%s", status, headers, body)
}

func TestReaderBadInput(t *testing.T) {
	resp := func(target string, clDelta int) func(bool) []byte {
		return func(gz bool) []byte {
			b := rawRecord("response", [][2]string{{"WARC-Target-URI", target}, {"WARC-Date", "2024-05-01T12:00:00Z"}, {"Content-Type", "application/http;msgtype=response"}},
				httpBlock(200, "Content-Type: text/html\r\n", `<a href="/x">x</a>`), clDelta)
			if gz {
				return gzipped(b)
			}
			return b
		}
	}
	cases := []struct {
		name   string
		bad    func(gz bool) []byte
		reason string
	}{
		{"content-length too long", resp("http://a.example/", 7), "Content-Length"},
		{"content-length too short", resp("http://a.example/", -5), "Content-Length"},
		{"content-length far too long", resp("http://a.example/", 1<<20), "Content-Length"},
		{"no target", func(gz bool) []byte {
			b := rawRecord("response", [][2]string{{"WARC-Date", "2024-05-01T12:00:00Z"}, {"Content-Type", "application/http;msgtype=response"}}, httpBlock(200, "", "x"), 0)
			if gz {
				return gzipped(b)
			}
			return b
		}, "no WARC-Target-URI"},
		{"bad target", resp("http://exa mple.com/", 0), "WARC-Target-URI"},
		{"broken WAT JSON", func(gz bool) []byte {
			b := rawRecord("metadata", [][2]string{{"WARC-Target-URI", "http://a.example/"}, {"WARC-Date", "2024-05-01T12:00:00Z"}, {"Content-Type", "application/json"}}, `{"Envelope": {"Payload-Metadata": [`, 0)
			if gz {
				return gzipped(b)
			}
			return b
		}, "WAT JSON"},
		{"bad date", func(gz bool) []byte {
			b := rawRecord("response", [][2]string{{"WARC-Target-URI", "http://a.example/"}, {"WARC-Date", "yesterday"}, {"Content-Type", "application/http;msgtype=response"}}, httpBlock(200, "", "x"), 0)
			if gz {
				return gzipped(b)
			}
			return b
		}, "WARC-Date"},
		{"garbage", func(gz bool) []byte {
			return []byte("this is not a WARC record\r\n\x00\x01garbage WARC/1.0 not at a line start\r\n")
		}, "no WARC record"},
		{"truncated", func(gz bool) []byte {
			b := resp("http://a.example/truncated", 0)(gz)
			return b[:len(b)*2/3]
		}, ""},
		{"no content-length", func(gz bool) []byte {
			b := []byte("WARC/1.1\r\nWARC-Type: resource\r\nWARC-Target-URI: http://a.example/\r\nWARC-Date: 2024-05-01T12:00:00Z\r\n\r\nabc\r\n\r\n")
			if gz {
				return gzipped(b)
			}
			return b
		}, "Content-Length"},
		{"gzip member not a record", func(gz bool) []byte {
			if !gz {
				return []byte("WARC/1.1\r\nWARC-Type: response\r\nContent-Length: x\r\n\r\n\r\n\r\n")
			}
			return gzipped([]byte("hello, not a record"))
		}, ""},
		{"two records in one member", func(gz bool) []byte {
			b := append(resp("http://a.example/1", 0)(false), resp("http://a.example/2", 0)(false)...)
			if gz {
				return gzipped(b)
			}
			return []byte("WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 5\r\n\r\nmore than one\r\n\r\n")
		}, "more than one|Content-Length 5"},
		{"corrupt gzip", func(gz bool) []byte {
			b := resp("http://a.example/", 0)(gz)
			if !gz {
				return b[:40]
			}
			b = bytes.Clone(b)
			for i := 20; i < len(b)-10; i += 3 {
				b[i] ^= 0x55
			}
			return b
		}, ""},
	}
	for _, gz := range []bool{false, true} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/gzip=%v", c.name, gz), func(t *testing.T) {
				var buf bytes.Buffer
				w := NewWriter(&buf, gz, "1.1")
				var goodOffs []int64
				for i := range 2 {
					off, _, err := w.WriteResponse(fmt.Sprintf("http://before.example/%d", i), t0, 200, "text/html", []byte(`<a href="x">x</a>`))
					if err != nil {
						t.Fatal(err)
					}
					goodOffs = append(goodOffs, off)
				}
				badOff, _, _ := w.WriteBytes(c.bad(gz))
				for i := range 2 {
					off, _, err := w.WriteResponse(fmt.Sprintf("http://after.example/%d", i), t0, 200, "text/html", []byte(`<a href="x">x</a>`))
					if err != nil {
						t.Fatal(err)
					}
					goodOffs = append(goodOffs, off)
				}
				recs, errs := readAll(t, buf.Bytes(), 0)
				if len(errs) != 1 {
					t.Fatalf("errors %v, want one at %d", errs, badOff)
				}
				matches := false
				for _, alt := range strings.Split(c.reason, "|") {
					matches = matches || strings.Contains(errs[0].Reason, alt)
				}
				if errs[0].Offset != badOff || !matches {
					t.Errorf("error %v, want offset %d and %q", errs[0], badOff, c.reason)
				}
				if !strings.HasPrefix(errs[0].Error(), fmt.Sprintf("offset %d: ", badOff)) {
					t.Errorf("Error() = %q", errs[0].Error())
				}
				var got []int64
				for _, r := range recs {
					got = append(got, r.Offset)
				}
				if fmt.Sprint(got) != fmt.Sprint(goodOffs) {
					t.Errorf("records at %v, want %v", got, goodOffs)
				}
				for _, r := range recs {
					if strings.Contains(r.Target.URL, "after") && len(r.Links) != 1 {
						t.Errorf("record after the bad one: %+v", r)
					}
				}
			})
		}
	}
}

// TestReaderEdges covers records that are odd but good.
func TestReaderEdges(t *testing.T) {
	for _, gz := range []bool{false, true} {
		t.Run(fmt.Sprintf("gzip=%v", gz), func(t *testing.T) {
			var buf bytes.Buffer
			w := NewWriter(&buf, gz, "1.0")
			// a non-UTF-8 target: bytes percent-encoded
			w.WriteRecord("response", [][2]string{{"WARC-Target-URI", "http://a.example/caf\xe9?q=\xff"}, {"WARC-Date", "2024-05-01T12:00:00Z"}, {"Content-Type", "application/http;msgtype=response"}},
				[]byte(httpBlock(200, "Content-Type: text/html\r\n", `<a href="b">b</a>`)))
			// chunked and gzipped HTML with a 404 status and a base href
			var z bytes.Buffer
			zw := gzip.NewWriter(&z)
			io.WriteString(zw, `<html><head><base href="http://b.example/dir/"></head><a href="rel">r</a><a href="mailto:a@b">m</a><area href="/abs"><a href="rel">again</a>`)
			zw.Close()
			chunked := fmt.Sprintf("%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n", 10, z.Bytes()[:10], z.Len()-10, z.Bytes()[10:])
			w.WriteRecord("response", [][2]string{{"WARC-Target-URI", "<http://a.example/404>"}, {"WARC-Date", "2024-05-01T12:00:00Z"}, {"Content-Type", "application/http; msgtype=response"}},
				[]byte(httpBlock(404, "Content-Type: text/html; charset=iso-8859-1\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n", chunked)))
			// a dns: record: kept with an empty target
			w.WriteRecord("response", [][2]string{{"WARC-Target-URI", "dns:a.example"}, {"WARC-Date", "2024-05-01T12:00:00Z"}, {"Content-Type", "text/dns"}}, []byte("20240501120000\na.example. 300 IN A 10.0.0.1\n"))
			// padding between records
			w.WriteBytes([]byte("\r\n\r\n"))
			// a revisit without a block and a request
			w.WriteRecord("revisit", [][2]string{{"WARC-Target-URI", "http://a.example/"}, {"WARC-Date", "2024-05-01T12:00:00Z"},
				{"WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"}, {"WARC-Payload-Digest", "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}}, nil)
			w.WriteRecord("request", [][2]string{{"WARC-Target-URI", "http://a.example/"}, {"WARC-Date", "2024-05-01T12:00:00Z"}, {"Content-Type", "application/http;msgtype=request"}}, []byte("GET / HTTP/1.1\r\nHost: a.example\r\n\r\n"))
			// a WAT record of a non-HTML response: no links
			w.WriteRecord("metadata", [][2]string{{"WARC-Target-URI", "http://a.example/img"}, {"WARC-Date", "2024-05-01T12:00:00Z"}, {"Content-Type", "application/json"}}, []byte(`{"Envelope":{"Payload-Metadata":{"HTTP-Response-Metadata":{"Headers":{}}}}}`))
			// a revisit with the HTTP headers of its capture
			w.WriteRecord("revisit", [][2]string{{"WARC-Target-URI", "http://a.example/"}, {"WARC-Date", "2024-05-02T12:00:00Z"}, {"Content-Type", "application/http;msgtype=response"},
				{"WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"}, {"WARC-Payload-Digest", "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}}, []byte("HTTP/1.1 301 Moved\r\nContent-Type: text/html\r\n\r\n"))
			// a WAT record with a base, <area> links and links to skip
			w.WriteRecord("metadata", [][2]string{{"WARC-Target-URI", "http://a.example/w/page"}, {"WARC-Date", "2024-05-01T12:00:00Z"}, {"Content-Type", "application/json"}},
				[]byte(`{"Envelope":{"Payload-Metadata":{"HTTP-Response-Metadata":{"HTML-Metadata":{"Head":{"Base":"http://base.example/d/"},"Links":[`+
					`{"path":"A@/href","url":"x"},{"path":"IMG@/src","url":"i.png"},{"path":"AREA@/href","url":"/y"},{"path":"LINK@/href","url":"s.css"},{"path":"A@/href","url":"javascript:0"},{"path":"A@/href","url":"https://o.example/#f"}]}}}}}`))
			recs, errs := readAll(t, buf.Bytes(), 0)
			if len(errs) != 0 || len(recs) != 8 {
				t.Fatalf("%d records, errors %v", len(recs), errs)
			}
			if got := recs[0].Target; got.URL != "http://a.example/caf%E9?q=%FF" || got.SURT != "example,a)/caf%e9?q=%ff" {
				t.Errorf("non-UTF-8 target %+v", got)
			}
			p := recs[1]
			if p.Status != 404 || p.MIME != "text/html" || !p.HasLinks {
				t.Errorf("404 page %+v", p)
			}
			var links []string
			for _, l := range p.Links {
				links = append(links, l.URL)
			}
			if want := "[http://b.example/dir/rel http://b.example/abs http://b.example/dir/rel]"; fmt.Sprint(links) != want {
				t.Errorf("links %v, want %s", links, want)
			}
			if recs[2].Target.URL != "" || recs[2].Type != "response" {
				t.Errorf("dns record %+v", recs[2])
			}
			if recs[3].Type != "revisit" || recs[3].Digest == "" || recs[3].HasLinks {
				t.Errorf("revisit %+v", recs[3])
			}
			if recs[4].Type != "request" || recs[4].HasLinks {
				t.Errorf("request %+v", recs[4])
			}
			if recs[5].HasLinks {
				t.Errorf("WAT of an image %+v", recs[5])
			}
			if r := recs[6]; r.Status != 301 || r.MIME != "text/html" || r.HasLinks {
				t.Errorf("revisit with headers %+v", r)
			}
			links = nil
			for _, l := range recs[7].Links {
				links = append(links, l.URL)
			}
			if want := "[http://base.example/d/x http://base.example/y https://o.example/]"; !recs[7].HasLinks || fmt.Sprint(links) != want {
				t.Errorf("WAT links %v, want %s", links, want)
			}
		})
	}
}

// TestReaderResume reads a file in pieces, each Reader starting at the
// Offset the previous one stopped at.
func TestReaderResume(t *testing.T) {
	for _, gz := range []bool{false, true} {
		data, want := genCrawl(t, gz, "1.1", 30)
		all, _ := readAll(t, data, 0)
		var got []int64
		off := int64(0)
		for off < int64(len(data)) {
			r := NewReader(bytes.NewReader(data), int64(len(data)), off, Options{})
			for range 3 {
				rec, err := r.Next(t.Context())
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, rec.Offset)
			}
			if r.Offset() <= off {
				t.Fatalf("no progress at %d", off)
			}
			off = r.Offset()
		}
		if len(got) != len(want) || len(all) != len(want) {
			t.Fatalf("gzip=%v: %d records resumed, %d in one go, want %d", gz, len(got), len(all), len(want))
		}
		for i := range got {
			if got[i] != want[i].off {
				t.Fatalf("record %d at %d, want %d", i, got[i], want[i].off)
			}
		}
	}
}

// TestReaderHugePage checks that links come from the first MaxLinkBytes
// of a page only.
func TestReaderHugePage(t *testing.T) {
	var page strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&page, "<p><a href=\"/l/%d\">%d</a></p>\n", i, i)
	}
	var buf bytes.Buffer
	w := NewWriter(&buf, true, "1.1")
	w.WriteResponse("http://big.example/", t0, 200, "text/html", []byte(page.String()))
	w.WriteResponse("http://small.example/", t0.Add(time.Second), 200, "text/html", []byte(`<a href="/x">`))
	r := NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()), 0, Options{MaxLinkBytes: 64 << 10})
	rec, err := r.Next(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Links); n == 0 || n > 64<<10/20 {
		t.Errorf("%d links from a page of %d bytes capped at 64 KiB", n, page.Len())
	}
	if rec, err := r.Next(t.Context()); err != nil || len(rec.Links) != 1 {
		t.Errorf("after the huge page: %+v %v", rec, err)
	}
}

// TestReaderFlatMemory reads records much larger than the link cap
// (16 MiB, links capped at 1 MiB) and checks that reading each allocates
// at most half its size.
func TestReaderFlatMemory(t *testing.T) {
	const size = 16 << 20
	big := bytes.Repeat([]byte("x"), size)
	page := []byte(strings.Repeat(`<a href="/l">l</a>`+strings.Repeat("<p>Lorem ipsum dolor sit amet.</p>\n", 300), size/10000))
	for _, gz := range []bool{false, true} {
		t.Run(fmt.Sprintf("gzip=%v", gz), func(t *testing.T) {
			var buf bytes.Buffer
			w := NewWriter(&buf, gz, "1.1")
			d := "2024-05-01T12:00:00Z"
			w.WriteResponse("http://a.example/page", t0, 200, "text/html", page)
			w.WriteRecord("response", [][2]string{{"WARC-Target-URI", "http://a.example/nohdr"}, {"WARC-Date", d}, {"Content-Type", "application/http;msgtype=response"}}, big)
			w.WriteRecord("warcinfo", [][2]string{{"WARC-Date", d}, {"Content-Type", "application/warc-fields"}}, big)
			w.WriteRecord("revisit", [][2]string{{"WARC-Target-URI", "http://a.example/r"}, {"WARC-Date", d}, {"Content-Type", "application/http;msgtype=response"}}, big)
			w.WriteRecord("request", [][2]string{{"WARC-Target-URI", "http://a.example/q"}, {"WARC-Date", d}, {"Content-Type", "application/http;msgtype=request"}}, big)
			w.WriteRecord("resource", [][2]string{{"WARC-Target-URI", "http://a.example/s"}, {"WARC-Date", d}, {"Content-Type", "video/mp4"}}, big)
			w.WriteResponse("http://a.example/small", t0, 200, "text/html", []byte(`<a href="/x">`))
			data := buf.Bytes()
			r := NewReader(bytes.NewReader(data), int64(len(data)), 0, Options{MaxLinkBytes: 1 << 20})
			var ms runtime.MemStats
			for i := 0; ; i++ {
				runtime.ReadMemStats(&ms)
				before := ms.TotalAlloc
				rec, err := r.Next(t.Context())
				if err == io.EOF {
					if i != 7 {
						t.Fatalf("%d records", i)
					}
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				runtime.ReadMemStats(&ms)
				if got := ms.TotalAlloc - before; got > 8<<20 { // half the record
					t.Errorf("record %d (%s %s): %d bytes allocated", i, rec.Type, rec.Target.URL, got)
				}
				if i == 0 && (len(rec.Links) == 0 || len(rec.Links) > 1<<20/10000+1) {
					t.Errorf("huge page: %d links", len(rec.Links))
				}
			}
		})
	}
}

// TestWriteBad checks that every kind of bad record the Writer makes is
// one RecordError at its offset, with the records around it read.
func TestWriteBad(t *testing.T) {
	kinds := []string{BadLongContentLength, BadShortContentLength, BadTruncated, BadNoTarget, BadWATJSON, BadGarbage}
	for _, gz := range []bool{false, true} {
		var buf bytes.Buffer
		w := NewWriter(&buf, gz, "1.1")
		var bad []int64
		good := 0
		for i, k := range kinds {
			if _, _, err := w.WriteResponse(fmt.Sprintf("http://good.example/%d", i), t0, 200, "text/html", []byte(`<a href="/x">`)); err != nil {
				t.Fatal(err)
			}
			good++
			off, err := w.WriteBad(k, "http://bad.example/", t0)
			if err != nil {
				t.Fatal(err)
			}
			bad = append(bad, off)
		}
		w.WriteResponse("http://good.example/last", t0, 200, "text/html", []byte(`<a href="/x">`))
		good++
		recs, errs := readAll(t, buf.Bytes(), 0)
		var got []int64
		for _, e := range errs {
			got = append(got, e.Offset)
		}
		if fmt.Sprint(got) != fmt.Sprint(bad) || len(recs) != good {
			t.Errorf("gzip=%v: errors at %v, want %v; %d records, want %d", gz, got, bad, len(recs), good)
		}
		// a Reader made at Offset() after each result, good or bad, reads
		// what the first one reads next
		data := buf.Bytes()
		r := NewReader(bytes.NewReader(data), int64(len(data)), 0, Options{})
		for steps := 0; ; steps++ {
			at := r.Offset()
			r2 := NewReader(bytes.NewReader(data), int64(len(data)), at, Options{})
			a, aerr := r.Next(t.Context())
			b, berr := r2.Next(t.Context())
			if fmt.Sprint(aerr) != fmt.Sprint(berr) || (a == nil) != (b == nil) || a != nil && a.Offset != b.Offset {
				t.Fatalf("gzip=%v: at %d: %v %v, resumed %v %v", gz, at, a, aerr, b, berr)
			}
			if aerr == io.EOF {
				if steps != len(kinds)+good {
					t.Errorf("gzip=%v: %d steps", gz, steps)
				}
				break
			}
		}
	}
	if _, err := NewWriter(io.Discard, false, "1.1").WriteBad("nonsense", "http://a.example/", t0); err == nil {
		t.Error("unknown kind: no error")
	}
}
