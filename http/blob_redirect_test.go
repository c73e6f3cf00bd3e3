package http

import (
	"context"
	"encoding/hex"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// presigner is the test env's content store offering presigned URLs, as
// an object store does, except for one digest it keeps to itself (as the
// S3 store does for small blobs).
type presigner struct {
	shelfmark.BlobStore
	local string // a digest with no URL
	got   shelfmark.PresignOptions
}

func (p *presigner) Presign(_ context.Context, sha string, opts shelfmark.PresignOptions) (string, error) {
	p.got = opts
	if sha == p.local {
		return "", nil
	}
	return "https://objects.example/b/" + sha + "?X-Amz-Signature=x", nil
}

// TestBlobRedirect: with BlobRedirect set and a store that presigns, a
// full download is a 307 to the store's URL carrying the file's type and
// name; a Range request, a HEAD, a blob without a URL and a server without
// the option stream the bytes.
func TestBlobRedirect(t *testing.T) {
	e := newEnv(t, Options{})
	fs := e.fileset(t)
	upload := func(name string, c content) string {
		var f resource
		e.do("POST", "/api/v1/resources/"+string(fs)+"/files?name="+name, c.reader(), "Content-Type", "application/pdf").want(t, http.StatusCreated).json(t, &f)
		return "/api/v1/resources/" + string(f.ID) + "/content"
	}
	big, small := content{seed: 1, size: 200_000}, content{seed: 2, size: 100}
	bigPath, smallPath := upload("report.pdf", big), upload("note.pdf", small)
	p := &presigner{BlobStore: e.srv.opts.Blobs, local: hexOf(small)}

	// off by default: streamed
	e.reconfigure(func(o *Options) { o.Blobs = p })
	e.do("GET", bigPath, nil).want(t, http.StatusOK)

	e.reconfigure(func(o *Options) { o.BlobRedirect = 10 * time.Minute })
	r := e.do("GET", bigPath, nil).want(t, http.StatusTemporaryRedirect)
	loc, err := url.Parse(r.Header.Get("Location"))
	if err != nil || loc.Host != "objects.example" || loc.Path != "/b/"+hexOf(big) {
		t.Errorf("Location %q", r.Header.Get("Location"))
	}
	if p.got.TTL != 10*time.Minute || p.got.ContentType != "application/pdf" || p.got.ContentDisposition == "" {
		t.Errorf("presign options %+v", p.got)
	}
	if len(r.Body) > 0 && r.Header.Get("Content-Type") == "application/pdf" {
		t.Error("the redirect carries the bytes")
	}
	// a range, a HEAD and a blob without a URL are served here
	r = e.do("GET", bigPath, nil, "Range", "bytes=10-19").want(t, http.StatusPartialContent)
	if string(r.Body) != string(big.slice(10, 20)) {
		t.Error("range: other bytes")
	}
	e.do("HEAD", bigPath, nil).want(t, http.StatusOK)
	r = e.do("GET", smallPath, nil).want(t, http.StatusOK)
	if string(r.Body) != string(small.slice(0, small.size)) {
		t.Error("small: other bytes")
	}
}

func hexOf(c content) string {
	s, _, _ := c.sums()
	return hex.EncodeToString(s)
}
