package http

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/api"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/http/webarchive"
	"github.com/shelfmark/shelfmark/ingest"
	"github.com/shelfmark/shelfmark/warc"
)

// webT0 is the time of the test crawls' first captures.
var webT0 = time.Date(2024, 3, 15, 12, 0, 0, 0, time.UTC)

// The pages of the test crawl of a host (see webCrawl).
const (
	webHome1 = `<html><body><a href="/a">A</a> <a href="/b">B</a> <a href="http://other.example.net/x">X</a></body></html>`
	webHome2 = `<html><body><a href="/a">A again</a></body></html>`
	webPageA = `<html><body><a href="/">home</a></body></html>`
)

// webCrawl writes a gzipped WARC of a small crawl of host: its home page
// (links to /a, /b and another domain) and /a (a link home) on webT0; a
// missing page of www.host; the next day the home page again (linking to
// /a only) and a revisit of /a.
func webCrawl(t testing.TB, host string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := warc.NewWriter(&buf, true, "1.1")
	home, a := "http://"+host+"/", "http://"+host+"/a"
	day := webT0.Add(24 * time.Hour)
	steps := []func() error{
		func() error {
			_, _, err := w.WriteResponse(home, webT0, 200, "text/html; charset=utf-8", []byte(webHome1))
			return err
		},
		func() error {
			_, _, err := w.WriteResponse(a, webT0.Add(time.Minute), 200, "text/html", []byte(webPageA))
			return err
		},
		func() error {
			_, _, err := w.WriteResponse("http://news."+host+"/c", webT0.Add(2*time.Minute), 404, "text/plain", []byte("gone"))
			return err
		},
		func() error { _, _, err := w.WriteResponse(home, day, 200, "text/html", []byte(webHome2)); return err },
		func() error {
			_, _, err := w.WriteRecord("revisit", webFields(a, day.Add(time.Minute), warc.Digest([]byte(webPageA))),
				[]byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"))
			return err
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// webFields are the WARC header fields of a revisit record.
func webFields(target string, at time.Time, digest string) [][2]string {
	return [][2]string{
		{"WARC-Target-URI", target},
		{"WARC-Date", at.UTC().Format(time.RFC3339)},
		{"WARC-Payload-Digest", digest},
		{"WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"},
		{"Content-Type", "application/http; msgtype=response"},
	}
}

// webFixture is a crawl stored and indexed: a work holding its WARC file.
type webFixture struct {
	work, file shelfmark.ID
}

// webIngest stores a crawl of host as a work of visibility vis (in
// collection coll, when given) and indexes it, as the system.
func (e *policyEnv) webIngest(host string, vis shelfmark.Visibility, coll shelfmark.ID) *webFixture {
	e.t.Helper()
	b := webCrawl(e.t, host)
	work := &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: vis, Metadata: titled("Crawl of " + host)}
	if coll != "" {
		work.MemberOf = []shelfmark.ID{coll}
	}
	return e.webIndexWARC(work, nil, host+".warc.gz", b)
}

// webIndexWARC stores the WARC bytes b as a file of a new work (or of
// the file set fs) and indexes them.
func (e *policyEnv) webIndexWARC(work *shelfmark.NewResource, fs *shelfmark.Resource, name string, b []byte) *webFixture {
	e.t.Helper()
	ctx := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
	f := &webFixture{}
	if fs == nil {
		w := e.createAll(ctx, []*shelfmark.NewResource{work})[0]
		fs = e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: w.ID}})[0]
		f.work = w.ID
	}
	file := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFile, Parent: fs.ID, File: e.putBytes(name, "application/warc", b)}})[0]
	f.file = file.ID
	done, st, err := ingest.IndexWARC(ctx, e.repo, bytes.NewReader(b), int64(len(b)), file.ID, ingest.WARCOptions{})
	if err != nil || !done || st.Errors != 0 {
		e.t.Fatalf("index %s: %v (indexed %v, %+v)", name, err, done, st)
	}
	return f
}

// webCaptureList is what GET /api/v1/web/captures answers.
type webCapturesBody struct {
	Captures []shelfmark.Capture `json:"captures"`
	Next     string              `json:"next"`
}

func (e *policyEnv) webCaptures(t *testing.T, query string, hdrs ...string) webCapturesBody {
	t.Helper()
	var b webCapturesBody
	e.do("GET", "/api/v1/web/captures?"+query, nil, hdrs...).want(t, http.StatusOK).json(t, &b)
	return b
}

// urls lists the URLs of captures with their times.
func (b webCapturesBody) urls() []string {
	var out []string
	for _, c := range b.Captures {
		out = append(out, c.URL+" "+c.Time.UTC().Format(webarchive.Time14))
	}
	return out
}

// TestWebCaptures looks captures up by URL: exact, prefix (match= and a
// trailing *), host and domain matches, time ranges as 14-digit prefixes
// and RFC 3339 times, pages with their cursor and Link, and CDXJ as pywb
// writes it.
func TestWebCaptures(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		e.webIngest("example.org", shelfmark.Public, "")
		anon := as("")
		t0, t1, t2 := webT0.Format(webarchive.Time14), webT0.Add(time.Minute).Format(webarchive.Time14), webT0.Add(2*time.Minute).Format(webarchive.Time14)
		d0, d1 := webT0.Add(24*time.Hour).Format(webarchive.Time14), webT0.Add(24*time.Hour+time.Minute).Format(webarchive.Time14)
		home, a, c := "http://example.org/", "http://example.org/a", "http://news.example.org/c"
		for _, tc := range []struct {
			query string
			want  []string
		}{
			{"url=" + url.QueryEscape(home), []string{home + " " + t0, home + " " + d0}},
			{"url=example.org", []string{home + " " + t0, home + " " + d0}}, // no scheme: http://
			{"url=" + url.QueryEscape("HTTP://Example.ORG:80/#frag"), []string{home + " " + t0, home + " " + d0}},
			{"url=" + url.QueryEscape(a), []string{a + " " + t1, a + " " + d1}},
			{"url=" + url.QueryEscape(home) + "&match=prefix", []string{home + " " + t0, home + " " + d0, a + " " + t1, a + " " + d1}},
			{"url=" + url.QueryEscape(home+"*"), []string{home + " " + t0, home + " " + d0, a + " " + t1, a + " " + d1}},
			{"url=" + url.QueryEscape(home) + "&matchType=host", []string{home + " " + t0, home + " " + d0, a + " " + t1, a + " " + d1}},
			{"url=" + url.QueryEscape(home) + "&match=domain", []string{home + " " + t0, home + " " + d0, a + " " + t1, a + " " + d1, c + " " + t2}},
			{"url=" + url.QueryEscape("*.example.org"), []string{home + " " + t0, home + " " + d0, a + " " + t1, a + " " + d1, c + " " + t2}},
			{"url=" + url.QueryEscape(c) + "&match=exact", []string{c + " " + t2}},
			{"url=" + url.QueryEscape("http://example.org/b"), nil},        // linked to, never captured
			{"url=" + url.QueryEscape("http://example.org/\xff\xfe"), nil}, // not UTF-8: looked up, percent-encoded
			// time ranges: a prefix stands for its period, to included
			{"url=" + url.QueryEscape(home) + "&from=20240316", []string{home + " " + d0}},
			{"url=" + url.QueryEscape(home) + "&to=20240315", []string{home + " " + t0}},
			{"url=" + url.QueryEscape(home) + "&from=2024&to=2024", []string{home + " " + t0, home + " " + d0}},
			{"url=" + url.QueryEscape(home) + "&to=" + t0, []string{home + " " + t0}},
			{"url=" + url.QueryEscape(home) + "&from=2025", nil},
			{"url=" + url.QueryEscape(home) + "&to=2023", nil},
			{"url=" + url.QueryEscape(home) + "&from=2024-03-15T13:00:00Z", []string{home + " " + d0}},
			{"url=" + url.QueryEscape(home) + "&from=2024-03-15T13:00:00%2B02:00", []string{home + " " + t0, home + " " + d0}},
		} {
			got := e.webCaptures(t, tc.query, anon...).urls()
			if !slices.Equal(got, tc.want) {
				t.Errorf("%s: %q, want %q", tc.query, got, tc.want)
			}
		}

		// one capture, in full
		b := e.webCaptures(t, "url="+url.QueryEscape(a), anon...)
		got := b.Captures[0]
		if got.Type != "response" || got.Status != 200 || got.MIME != "text/html" || got.Digest != warc.Digest([]byte(webPageA)) ||
			got.SURT != "org,example)/a" || got.Length <= 0 || got.File == "" || got.Work == "" || !got.HasLinks || got.Links != 1 {
			t.Errorf("capture %+v", got)
		}
		if rv := b.Captures[1]; rv.Type != "revisit" {
			t.Errorf("second capture of /a: %+v, want the revisit", rv)
		}
		var one shelfmark.Capture
		e.do("GET", fmt.Sprintf("/api/v1/web/captures/%d", got.ID), nil, anon...).want(t, http.StatusOK).json(t, &one)
		if one.ID != got.ID || one.URL != a || !one.Time.Equal(got.Time) || one.Offset != got.Offset {
			t.Errorf("GET captures/%d: %+v, want %+v", got.ID, one, got)
		}

		// pages of 2: each with a cursor and a Link to the next
		var all []string
		q := "url=" + url.QueryEscape(home) + "&match=domain&limit=2"
		for path, pages := "/api/v1/web/captures?"+q, 0; path != ""; pages++ {
			if pages > 5 {
				t.Fatal("more pages than captures")
			}
			r := e.do("GET", path, nil, anon...).want(t, http.StatusOK)
			var b webCapturesBody
			r.json(t, &b)
			all = append(all, b.urls()...)
			link := r.Header.Get("Link")
			if (b.Next == "") != (link == "") {
				t.Fatalf("next %q with Link %q", b.Next, link)
			}
			path = ""
			if b.Next != "" {
				want := "cursor=" + url.QueryEscape(b.Next)
				if !strings.Contains(link, want) || !strings.HasSuffix(link, `>; rel="next"`) {
					t.Errorf("Link %q does not lead to %s", link, want)
				}
				path = strings.TrimSuffix(strings.TrimPrefix(link, "<"), `>; rel="next"`)
			}
		}
		if len(all) != 5 || !slices.IsSortedFunc(all, func(x, y string) int { return 0 }) {
			t.Errorf("paged: %q", all)
		}
		if whole := e.webCaptures(t, "url="+url.QueryEscape(home)+"&match=domain", anon...).urls(); !slices.Equal(all, whole) {
			t.Errorf("pages of 2 give %q, one page %q", all, whole)
		}

		// CDXJ, as pywb's indexer writes it
		r := e.do("GET", "/api/v1/web/captures?url="+url.QueryEscape(a)+"&output=cdxj", nil, anon...).want(t, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); ct != "text/x-cdxj; charset=utf-8" {
			t.Errorf("CDXJ Content-Type %q", ct)
		}
		lines := strings.Split(strings.TrimSuffix(string(r.Body), "\n"), "\n")
		want0 := fmt.Sprintf(`org,example)/a %s {"url": "http://example.org/a", "mime": "text/html", "status": "200", "digest": "%s", "length": "%d", "offset": "%d", "filename": "%s"}`,
			t1, strings.TrimPrefix(got.Digest, "sha1:"), got.Length, got.Offset, got.File)
		if len(lines) != 2 || lines[0] != want0 {
			t.Errorf("CDXJ:\n%s\nwant first line\n%s", r.Body, want0)
		}
		if len(lines) == 2 && !strings.Contains(lines[1], `"mime": "warc/revisit"`) {
			t.Errorf("CDXJ of the revisit: %s", lines[1])
		}
		r = e.do("GET", "/api/v1/web/captures?url="+url.QueryEscape(home)+"&match=domain&output=cdxj&limit=3", nil, anon...).want(t, http.StatusOK)
		if n := strings.Count(string(r.Body), "\n"); n != 3 || !strings.Contains(r.Header.Get("Link"), "output=cdxj") {
			t.Errorf("CDXJ page of 3: %d lines, Link %q", n, r.Header.Get("Link"))
		}
	})
}

// TestWebBadParameters: every bad parameter of the web routes is a 400
// naming it, and changes nothing.
func TestWebBadParameters(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	e.webIngest("example.org", shelfmark.Public, "")
	home := url.QueryEscape("http://example.org/")
	for _, c := range []struct{ path, names string }{
		{"/api/v1/web/captures", "url"},
		{"/api/v1/web/captures?url=", "url"},
		{"/api/v1/web/captures?url=" + url.QueryEscape("ftp://example.org/"), "url"},
		{"/api/v1/web/captures?url=" + url.QueryEscape("http:///nohost"), "url"},
		{"/api/v1/web/captures?url=*", "url"},
		{"/api/v1/web/captures?url=" + strings.Repeat("a", 8001), "url"},
		{"/api/v1/web/captures?url=" + home + "&match=fuzzy", "match"},
		{"/api/v1/web/captures?url=" + home + "&matchType=fuzzy", "matchType"},
		{"/api/v1/web/captures?url=" + home + "&match=exact&matchType=prefix", "matchType"},
		{"/api/v1/web/captures?url=" + url.QueryEscape("http://example.org/*") + "&match=exact", "match"},
		{"/api/v1/web/captures?url=" + home + "&from=2024-13", "from"},
		{"/api/v1/web/captures?url=" + home + "&from=202413", "from"},
		{"/api/v1/web/captures?url=" + home + "&from=20240230", "from"},
		{"/api/v1/web/captures?url=" + home + "&from=123456789012345", "from"},
		{"/api/v1/web/captures?url=" + home + "&to=yesterday", "to"},
		{"/api/v1/web/captures?url=" + home + "&from=2025&to=2024", "from"},
		{"/api/v1/web/captures?url=" + home + "&limit=0", "limit"},
		{"/api/v1/web/captures?url=" + home + "&limit=10001", "limit"},
		{"/api/v1/web/captures?url=" + home + "&limit=ten", "limit"},
		{"/api/v1/web/captures?url=" + home + "&cursor=nonsense", "cursor"},
		{"/api/v1/web/captures?url=" + home + "&output=xml", "output"},
		{"/api/v1/web/captures/abc", "id"},
		{"/api/v1/web/captures/0", "id"},
		{"/api/v1/web/record", "url"},
		{"/api/v1/web/record?url=" + url.QueryEscape("mailto:a@example.org"), "url"},
		{"/api/v1/web/record?url=" + home + "&at=tomorrow", "at"},
		{"/api/v1/web/record?url=" + home + "&at=20241301", "at"},
		{"/api/v1/web/links", "url"},
		{"/api/v1/web/links?url=" + home + "&inbound_after=x", "inbound_after"},
		{"/api/v1/web/links?url=" + home + "&outbound_after=-1", "outbound_after"},
		{"/api/v1/web/links?url=" + home + "&limit=0", "limit"},
		{"/api/v1/web/top?n=0", "n"},
		{"/api/v1/web/top?n=1001", "n"},
		{"/api/v1/web/top?n=many", "n"},
		{"/api/v1/web/top?domain=" + url.QueryEscape("http://example.org/"), "domain"},
		{"/api/v1/web/top?domain=" + url.QueryEscape("a b"), "domain"},
	} {
		r := e.do("GET", c.path, nil)
		eb := r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
		if !strings.Contains(eb.Message, c.names) {
			t.Errorf("GET %s: %q does not name %s", c.path, eb.Message, c.names)
		}
		r.wantNoWrites(t)
	}
}

// TestWebRecord: the payload of the capture nearest a time, with its
// original headers, as a Memento; a revisit answers with the payload it
// repeats.
func TestWebRecord(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		e.webIngest("example.org", shelfmark.Public, "")
		home, a := url.QueryEscape("http://example.org/"), url.QueryEscape("http://example.org/a")
		day := webT0.Add(24 * time.Hour)
		for _, c := range []struct {
			query, body, ctype string
			at                 time.Time
		}{
			{"url=" + home + "&at=20240315", webHome1, "text/html; charset=utf-8", webT0},
			{"url=" + home + "&at=" + webT0.Format(webarchive.Time14), webHome1, "text/html; charset=utf-8", webT0},
			{"url=" + home + "&at=2024-03-16T11:00:00Z", webHome2, "text/html", day},
			{"url=" + home, webHome2, "text/html", day}, // now: the latest
			{"url=" + home + "&at=1999", webHome1, "text/html; charset=utf-8", webT0},
			{"url=" + a + "&at=20240315", webPageA, "text/html", webT0.Add(time.Minute)},
			// the revisit of /a: the payload of the response it repeats
			{"url=" + a + "&at=20240317", webPageA, "text/html", day.Add(time.Minute)},
		} {
			r := e.do("GET", "/api/v1/web/record?"+c.query, nil, as("")...).want(t, http.StatusOK)
			h := r.Header
			if string(r.Body) != c.body {
				t.Errorf("%s: body %q, want %q", c.query, r.Body, c.body)
			}
			if h.Get("Content-Type") != c.ctype || h.Get("X-Archive-Orig-Content-Type") != c.ctype {
				t.Errorf("%s: Content-Type %q, X-Archive-Orig-Content-Type %q, want %q", c.query, h.Get("Content-Type"), h.Get("X-Archive-Orig-Content-Type"), c.ctype)
			}
			if h.Get("X-Archive-Orig-Status") != "200" || h.Get("X-Archive-Orig-Content-Length") == "" {
				t.Errorf("%s: original status %q, length %q", c.query, h.Get("X-Archive-Orig-Status"), h.Get("X-Archive-Orig-Content-Length"))
			}
			if md := h.Get("Memento-Datetime"); md != c.at.Format(http.TimeFormat) {
				t.Errorf("%s: Memento-Datetime %q, want %q", c.query, md, c.at.Format(http.TimeFormat))
			}
			if l := h.Get("Link"); !strings.HasPrefix(l, "<http://example.org/") || !strings.HasSuffix(l, `>; rel="original"`) {
				t.Errorf("%s: Link %q", c.query, l)
			}
			if h.Get("Shelfmark-Capture") == "" || !strings.Contains(h.Get("Content-Security-Policy"), "sandbox") {
				t.Errorf("%s: Shelfmark-Capture %q, Content-Security-Policy %q", c.query, h.Get("Shelfmark-Capture"), h.Get("Content-Security-Policy"))
			}
		}
		// the capture a revisit names is the revisit; the payload's is said apart
		r := e.do("GET", "/api/v1/web/record?url="+a+"&at=20240317", nil, as("")...)
		if r.Header.Get("Shelfmark-Capture") == r.Header.Get("Shelfmark-Payload-Capture") || r.Header.Get("Shelfmark-Payload-Capture") == "" {
			t.Errorf("revisit: Shelfmark-Capture %q, Shelfmark-Payload-Capture %q", r.Header.Get("Shelfmark-Capture"), r.Header.Get("Shelfmark-Payload-Capture"))
		}
		// a URL never captured, and a capture without a payload
		e.do("GET", "/api/v1/web/record?url="+url.QueryEscape("http://example.org/b"), nil, as("")...).wantError(t, http.StatusNotFound, shelfmark.ENOTFOUND)
		e.do("GET", "/api/v1/web/record?url="+url.QueryEscape("http://nowhere.example.com/"), nil, as("")...).wantError(t, http.StatusNotFound, shelfmark.ENOTFOUND)
	})
}

// TestWebRevisitWithoutOriginal: a revisit whose payload no earlier
// capture holds is a 404 saying so.
func TestWebRevisitWithoutOriginal(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	var buf bytes.Buffer
	w := warc.NewWriter(&buf, false, "1.1")
	if _, _, err := w.WriteRecord("revisit", webFields("http://lonely.example.org/", webT0, warc.Digest([]byte("elsewhere"))),
		[]byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	e.webIndexWARC(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Public}, nil, "lonely.warc", buf.Bytes())
	eb := e.do("GET", "/api/v1/web/record?url="+url.QueryEscape("http://lonely.example.org/"), nil).wantError(t, http.StatusNotFound, shelfmark.ENOTFOUND)
	if !strings.Contains(eb.Message, "revisit") {
		t.Errorf("message %q", eb.Message)
	}
}

// TestWebPrivateCrawl: the captures of a private crawl are hidden from
// anonymous callers (404 for the capture and its record, absent from
// lists) and shown to the administrator.
func TestWebPrivateCrawl(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		e.webIngest("example.org", shelfmark.Public, "")
		e.webIngest("example.com", shelfmark.Private, "")
		q := "url=" + url.QueryEscape("http://example.com/") + "&match=domain"
		adminList := e.webCaptures(t, q)
		if len(adminList.Captures) != 5 {
			t.Fatalf("the administrator sees %d captures of the private crawl, want 5", len(adminList.Captures))
		}
		if anon := e.webCaptures(t, q, as("")...); len(anon.Captures) != 0 || anon.Next != "" {
			t.Errorf("anonymous callers see %q of the private crawl", anon.urls())
		}
		r := e.do("GET", "/api/v1/web/captures?"+q+"&output=cdxj", nil, as("")...).want(t, http.StatusOK)
		if len(r.Body) != 0 {
			t.Errorf("anonymous CDXJ of the private crawl: %s", r.Body)
		}
		id := adminList.Captures[0].ID
		e.do("GET", fmt.Sprintf("/api/v1/web/captures/%d", id), nil, as("")...).wantError(t, http.StatusNotFound, shelfmark.ENOTFOUND)
		e.do("GET", fmt.Sprintf("/api/v1/web/captures/%d", id), nil).want(t, http.StatusOK)
		rec := "/api/v1/web/record?url=" + url.QueryEscape("http://example.com/")
		e.do("GET", rec, nil, as("")...).wantError(t, http.StatusNotFound, shelfmark.ENOTFOUND)
		if r := e.do("GET", rec, nil).want(t, http.StatusOK); string(r.Body) != webHome2 {
			t.Errorf("the administrator's record: %q", r.Body)
		}
		// the public crawl is there for everyone
		if pub := e.webCaptures(t, "url="+url.QueryEscape("http://example.org/")+"&match=domain", as("")...); len(pub.Captures) != 5 {
			t.Errorf("anonymous callers see %d captures of the public crawl, want 5", len(pub.Captures))
		}
		// a capture id that does not exist is the same 404
		e.do("GET", "/api/v1/web/captures/999999", nil, as("")...).wantError(t, http.StatusNotFound, shelfmark.ENOTFOUND)
	})
}

// webLinksBody is what GET /api/v1/web/links answers.
type webLinksBody struct {
	URL           string   `json:"url"`
	Domain        string   `json:"domain"`
	InboundCount  int64    `json:"inbound_count"`
	Inbound       []string `json:"inbound"`
	NextInbound   string   `json:"next_inbound"`
	Outbound      []string `json:"outbound"`
	OutboundKnown bool     `json:"outbound_known"`
	NextOutbound  string   `json:"next_outbound"`
}

// TestWebLinks: the link index is hidden from anonymous callers and from
// readers of one collection (404), open to a viewer of the whole
// repository and the administrator, and to everyone when the repository
// declares it public; its counts follow the newest captures.
func TestWebLinks(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		coll := e.createAll(context.Background(), []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Visibility: shelfmark.Public, Metadata: titled("Crawls")}})[0]
		e.webIngest("example.org", shelfmark.Public, coll.ID)
		reader := e.addUser("reader", shelfmark.ScopeRead)
		collViewer := e.addUser("collviewer", shelfmark.ScopeRead)
		e.do("PUT", "/api/v1/roles", `{"grants": [{"principal": "user:reader", "role": "viewer"}]}`, "Content-Type", "application/json").want(t, http.StatusOK)
		e.grantRoles(coll.ID, []api.GrantJSON{{Principal: "user:collviewer", Role: "viewer"}})

		links := "/api/v1/web/links?url=" + url.QueryEscape("http://example.org/a")
		top := "/api/v1/web/top?domain=example.org&n=5"
		topDomains := "/api/v1/web/top"
		for _, who := range [][]string{as(""), as(collViewer)} {
			for _, p := range []string{links, top, topDomains} {
				e.do("GET", p, nil, who...).wantError(t, http.StatusNotFound, shelfmark.ENOTFOUND)
			}
		}
		for _, who := range [][]string{as(reader), nil} {
			var b webLinksBody
			e.do("GET", links, nil, who...).want(t, http.StatusOK).json(t, &b)
			if b.URL != "http://example.org/a" || b.Domain != "example.org" || b.InboundCount != 1 ||
				!slices.Equal(b.Inbound, []string{"http://example.org/"}) || !b.OutboundKnown || !slices.Equal(b.Outbound, []string{"http://example.org/"}) {
				t.Errorf("links of /a: %+v", b)
			}
		}
		// the home page's newest capture dropped /b and the other domain
		var b webLinksBody
		e.do("GET", "/api/v1/web/links?url="+url.QueryEscape("http://example.org/"), nil).want(t, http.StatusOK).json(t, &b)
		if b.InboundCount != 1 || !slices.Equal(b.Outbound, []string{"http://example.org/a"}) {
			t.Errorf("links of the home page: %+v", b)
		}
		e.do("GET", "/api/v1/web/links?url="+url.QueryEscape("http://example.org/b"), nil).want(t, http.StatusOK).json(t, &b)
		if b.InboundCount != 0 || b.OutboundKnown || len(b.Inbound) != 0 {
			t.Errorf("links of /b: %+v", b)
		}
		e.do("GET", "/api/v1/web/links?url="+url.QueryEscape("http://unknown.example.com/"), nil).wantError(t, http.StatusNotFound, shelfmark.ENOTFOUND)

		var pages struct {
			Domain string               `json:"domain"`
			Pages  []shelfmark.WebCount `json:"pages"`
		}
		e.do("GET", top, nil, as(reader)...).want(t, http.StatusOK).json(t, &pages)
		if pages.Domain != "example.org" || len(pages.Pages) != 2 || pages.Pages[0].Inbound != 1 || pages.Pages[1].Inbound != 1 {
			t.Errorf("top pages: %+v", pages)
		}
		// a host asks for its registered domain
		e.do("GET", "/api/v1/web/top?domain=WWW.Example.org", nil).want(t, http.StatusOK).json(t, &pages)
		if pages.Domain != "example.org" || len(pages.Pages) != 2 {
			t.Errorf("top pages of www.example.org: %+v", pages)
		}
		var domains struct {
			Domains []shelfmark.WebCount `json:"domains"`
		}
		e.do("GET", topDomains, nil).want(t, http.StatusOK).json(t, &domains)
		if len(domains.Domains) != 1 || domains.Domains[0].Name != "example.org" || domains.Domains[0].Inbound != 2 {
			t.Errorf("top domains: %+v", domains)
		}
		e.do("GET", "/api/v1/web/top?domain=unknown.example.com", nil).want(t, http.StatusOK).json(t, &pages)
		if len(pages.Pages) != 0 {
			t.Errorf("top pages of an unknown domain: %+v", pages)
		}

		// paging: one link a page
		e.do("GET", links+"&limit=1", nil).want(t, http.StatusOK).json(t, &b)
		if len(b.Inbound) != 1 || b.NextInbound != "" {
			t.Errorf("one link a page: %+v", b)
		}

		// a repository whose link index is public: anonymous callers too
		pub := webPublicServer(t, e)
		res, err := http.Get(pub + links)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || json.Unmarshal(body, &b) != nil || b.InboundCount != 1 {
			t.Errorf("anonymous links on a public link index: %d %s", res.StatusCode, body)
		}
	})
}

// webPublicServer serves e's store through a repository whose link
// index is public (RepositoryOptions.WebLinksPublic) and returns its URL.
func webPublicServer(t *testing.T, e *policyEnv) string {
	t.Helper()
	repo := shelfmark.NewRepository(e.store, shelfmark.RepositoryOptions{WebLinksPublic: true, IDs: e.repo.IDs()})
	o := e.srv.opts
	o.Resources, o.Jobs = repo, repo
	ts := httptest.NewServer(NewServer(o))
	t.Cleanup(func() { ts.Close(); repo.Close() })
	return ts.URL
}

// TestWebRecordKinds: a payload sent chunked and gzipped is answered
// de-chunked and still gzipped, saying so (Content-Encoding), with its
// original framing headers kept as X-Archive-Orig-*; a resource record
// (no HTTP) is answered with its own media type; HEAD sends the headers
// alone.
func TestWebRecordKinds(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("<html>zipped page</html>"))
	zw.Close()
	var chunked bytes.Buffer
	fmt.Fprintf(&chunked, "%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n", 10, gz.Bytes()[:10], gz.Len()-10, gz.Bytes()[10:])
	block := append([]byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\nX-Served-By: origin-7\r\n\r\n"), chunked.Bytes()...)
	var buf bytes.Buffer
	w := warc.NewWriter(&buf, true, "1.1")
	at := webT0.Format(time.RFC3339)
	if _, _, err := w.WriteRecord("response", [][2]string{{"WARC-Target-URI", "http://zip.example.org/"}, {"WARC-Date", at},
		{"Content-Type", "application/http; msgtype=response"}}, block); err != nil {
		t.Fatal(err)
	}
	png := []byte("\x89PNG\r\n\x1a\nnot really")
	if _, _, err := w.WriteRecord("resource", [][2]string{{"WARC-Target-URI", "http://zip.example.org/logo.png"}, {"WARC-Date", at},
		{"Content-Type", "image/png"}, {"WARC-Payload-Digest", warc.Digest(png)}}, png); err != nil {
		t.Fatal(err)
	}
	e.webIndexWARC(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Public}, nil, "zip.warc.gz", buf.Bytes())

	r := e.do("GET", "/api/v1/web/record?url="+url.QueryEscape("http://zip.example.org/"), nil, as("")...).want(t, http.StatusOK)
	h := r.Header
	if !bytes.Equal(r.Body, gz.Bytes()) || h.Get("Content-Encoding") != "gzip" || h.Get("Content-Type") != "text/html" {
		t.Errorf("gzipped payload: Content-Encoding %q, Content-Type %q, body %q", h.Get("Content-Encoding"), h.Get("Content-Type"), r.Body)
	}
	if h.Get("Transfer-Encoding") != "" || h.Get("X-Archive-Orig-Transfer-Encoding") != "chunked" || h.Get("X-Archive-Orig-X-Served-By") != "origin-7" ||
		h.Get("X-Archive-Orig-Content-Encoding") != "gzip" {
		t.Errorf("gzipped payload's headers: %v", h)
	}
	r = e.do("GET", "/api/v1/web/record?url="+url.QueryEscape("http://zip.example.org/logo.png"), nil, as("")...).want(t, http.StatusOK)
	if !bytes.Equal(r.Body, png) || r.Header.Get("Content-Type") != "image/png" || r.Header.Get("X-Archive-Orig-Status") != "" {
		t.Errorf("resource record: %v %q", r.Header, r.Body)
	}
	r = e.do("HEAD", "/api/v1/web/record?url="+url.QueryEscape("http://zip.example.org/logo.png"), nil, as("")...).want(t, http.StatusOK)
	if len(r.Body) != 0 || r.Header.Get("Memento-Datetime") == "" {
		t.Errorf("HEAD: %v %q", r.Header, r.Body)
	}
}

// TestWebRevisitRefersTo: a revisit naming the capture it repeats
// (WARC-Refers-To-Target-URI and -Date) is answered with that capture's
// payload, even at another URL; one naming none with the latest earlier
// capture of its URL with the same payload, however long before.
func TestWebRevisitRefersTo(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	body := []byte("<html>the same bytes</html>")
	var buf bytes.Buffer
	w := warc.NewWriter(&buf, true, "1.1")
	page, mirror := "http://same.example.org/", "http://mirror.example.org/copy"
	write := func(f func() error) {
		if err := f(); err != nil {
			t.Fatal(err)
		}
	}
	for _, at := range []time.Time{webT0, webT0.Add(time.Hour)} {
		write(func() error { _, _, err := w.WriteResponse(page, at, 200, "text/html", body); return err })
	}
	revisit := func(target string, at time.Time, refers ...[2]string) func() error {
		return func() error {
			_, _, err := w.WriteRecord("revisit", append(webFields(target, at, warc.Digest(body)), refers...), []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n"))
			return err
		}
	}
	later := webT0.Add(2 * 365 * 24 * time.Hour)
	write(revisit(page, webT0.Add(2*time.Hour), [2]string{"WARC-Refers-To-Target-URI", page}, [2]string{"WARC-Refers-To-Date", webT0.Format(time.RFC3339)}))
	write(revisit(page, later))
	write(revisit(mirror, later, [2]string{"WARC-Refers-To-Target-URI", page}, [2]string{"WARC-Refers-To-Date", webT0.Add(time.Hour).Format(time.RFC3339)}))
	e.webIndexWARC(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Public}, nil, "same.warc.gz", buf.Bytes())
	caps := e.webCaptures(t, "url="+url.QueryEscape(page)).Captures
	if len(caps) != 4 {
		t.Fatalf("%d captures of the page, want 4", len(caps))
	}
	for _, c := range []struct {
		url     string
		at      time.Time
		payload int64
	}{
		{page, webT0.Add(2 * time.Hour), caps[0].ID}, // the one it names
		{page, later, caps[1].ID},                    // the latest before it
		{mirror, later, caps[1].ID},                  // another URL's
	} {
		r := e.do("GET", "/api/v1/web/record?url="+url.QueryEscape(c.url)+"&at="+c.at.Format(webarchive.Time14), nil).want(t, http.StatusOK)
		if string(r.Body) != string(body) || r.Header.Get("Shelfmark-Payload-Capture") != fmt.Sprint(c.payload) {
			t.Errorf("revisit of %s at %s: payload capture %q, want %d; body %q", c.url, c.at, r.Header.Get("Shelfmark-Payload-Capture"), c.payload, r.Body)
		}
	}
}

// countingBlobs counts the bytes read from the files it opens.
type countingBlobs struct {
	shelfmark.BlobStore
	n atomic.Int64
}

func (c *countingBlobs) Open(ctx context.Context, sha256 string) (io.ReadSeekCloser, error) {
	rc, err := c.BlobStore.Open(ctx, sha256)
	if err != nil {
		return nil, err
	}
	return &countingFile{ReadSeekCloser: rc, ra: kit.ReaderAt(rc), n: &c.n}, nil
}

type countingFile struct {
	io.ReadSeekCloser
	ra io.ReaderAt
	n  *atomic.Int64
}

func (f *countingFile) Read(p []byte) (int, error) {
	n, err := f.ReadSeekCloser.Read(p)
	f.n.Add(int64(n))
	return n, err
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.ra.ReadAt(p, off)
	f.n.Add(int64(n))
	return n, err
}

// TestWebRecordReadsByOffset: the record of a capture reads its record
// from the WARC file, not the file: as few bytes for the last record of
// a 10 MB file as for the first, and so does a capture's page.
func TestWebRecordReadsByOffset(t *testing.T) {
	e := newPolicyEnv(t, "sqlite", Options{})
	var buf bytes.Buffer
	w := warc.NewWriter(&buf, true, "1.1")
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 2000
	body := make([]byte, 8000)
	for i := range n {
		for j := range body {
			body[j] = byte('a' + rng.IntN(26))
		}
		if _, _, err := w.WriteResponse(fmt.Sprintf("http://big.example.org/p%d", i), webT0.Add(time.Duration(i)*time.Second), 200, "text/html", body); err != nil {
			t.Fatal(err)
		}
	}
	e.webIndexWARC(&shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Public}, nil, "big.warc.gz", buf.Bytes())
	cb := &countingBlobs{BlobStore: e.blobs}
	o := e.srv.opts
	o.Blobs = cb
	ts := httptest.NewServer(NewServer(o))
	defer ts.Close()
	read := func(path string) int64 {
		t.Helper()
		before := cb.n.Load()
		res, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
		}
		return cb.n.Load() - before
	}
	last := e.webCaptures(t, "url="+url.QueryEscape(fmt.Sprintf("http://big.example.org/p%d", n-1))).Captures[0]
	first := read("/api/v1/web/record?url=" + url.QueryEscape("http://big.example.org/p0"))
	end := read("/api/v1/web/record?url=" + url.QueryEscape(fmt.Sprintf("http://big.example.org/p%d", n-1)))
	page := read(fmt.Sprintf("/web/captures/%d", last.ID))
	t.Logf("a %d-byte WARC: %d bytes read for the first record, %d for the last, %d for the last one's page (its record is %d bytes)",
		buf.Len(), first, end, page, last.Length)
	for what, got := range map[string]int64{"first record": first, "last record": end, "capture page": page} {
		if got < last.Length/2 || got > 4*last.Length+64<<10 {
			t.Errorf("the %s read %d bytes of the %d-byte file; its record is %d bytes", what, got, buf.Len(), last.Length)
		}
	}
}
