package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/warc"
)

// TestIngestWARCBadRecords: each kind of bad record (a Content-Length
// that lies either way, a truncated record and gzip member, no target URI,
// broken WAT JSON, garbage), a gigantic page, a link loop and a non-UTF-8
// URL, in a gzipped and a plain file: every bad record is reported by file
// and offset, the command exits non-zero, and every good record around them
// is indexed with its links.
func TestIngestWARCBadRecords(t *testing.T) {
	for _, gz := range []bool{true, false} {
		t.Run(fmt.Sprintf("gzip=%v", gz), func(t *testing.T) {
			dir := t.TempDir()
			name := "bad.warc"
			if gz {
				name += ".gz"
			}
			path := filepath.Join(dir, name)
			var buf bytes.Buffer
			w := warc.NewWriter(&buf, gz, "1.1")
			at := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
			good := 0
			page := func(url string, links ...string) {
				t.Helper()
				var b strings.Builder
				for _, l := range links {
					fmt.Fprintf(&b, `<a href="%s">x</a>`, l)
				}
				if _, _, err := w.WriteResponse(url, at.Add(time.Duration(good)*time.Second), 200, "text/html", []byte(b.String())); err != nil {
					t.Fatal(err)
				}
				good++
			}
			bad := map[int64]string{}
			page("http://a.example/", "http://b.example/") // a loop: a -> b -> a
			for _, kind := range []string{warc.BadLongContentLength, warc.BadShortContentLength, warc.BadTruncated, warc.BadNoTarget, warc.BadWATJSON, warc.BadGarbage} {
				if kind == warc.BadGarbage && gz {
					continue // garbage is never gzipped
				}
				off, err := w.WriteBad(kind, "http://bad.example/"+kind, at)
				if err != nil {
					t.Fatal(err)
				}
				bad[off] = kind
				page(fmt.Sprintf("http://after.example/%s", kind), "http://a.example/")
			}
			page("http://b.example/", "http://a.example/")
			page("http://c.example/caf\xe9", "http://a.example/caf\xe9")
			// a gigantic page: its links past the first 4 MiB are not read
			huge := "<a href=\"http://early.example/\">x</a>" + strings.Repeat("<p>filler text</p>", (5<<20)/18) + "<a href=\"http://late.example/\">x</a>"
			if _, _, err := w.WriteResponse("http://huge.example/", at, 200, "text/html", []byte(huge)); err != nil {
				t.Fatal(err)
			}
			good++
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			data := filepath.Join(dir, "data")
			out, err := runCLI(t, "ingest", path, "--data", data)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d bad records", len(bad))) {
				t.Fatalf("ingest: %v, want an error naming %d bad records\n%s", err, len(bad), out)
			}
			for off, kind := range bad {
				if want := fmt.Sprintf("bad %s@%d: ", path, off); !strings.Contains(out, want) {
					t.Errorf("%s at %d: the output has no line %q\n%s", kind, off, want, out)
				}
			}
			if want := fmt.Sprintf("%d records, %d bad", good, len(bad)); !strings.Contains(out, want) {
				t.Errorf("the summary does not say %q:\n%s", want, out)
			}
			ctx := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
			repo := openRepo(t, "", data)
			surt := func(u string) string {
				c, err := warc.Canonical(u)
				if err != nil {
					t.Fatal(err)
				}
				return c.SURT
			}
			links := func(u string) *shelfmark.WebLinkInfo {
				l, err := repo.WebLinks(ctx, shelfmark.WebLinkQuery{SURT: surt(u)})
				if err != nil {
					t.Fatalf("links of %s: %v", u, err)
				}
				return l
			}
			// a.example is linked from b.example and from each page after a bad record
			if got, want := links("http://a.example/").InboundCount, int64(1+len(bad)); got != want {
				t.Errorf("a.example inbound %d, want %d", got, want)
			}
			if got := links("http://b.example/").InboundCount; got != 1 {
				t.Errorf("b.example inbound %d, want 1 (from a.example)", got)
			}
			if got := links("http://a.example/caf\xe9").InboundCount; got != 1 {
				t.Errorf("the non-UTF-8 URL: inbound %d, want 1", got)
			}
			if got := links("http://early.example/").InboundCount; got != 1 {
				t.Errorf("the huge page's first link: inbound %d, want 1", got)
			}
			if _, err := repo.WebLinks(ctx, shelfmark.WebLinkQuery{SURT: surt("http://late.example/")}); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
				t.Errorf("the huge page's link past 4 MiB: %v, want not in the index", err)
			}
			for _, kind := range bad {
				p, err := repo.WebCaptures(ctx, shelfmark.WebCaptureQuery{SURT: surt("http://after.example/" + kind)})
				if err != nil || len(p.Captures) != 1 {
					t.Errorf("the page after the %s record: %v captures, %v", kind, p, err)
				}
			}
		})
	}
}

// TestIngestWriteCache: --write-cache takes a size (a WARC is indexed
// with it), refuses anything else before opening the store, and is
// refused beside --server.
func TestIngestWriteCache(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "one.warc.gz")
	var buf bytes.Buffer
	w := warc.NewWriter(&buf, true, "1.1")
	if _, _, err := w.WriteResponse("http://a.example/", time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC), 200, "text/html",
		[]byte(`<a href="http://b.example/">b</a>`)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"lots", "-1MiB", "0"} {
		data := filepath.Join(dir, "bad"+bad)
		if out, err := runCLI(t, "ingest", path, "--data", data, "--write-cache", bad); err == nil || !strings.Contains(err.Error(), "--write-cache") {
			t.Errorf("--write-cache %s: %v, want an error naming the flag\n%s", bad, err, out)
		}
		if _, err := os.Stat(data); err == nil {
			t.Errorf("--write-cache %s: the store was opened (%s exists)", bad, data)
		}
	}
	// it names a local store's setting: a server keeps its own
	scans := filepath.Join(dir, "scans", "w1")
	if err := os.MkdirAll(scans, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(scans, "page.txt"), []byte("a page"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(t, "ingest", filepath.Dir(scans), "--server", "http://127.0.0.1:1", "--write-cache", "8MiB"); err == nil || !strings.Contains(err.Error(), "--write-cache and --server exclude each other") {
		t.Errorf("--write-cache with --server: %v, want them refused together\n%s", err, out)
	}
	out, err := runCLI(t, "ingest", path, "--data", filepath.Join(dir, "data"), "--write-cache", "8MiB")
	if err != nil || !strings.Contains(out, "1 records") || !strings.Contains(out, "1 links") {
		t.Fatalf("ingest with --write-cache 8MiB: %v\n%s", err, out)
	}
}
