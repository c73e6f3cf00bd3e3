package http

import (
	"bytes"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// content is a reproducible stream of pseudo-random bytes: the same seed
// and size always give the same bytes, and no more than a small buffer is
// held at once.
type content struct {
	seed byte
	size int64
}

func (c content) reader() io.Reader {
	return io.LimitReader(rand.NewChaCha8([32]byte{c.seed}), c.size)
}

// pipe returns a reader fed by a goroutine writing the bytes into an
// io.Pipe, as a client streams a body it never holds whole.
func (c content) pipe() io.Reader {
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, c.reader())
		pw.CloseWithError(err)
	}()
	return pr
}

// sums returns the SHA-256, SHA-1 and MD5 of the bytes, streaming them.
func (c content) sums() (s256, s1, m5 []byte) {
	h256, h1, hm := sha256.New(), sha1.New(), md5.New()
	if _, err := io.Copy(io.MultiWriter(h256, h1, hm), c.reader()); err != nil {
		panic(err)
	}
	return h256.Sum(nil), h1.Sum(nil), hm.Sum(nil)
}

// slice returns bytes [from, to) of the stream.
func (c content) slice(from, to int64) []byte {
	r := c.reader()
	if _, err := io.CopyN(io.Discard, r, from); err != nil {
		panic(err)
	}
	b := make([]byte, to-from)
	if _, err := io.ReadFull(r, b); err != nil {
		panic(err)
	}
	return b
}

func contentDigest(sum []byte) string {
	return "sha-256=:" + base64.StdEncoding.EncodeToString(sum) + ":"
}

func (e *testEnv) fileset(t *testing.T) shelfmark.ID {
	t.Helper()
	work := e.create("/api/v1/works", `{}`)
	return e.create("/api/v1/filesets", `{"parent": "`+string(work.ID)+`"}`).ID
}

func (e *testEnv) children(t *testing.T, id shelfmark.ID) []pageItem {
	t.Helper()
	var p page
	e.do("GET", "/api/v1/resources/"+string(id)+"/children", nil).want(t, http.StatusOK).json(t, &p)
	return p.Items
}

func TestUploadAndDownload(t *testing.T) {
	e := newEnv(t, Options{})
	fs := e.fileset(t)
	up := "/api/v1/resources/" + string(fs) + "/files"
	big := content{seed: 1, size: 5<<20 + 12345}
	s256, s1, m5 := big.sums()

	// Streamed through a pipe, chunked (no Content-Length), with a
	// Content-Digest the server checks.
	r := e.do("POST", up+"?name=scan.tif&use=original", big.pipe(), "Content-Type", "image/tiff", "Content-Digest", contentDigest(s256)).want(t, http.StatusCreated)
	var f resource
	r.json(t, &f)
	if f.Kind != "file" || f.Parent != fs || f.File == nil {
		t.Fatalf("created %s", r.Body)
	}
	if f.File.Size != big.size || f.File.Digests["sha-256"] != hex.EncodeToString(s256) || f.File.Name != "scan.tif" || f.File.MediaType != "image/tiff" || f.File.Use != "original" {
		t.Errorf("file %+v", f.File)
	}
	if r.Header.Get("Location") != "/api/v1/resources/"+string(f.ID) {
		t.Errorf("Location %q", r.Header.Get("Location"))
	}

	// The same bytes again, with a known Content-Length and the legacy
	// Digest header: sha as hex, md5 as base64.
	r = e.do("POST", up+"?name=copy.bin", big.pipe(), "Content-Length", strconv.FormatInt(big.size, 10),
		"Digest", "sha="+hex.EncodeToString(s1), "Digest", "md5="+base64.StdEncoding.EncodeToString(m5)).want(t, http.StatusCreated)
	var g resource
	r.json(t, &g)
	if g.File.Size != big.size || g.File.Digests["sha-256"] != hex.EncodeToString(s256) || g.File.Digests["md5"] != hex.EncodeToString(m5) || g.File.MediaType != "application/octet-stream" {
		t.Errorf("file %+v", g.File)
	}
	// One Digest header with both, upper-case hex, a different file.
	small := content{seed: 2, size: 3 << 20}
	ss256, ss1, sm5 := small.sums()
	r = e.do("POST", up+"?digests=sha-512", small.pipe(), "Digest", "SHA="+strings.ToUpper(hex.EncodeToString(ss1))+", md5="+base64.StdEncoding.EncodeToString(sm5)).want(t, http.StatusCreated)
	var h resource
	r.json(t, &h)
	if h.File.Size != small.size || h.File.Digests["sha-256"] != hex.EncodeToString(ss256) || len(h.File.Digests["sha-512"]) != 128 || h.File.Digests["md5"] != hex.EncodeToString(sm5) {
		t.Errorf("file %+v", h.File)
	}
	// Identical bytes are stored once.
	if files := e.blobFiles(); len(files) != 2 {
		t.Errorf("blob files %q, want 2", files)
	}
	e.wantTmpEmpty()
	if kids := e.children(t, fs); len(kids) != 3 {
		t.Errorf("file set has %d files", len(kids))
	}

	// Ranged and full downloads.
	cp := "/api/v1/resources/" + string(f.ID) + "/content"
	r = e.do("GET", cp, nil, "Range", "bytes=10-19").want(t, http.StatusPartialContent)
	if !bytes.Equal(r.Body, big.slice(10, 20)) {
		t.Errorf("range body %x, want %x", r.Body, big.slice(10, 20))
	}
	if got := r.Header.Get("Content-Range"); got != "bytes 10-19/"+strconv.FormatInt(big.size, 10) {
		t.Errorf("Content-Range %q", got)
	}
	r = e.do("GET", cp, nil, "Range", "bytes=-5").want(t, http.StatusPartialContent)
	if !bytes.Equal(r.Body, big.slice(big.size-5, big.size)) {
		t.Errorf("suffix range %x", r.Body)
	}
	res := e.stream("GET", cp, nil)
	hash := sha256.New()
	n, err := io.Copy(hash, res.Body)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK || n != big.size || !bytes.Equal(hash.Sum(nil), s256) {
		t.Errorf("full download: %d, %d bytes, err %v", res.StatusCode, n, err)
	}
	if res.Header.Get("Content-Type") != "image/tiff" || res.Header.Get("Repr-Digest") != contentDigest(s256) ||
		res.Header.Get("ETag") != `"`+hex.EncodeToString(s256)+`"` || res.Header.Get("Accept-Ranges") != "bytes" ||
		res.Header.Get("Content-Length") != strconv.FormatInt(big.size, 10) || !strings.Contains(res.Header.Get("Content-Disposition"), "scan.tif") {
		t.Errorf("download headers %v", res.Header)
	}
	// A conditional GET with the content's ETag.
	r = e.do("GET", cp, nil, "If-None-Match", `"`+hex.EncodeToString(s256)+`"`)
	if r.Status != http.StatusNotModified || len(r.Body) != 0 {
		t.Errorf("If-None-Match: %d", r.Status)
	}
	// A range past the end is 416, as a JSON error that keeps Content-Range.
	r = e.do("GET", cp, nil, "Range", "bytes="+strconv.FormatInt(big.size, 10)+"-")
	r.wantError(t, http.StatusRequestedRangeNotSatisfiable, ERANGE)
	if r.Header.Get("Content-Range") != "bytes */"+strconv.FormatInt(big.size, 10) {
		t.Errorf("range past the end: Content-Range %q", r.Header.Get("Content-Range"))
	}
	// If-Match with another ETag is 412, as a JSON error.
	e.do("GET", cp, nil, "If-Match", `"0000"`).wantError(t, http.StatusPreconditionFailed, shelfmark.EPRECONDITION)

	// Only files have content; file sets hold files, works do not.
	e.do("GET", "/api/v1/resources/"+string(fs)+"/content", nil).wantError(t, http.StatusNotFound, shelfmark.ENOTFOUND)
	work := e.get(fs).Parent
	before, blobs := e.counts(), e.blobFiles()
	r = e.do("POST", "/api/v1/resources/"+string(work)+"/files", "some bytes")
	r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	r.wantNoDataWrites(t)
	e.wantCounts(before)
	if after := e.blobFiles(); strings.Join(after, ",") != strings.Join(blobs, ",") {
		t.Errorf("a refused upload left bytes: %q", after)
	}
	e.do("POST", up+"?digests=sha-1", "x").wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	e.do("POST", up, "x", "Content-Digest", "sha-256=:AAAA:").wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	e.do("POST", up, "x", "Content-Digest", "sha-256=not-a-byte-sequence").wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	e.do("POST", up, "x", "Digest", "md5").wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	e.wantCounts(before)
	e.wantTmpEmpty()
}

func TestUploadDigestMismatch(t *testing.T) {
	e := newEnv(t, Options{})
	fs := e.fileset(t)
	up := "/api/v1/resources/" + string(fs) + "/files"
	c := content{seed: 3, size: 2<<20 + 7}
	s256, s1, m5 := c.sums()
	other := content{seed: 4, size: c.size}
	o256, o1, o5 := other.sums()
	before := e.counts()

	for _, tc := range []struct {
		name          string
		hdrs          []string
		alg           string
		sent, correct []byte
	}{
		{"content-digest", []string{"Content-Digest", contentDigest(o256)}, "sha-256", o256, s256},
		{"content-digest with length", []string{"Content-Digest", contentDigest(o256), "Content-Length", strconv.FormatInt(c.size, 10)}, "sha-256", o256, s256},
		{"legacy sha hex", []string{"Digest", "sha=" + hex.EncodeToString(o1)}, "sha", o1, s1},
		{"legacy md5 base64", []string{"Digest", "md5=" + base64.StdEncoding.EncodeToString(o5)}, "md5", o5, m5},
		// One right digest does not save a wrong one.
		{"one of two wrong", []string{"Content-Digest", contentDigest(s256), "Digest", "md5=" + base64.StdEncoding.EncodeToString(o5)}, "md5", o5, m5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("POST", up, c.pipe(), tc.hdrs...)
			eb := r.wantError(t, http.StatusConflict, shelfmark.EDIGESTMISMATCH)
			if eb.Details["algorithm"] != tc.alg || eb.Details["expected"] != hex.EncodeToString(tc.sent) || eb.Details["computed"] != hex.EncodeToString(tc.correct) ||
				eb.Details["expected_base64"] != base64.StdEncoding.EncodeToString(tc.sent) || eb.Details["computed_base64"] != base64.StdEncoding.EncodeToString(tc.correct) {
				t.Errorf("details %v", eb.Details)
			}
			r.wantNoWrites(t)
			if files := e.blobFiles(); len(files) != 0 {
				t.Errorf("bytes kept: %q", files)
			}
			e.wantTmpEmpty()
			e.wantCounts(before)
			if kids := e.children(t, fs); len(kids) != 0 {
				t.Errorf("file set has files %v", kids)
			}
		})
	}
	// Two headers that disagree are refused before any byte is read.
	r := e.do("POST", up, c.pipe(), "Content-Digest", contentDigest(s256), "Digest", "sha-256="+base64.StdEncoding.EncodeToString(o256))
	r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
	r.wantNoWrites(t)
	if files := e.blobFiles(); len(files) != 0 {
		t.Errorf("bytes kept: %q", files)
	}
}

func TestExternalContent(t *testing.T) {
	e := newEnv(t, Options{})
	fs := e.fileset(t)
	up := "/api/v1/resources/" + string(fs) + "/files"
	// A server standing for the external host: it must never be asked.
	var hits atomic.Int64
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Error(w, "should not be fetched", http.StatusTeapot)
	}))
	defer remote.Close()
	// The test server is on 127.0.0.1: allowed only because it is named.
	e.reconfigure(func(o *Options) {
		o.ExternalContentAllow = []string{"https://example.org/", "http://example.org/", remote.URL + "/images/"}
	})

	for _, target := range []string{"https://example.org/a.jp2", remote.URL + "/images/b.jp2"} {
		link := `<` + target + `>; rel="http://fedora.info/definitions/fcrepo#ExternalContent"; type="image/jp2"`
		r := e.do("POST", up, nil, "Link", link).want(t, http.StatusCreated)
		var f resource
		r.json(t, &f)
		name := target[strings.LastIndex(target, "/")+1:]
		if f.File == nil || f.File.ExternalURL != target || f.File.MediaType != "image/jp2" || f.File.Size != -1 || f.File.Name != name || len(f.File.Digests) != 0 {
			t.Errorf("external file %s", r.Body)
		}
		if f.Links["content"] != "/api/v1/resources/"+string(f.ID)+"/content" {
			t.Errorf("links %v", f.Links)
		}
		r = e.do("GET", f.Links["content"], nil)
		if r.Status != http.StatusTemporaryRedirect || r.Header.Get("Location") != target {
			t.Errorf("content: %d, Location %q", r.Status, r.Header.Get("Location"))
		}
	}
	// Among other Link values, with a file name and a use from the query.
	r := e.do("POST", up+"?name=page1.jp2&use=access", nil,
		"Link", `<http://example.org/other>; rel="describedby", <http://example.org/c>; rel="http://fedora.info/definitions/fcrepo#ExternalContent"`).want(t, http.StatusCreated)
	var f resource
	r.json(t, &f)
	if f.File.ExternalURL != "http://example.org/c" || f.File.Name != "page1.jp2" || f.File.Use != "access" || f.File.MediaType != "application/octet-stream" {
		t.Errorf("external file %+v", f.File)
	}
	if hits.Load() != 0 {
		t.Errorf("the external server was asked %d times", hits.Load())
	}
	if files := e.blobFiles(); len(files) != 0 {
		t.Errorf("external content stored bytes: %q", files)
	}
	before := e.counts()
	for _, target := range []string{"ftp://example.org/a", "/relative/a.jp2", "javascript:alert(1)"} {
		r := e.do("POST", up, nil, "Link", `<`+target+`>; rel="http://fedora.info/definitions/fcrepo#ExternalContent"`)
		r.wantError(t, http.StatusBadRequest, shelfmark.EINVALID)
		r.wantNoWrites(t)
	}
	e.wantCounts(before)
}

func TestOversize(t *testing.T) {
	const maxBody, maxUpload = 1 << 10, 64 << 10
	e := newEnv(t, Options{MaxBodyBytes: maxBody, MaxUploadBytes: maxUpload})
	coll := e.create("/api/v1/collections", `{}`)
	work := e.create("/api/v1/works", `{}`)
	fs := e.create("/api/v1/filesets", `{"parent": "`+string(work.ID)+`"}`)
	cp, wp := "/api/v1/resources/"+string(coll.ID), "/api/v1/resources/"+string(work.ID)
	title := strings.Repeat("x", 4*maxBody)
	bigJSON := `{"metadata": {"dcterms:title": "` + title + `"}}`
	bigTurtle := `<> <http://purl.org/dc/terms/title> "` + title + `" .`
	before := e.counts()
	for _, rq := range []struct{ method, path, ctype, body string }{
		{"POST", "/api/v1/works", "application/json", bigJSON},
		{"POST", "/api/v1/collections", "text/turtle", bigTurtle},
		{"POST", "/api/v1/works", "application/n-triples", bigTurtle},
		{"POST", "/api/v1/batch", "application/json", `{"resources": [` + bigJSON + `]}`},
		{"PUT", wp, "application/json", bigJSON},
		{"PUT", wp, "text/turtle", bigTurtle},
		{"PATCH", wp, "application/json", `{"add": {"dcterms:title": "` + title + `"}}`},
		{"POST", cp + "/members", "application/json", `{"members": ["` + strings.Repeat(string(work.ID)+`", "`, 200) + string(work.ID) + `"]}`},
		{"PUT", wp + "/order", "application/json", `{"children": ["` + strings.Repeat(string(fs.ID)+`", "`, 200) + string(fs.ID) + `"]}`},
	} {
		for _, chunked := range []bool{false, true} {
			var body any = rq.body
			if chunked {
				body = unknownLength{strings.NewReader(rq.body)}
			}
			r := e.do(rq.method, rq.path, body, "Content-Type", rq.ctype)
			eb := r.wantError(t, http.StatusRequestEntityTooLarge, shelfmark.ETOOLARGE)
			if eb.Details["limit"] != float64(maxBody) {
				t.Errorf("%s %s: details %v", rq.method, rq.path, eb.Details)
			}
			r.wantNoStatements(t)
		}
	}
	e.wantCounts(before)
	if got := e.get(work.ID); got.Version != 1 || string(got.Metadata) != "{}" {
		t.Errorf("work changed: %+v", got)
	}
	// A body of exactly the limit is accepted.
	exact := `{"metadata": {"dcterms:title": "`
	exact += strings.Repeat("y", maxBody-len(exact)-3) + `"}}`
	if len(exact) != maxBody {
		t.Fatalf("%d bytes", len(exact))
	}
	e.do("POST", "/api/v1/works", exact, "Content-Type", "application/json").want(t, http.StatusCreated)
	before = e.counts()

	up := "/api/v1/resources/" + string(fs.ID) + "/files"
	over := content{seed: 5, size: 2 * maxUpload}
	for _, hdrs := range [][]string{
		{"Content-Length", strconv.FormatInt(over.size, 10)}, // refused from the header
		{}, // chunked: refused once the limit is passed
		{"Content-Digest", contentDigest(func() []byte { s, _, _ := over.sums(); return s }())},
	} {
		r := e.do("POST", up, over.pipe(), hdrs...)
		eb := r.wantError(t, http.StatusRequestEntityTooLarge, shelfmark.ETOOLARGE)
		if eb.Details["limit"] != float64(maxUpload) {
			t.Errorf("details %v", eb.Details)
		}
		r.wantNoWrites(t)
		if files := e.blobFiles(); len(files) != 0 {
			t.Errorf("bytes kept: %q", files)
		}
		e.wantTmpEmpty()
	}
	// One byte over, chunked.
	r := e.do("POST", up, content{seed: 6, size: maxUpload + 1}.pipe())
	r.wantError(t, http.StatusRequestEntityTooLarge, shelfmark.ETOOLARGE)
	e.wantCounts(before)
	if kids := e.children(t, fs.ID); len(kids) != 0 {
		t.Errorf("file set has files %v", kids)
	}
	// Exactly the limit is accepted, with or without a length.
	exactly := content{seed: 7, size: maxUpload}
	e.do("POST", up, exactly.pipe()).want(t, http.StatusCreated)
	e.do("POST", up, exactly.pipe(), "Content-Length", strconv.FormatInt(exactly.size, 10)).want(t, http.StatusCreated)
	if files := e.blobFiles(); len(files) != 1 {
		t.Errorf("blob files %q", files)
	}
}

// TestActiveContentIsAnAttachment: a deposited HTML or SVG file is sent
// as an attachment with a sandbox policy, never to run on the repository's
// origin; an image is shown inline.
func TestActiveContentIsAnAttachment(t *testing.T) {
	e := newEnv(t, Options{})
	fs := e.fileset(t)
	up := "/api/v1/resources/" + string(fs) + "/files"
	for _, tc := range []struct{ name, mediaType, disposition string }{
		{"page.html", "text/html; charset=utf-8", "attachment;"},
		{"logo.svg", "image/svg+xml", "attachment;"},
		{"record.xml", "application/mods+xml", "attachment;"},
		{"scan.png", "image/png", "inline;"},
	} {
		var f resource
		e.do("POST", up+"?name="+tc.name, "<svg onload=alert(1)>", "Content-Type", tc.mediaType).want(t, http.StatusCreated).json(t, &f)
		r := e.do("GET", "/api/v1/resources/"+string(f.ID)+"/content", "").want(t, http.StatusOK)
		if cd := r.Header.Get("Content-Disposition"); !strings.HasPrefix(cd, tc.disposition) {
			t.Errorf("%s (%s): Content-Disposition %q, want %s…", tc.name, tc.mediaType, cd, tc.disposition)
		}
		if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "sandbox") {
			t.Errorf("%s: Content-Security-Policy %q lacks sandbox", tc.name, csp)
		}
	}
}
