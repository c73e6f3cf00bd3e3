package warc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

var t0 = time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)

type wrote struct {
	off, length int64
	typ, target string
}

// genCrawl writes a small crawl and returns what it wrote.
func genCrawl(t testing.TB, gz bool, version string, n int) ([]byte, []wrote) {
	var buf bytes.Buffer
	w := NewWriter(&buf, gz, version)
	var out []wrote
	add := func(typ, target string, off, l int64, err error) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, wrote{off, l, typ, target})
	}
	off, l, err := w.WriteWarcinfoAt(t0, "test.warc", [][2]string{{"software", "shelfmark test"}})
	add("warcinfo", "", off, l, err)
	for i := range n {
		target := fmt.Sprintf("http://www.example.com/page/%d", i)
		body := fmt.Sprintf(`<html><head><title>p</title></head><body><a href="/page/%d">next</a> <a href="http://other.org/x?b=2&a=1#frag">o</a><img src="i.png"></body></html>`, i+1)
		off, l, err := w.WriteResponse(target, t0.Add(time.Duration(i)*time.Second), 200, "text/html; charset=utf-8", []byte(body))
		add("response", target, off, l, err)
		if i%3 == 0 {
			off, l, err := w.WriteResponse(target+".png", t0, 200, "image/png", []byte("\x89PNG....."))
			add("response", target+".png", off, l, err)
		}
		if i%4 == 0 {
			off, l, err := w.WriteMetadataWAT(target, t0, []string{"/a", "mailto:x@y", "https://z.net/"})
			add("metadata", target, off, l, err)
		}
	}
	return buf.Bytes(), out
}

func readAll(t testing.TB, data []byte, offset int64) (recs []*shelfmark.WebRecord, errs []*RecordError) {
	t.Helper()
	r := NewReader(bytes.NewReader(data), int64(len(data)), offset, Options{})
	last := int64(-1)
	for i := 0; ; i++ {
		if i > 100000 {
			t.Fatal("reader loops")
		}
		rec, err := r.Next(context.Background())
		if err == io.EOF {
			return
		}
		var re *RecordError
		if errors.As(err, &re) {
			if re.Offset <= last {
				t.Fatalf("error offset %d after %d", re.Offset, last)
			}
			last = re.Offset
			errs = append(errs, re)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Offset <= last {
			t.Fatalf("record offset %d after %d", rec.Offset, last)
		}
		last = rec.Offset
		recs = append(recs, rec)
	}
}

func TestReaderGenerated(t *testing.T) {
	for _, gz := range []bool{false, true} {
		for _, v := range []string{"1.0", "1.1"} {
			t.Run(fmt.Sprintf("gzip=%v/%s", gz, v), func(t *testing.T) {
				data, want := genCrawl(t, gz, v, 20)
				recs, errs := readAll(t, data, 0)
				if len(errs) != 0 {
					t.Fatalf("errors: %v", errs)
				}
				if len(recs) != len(want) {
					t.Fatalf("%d records, want %d", len(recs), len(want))
				}
				for i, rec := range recs {
					w := want[i]
					if rec.Offset != w.off || rec.Length != w.length || rec.Type != w.typ {
						t.Errorf("record %d: %d+%d %s, want %d+%d %s", i, rec.Offset, rec.Length, rec.Type, w.off, w.length, w.typ)
					}
					if w.target != "" {
						c, _ := Canonical(w.target)
						if rec.Target != c {
							t.Errorf("record %d: target %+v, want %+v", i, rec.Target, c)
						}
					}
				}
				// a page and its links
				p := recs[1]
				if p.Status != 200 || p.MIME != "text/html" || !p.HasLinks || len(p.Links) != 2 {
					t.Fatalf("page: %+v", p)
				}
				if p.Links[0].URL != "http://www.example.com/page/1" || p.Links[1].SURT != "org,other)/x?a=1&b=2" {
					t.Errorf("links %+v", p.Links)
				}
				if p.Digest == "" || !strings.HasPrefix(p.RecordID, "<urn:uuid:") || !p.Time.Equal(t0) {
					t.Errorf("page %+v", p)
				}
				img := recs[2]
				if img.MIME != "image/png" || img.HasLinks {
					t.Errorf("image %+v", img)
				}
				wat := recs[3]
				if wat.Type != "metadata" || !wat.HasLinks || len(wat.Links) != 2 || wat.Links[0].URL != "http://www.example.com/a" {
					t.Errorf("wat %+v", wat)
				}
				if recs[0].Type != "warcinfo" || recs[0].Target.URL != "" {
					t.Errorf("warcinfo %+v", recs[0])
				}
			})
		}
	}
}
