package http

// The harness of the web interface's tests: a browser-like client with a
// cookie jar that reads pages, keeps the form token of the last page, and
// posts forms as a visitor would (same-origin, with the token).

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// visitor is a browser, signed out (or, after signIn, signed-in) visitor.
type visitor struct {
	t    testing.TB
	e    *testEnv
	c    *http.Client
	csrf string // the form token of the last page read
	lang string // Accept-Language, "" for none
}

// newVisitor returns a visitor with an empty cookie jar.
func newVisitor(t testing.TB, e *testEnv) *visitor {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &visitor{t: t, e: e, c: &http.Client{Jar: jar, Transport: &http.Transport{DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

var csrfMeta = regexp.MustCompile(`<meta name="csrf-token" content="([^"]*)">`)

// htmlPage is a response the visitor read.
type htmlPage struct {
	Status int
	Header http.Header
	Body   string
}

func (b *visitor) send(req *http.Request) *htmlPage {
	b.t.Helper()
	req.Header.Set("Accept", "text/html,application/xhtml+xml")
	if b.lang != "" {
		req.Header.Set("Accept-Language", b.lang)
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		// what a visitor sends with a form of the same site
		req.Header.Set("Origin", b.e.ts.URL)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	res, err := b.c.Do(req)
	if err != nil {
		b.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		b.t.Fatal(err)
	}
	if m := csrfMeta.FindSubmatch(body); m != nil {
		b.csrf = string(m[1])
	}
	p := &htmlPage{Status: res.StatusCode, Header: res.Header, Body: string(body)}
	if res.StatusCode >= 400 && strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		b.e.noteError(&response{Method: req.Method, Path: req.URL.RequestURI(), Status: res.StatusCode, Header: res.Header, Body: body})
	}
	return p
}

// get reads a page.
func (b *visitor) get(path string) *htmlPage {
	b.t.Helper()
	req, err := http.NewRequest(http.MethodGet, b.e.ts.URL+path, nil)
	if err != nil {
		b.t.Fatal(err)
	}
	return b.send(req)
}

// post sends a form with the token of the last page read (unless the
// form sets "csrf" itself).
func (b *visitor) post(path string, form url.Values) *htmlPage {
	b.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if _, ok := form[csrfField]; !ok {
		form.Set(csrfField, b.csrf)
	}
	req, err := http.NewRequest(http.MethodPost, b.e.ts.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.send(req)
}

// postMultipart sends a multipart form: fields, and files by field name
// (name -> file name -> bytes), with the token of the last page read.
func (b *visitor) postMultipart(path string, fields url.Values, files map[string]map[string][]byte) *htmlPage {
	b.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if _, ok := fields[csrfField]; !ok {
		mw.WriteField(csrfField, b.csrf)
	}
	for k, vs := range fields {
		for _, v := range vs {
			mw.WriteField(k, v)
		}
	}
	for field, fs := range files {
		for name, data := range fs {
			w, err := mw.CreateFormFile(field, name)
			if err != nil {
				b.t.Fatal(err)
			}
			w.Write(data)
		}
	}
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, b.e.ts.URL+path, &buf)
	if err != nil {
		b.t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	return b.send(req)
}

// signIn signs in with the sign-in form and fails the test unless it
// worked.
func (b *visitor) signIn(name, password string) {
	b.t.Helper()
	b.get("/login")
	p := b.post("/login", url.Values{"name": {name}, "password": {password}, "next": {"/"}})
	if p.Status != http.StatusSeeOther {
		b.t.Fatalf("sign in as %s: %d %.300s", name, p.Status, p.Body)
	}
}

// cookie returns the value of a cookie the visitor holds for the server.
func (b *visitor) cookie(name string) string {
	u, _ := url.Parse(b.e.ts.URL)
	for _, c := range b.c.Jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}
