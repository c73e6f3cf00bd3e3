package kit

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestETagListMatches(t *testing.T) {
	for _, c := range []struct {
		list, etag string
		want       bool
	}{
		{`"a"`, `"a"`, true},
		{`W/"a"`, `"a"`, true},
		{`"a"`, `W/"a"`, true},
		{`"b", W/"a"`, `W/"a"`, true},
		{`"b",W/"a"`, `W/"a"`, true},
		{`"x,y", "a"`, `"a"`, true},
		{`"x,y"`, `"x"`, false},
		{`*`, `W/"a"`, true},
		{` * `, `"a"`, true},
		{`"b"`, `"a"`, false},
		{`a`, `"a"`, false},
		{`"a`, `"a"`, false},
		{`"b", junk, "a"`, `"a"`, false},
		{`"a"`, ``, false},
		{``, `"a"`, false},
	} {
		if got := ETagListMatches(c.list, c.etag); got != c.want {
			t.Errorf("ETagListMatches(%q, %q) = %v, want %v", c.list, c.etag, got, c.want)
		}
	}
}

func TestBodyETag(t *testing.T) {
	a, b := BodyETag([]byte("one page")), BodyETag([]byte("one "), []byte("page"))
	if a != b || a[:3] != `W/"` || a[len(a)-1] != '"' {
		t.Errorf("parts hash as their concatenation, as a weak tag: %s %s", a, b)
	}
	if a == BodyETag([]byte("one page.")) {
		t.Error("a changed body keeps its tag")
	}
}

func TestNotModified(t *testing.T) {
	lm := time.Date(2026, 3, 1, 10, 0, 0, 500e6, time.UTC)
	v := Validators{ETag: `W/"v1"`, LastModified: lm}
	at := func(d time.Duration) string { return lm.Add(d).UTC().Format(http.TimeFormat) }
	for _, c := range []struct {
		name   string
		method string
		hdrs   []string
		v      Validators
		want   int
	}{
		{"no condition", "GET", nil, v, 200},
		{"etag", "GET", []string{"If-None-Match", `W/"v1"`}, v, 304},
		{"strong form of the weak tag", "HEAD", []string{"If-None-Match", `"v1"`}, v, 304},
		{"other etag", "GET", []string{"If-None-Match", `W/"v0"`}, v, 200},
		{"any", "GET", []string{"If-None-Match", `*`}, v, 304},
		{"date, same second", "GET", []string{"If-Modified-Since", at(0)}, v, 304},
		{"date, later", "GET", []string{"If-Modified-Since", at(time.Hour)}, v, 304},
		{"date, earlier", "GET", []string{"If-Modified-Since", at(-time.Second)}, v, 200},
		{"bad date", "GET", []string{"If-Modified-Since", "yesterday"}, v, 200},
		// If-None-Match decides when sent, whatever the date says
		{"etag wins", "GET", []string{"If-None-Match", `W/"v0"`, "If-Modified-Since", at(time.Hour)}, v, 200},
		{"etag wins the other way", "GET", []string{"If-None-Match", `W/"v1"`, "If-Modified-Since", at(-time.Hour)}, v, 304},
		// a representation without a date is never 304 by date
		{"no date to compare", "GET", []string{"If-Modified-Since", at(time.Hour)}, Validators{ETag: `W/"v1"`}, 200},
		{"no etag to compare", "GET", []string{"If-None-Match", `W/"v1"`}, Validators{LastModified: lm}, 200},
		{"not a read", "POST", []string{"If-None-Match", `W/"v1"`}, v, 200},
	} {
		r := httptest.NewRequest(c.method, "/x", nil)
		for i := 0; i < len(c.hdrs); i += 2 {
			r.Header.Add(c.hdrs[i], c.hdrs[i+1])
		}
		w := httptest.NewRecorder()
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Security-Policy", "style-src 'nonce-x'")
		w.Header().Set("Cache-Control", "public, max-age=60")
		got := 200
		if NotModified(w, r, c.v) {
			got = w.Code
		}
		if got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
			continue
		}
		h := w.Header()
		if h.Get("ETag") != c.v.ETag {
			t.Errorf("%s: ETag %q", c.name, h.Get("ETag"))
		}
		if want := ""; c.v.LastModified.IsZero() && h.Get("Last-Modified") != want {
			t.Errorf("%s: Last-Modified %q without a date", c.name, h.Get("Last-Modified"))
		}
		if got == 304 && (h.Get("Content-Type") != "" || h.Get("Content-Security-Policy") != "" || h.Get("Cache-Control") == "") {
			t.Errorf("%s: the 304 keeps the representation's headers or drops the cache's: %v", c.name, h)
		}
	}
}

func TestSettled(t *testing.T) {
	lm := time.Date(2026, 3, 1, 10, 0, 0, 900e6, time.UTC)
	if got := Settled(lm, lm.Add(500*time.Millisecond)); !got.IsZero() {
		t.Errorf("a date whose second is not over is sent: %v", got)
	}
	if got := Settled(lm, lm.Add(1050*time.Millisecond)); !got.IsZero() {
		t.Errorf("a date sent before it settled: %v", got)
	}
	if got := Settled(lm, lm.Add(1200*time.Millisecond)); !got.Equal(lm) {
		t.Errorf("a settled date is not sent: %v", got)
	}
	if got := Settled(time.Time{}, lm); !got.IsZero() {
		t.Errorf("no date became %v", got)
	}
}

func TestSetCache(t *testing.T) {
	for _, c := range []struct {
		c      Cache
		maxAge time.Duration
		cookie bool
		want   string
	}{
		{CachePublic, 2 * time.Minute, false, "public, max-age=120"},
		{CachePublic, 0, false, "public, no-cache"},
		{CachePublic, time.Minute, true, "private, no-cache"},
		{CachePrivate, time.Minute, false, "private, no-cache"},
		{CacheNoStore, time.Minute, false, "no-store"},
		{CacheRevalidate, time.Minute, false, "no-cache"},
	} {
		h := http.Header{}
		if c.cookie {
			h.Add("Set-Cookie", "lang=de")
		}
		SetCache(h, c.c, c.maxAge)
		if got := h.Get("Cache-Control"); got != c.want {
			t.Errorf("SetCache(%d, %v, cookie %v) = %q, want %q", c.c, c.maxAge, c.cookie, got, c.want)
		}
	}
}

func TestAddVary(t *testing.T) {
	h := http.Header{}
	h.Add("Vary", "Origin")
	AddVary(h, "Cookie", "Authorization")
	AddVary(h, "cookie", "Accept-Language")
	if got := h.Values("Vary"); len(got) != 4 || got[0] != "Origin" || got[1] != "Cookie" || got[2] != "Authorization" || got[3] != "Accept-Language" {
		t.Errorf("Vary %q", got)
	}
}

// TestAcceptsGzip: gzip is taken when Accept-Encoding names it (or x-gzip,
// or *) with a weight above zero, and not when gzip is refused with q=0.
func TestAcceptsGzip(t *testing.T) {
	for ae, want := range map[string]bool{
		"":                            false,
		"identity":                    false,
		"gzip":                        true,
		"GZIP":                        true,
		"x-gzip":                      true,
		"*":                           true,
		"deflate, br":                 false,
		"gzip, deflate, br":           true,
		"deflate;q=0.5, gzip;q=0.8":   true,
		"gzip;q=0":                    false,
		"gzip; q=0.000":               false,
		"gzip;q=0, identity":          false,
		"*, gzip;q=0":                 false,
		"*;q=0":                       false,
		"*;q=0, gzip":                 true,
		"br;q=1.0, gzip ; q=0.1":      true,
		"gzip;level=1;q=0.5":          true,
		"gzip;q=nonsense":             true,
		"compress, x-gzip;q=0, gzip ": false,
	} {
		r, _ := http.NewRequest("GET", "/", nil)
		if ae != "" {
			r.Header.Set("Accept-Encoding", ae)
		}
		if got := AcceptsGzip(r); got != want {
			t.Errorf("Accept-Encoding %q: %v, want %v", ae, got, want)
		}
	}
}
