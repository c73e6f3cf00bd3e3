package setup

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/blob/s3test"
	"github.com/shelfmark/shelfmark/internal/testkit"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
)

// TestServePreservationS3: `serve --preservation s3://bucket/prefix` keeps
// the copy in the bucket (with the --s3-* settings); while the bucket
// does not answer, /readyz says the copy is behind and the server keeps
// serving; once it answers again, the works made meanwhile are preserved
// and the storage root validates.
func TestServePreservationS3(t *testing.T) {
	srv := s3test.Start(t)
	srv.CreateBucket(t, "shelfmark")
	proxy := s3test.NewProxy(t, srv.Endpoint)
	base, data := serveInTemp(t, ServeConfig{
		content:      BlobFlags{endpoint: proxy.Endpoint, accessKey: s3test.AccessKey, secretKey: s3test.SecretKey, timeout: 5 * time.Second},
		preservation: preservationFlags{root: "s3://shelfmark/ocfl", window: 50 * time.Millisecond}})
	waitServing(t, base)
	hc := withBearer(&http.Client{Timeout: 10 * time.Second}, adminToken(t, data))
	fsys, err := blob.NewS3FS(context.Background(), blob.S3Options{Bucket: "shelfmark", Prefix: "ocfl", Endpoint: srv.Endpoint,
		AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey, SpoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	root, err := ocfl.OpenRoot(context.Background(), fsys)
	if err != nil {
		t.Fatal(err)
	}
	waitObject := func(id string) {
		t.Helper()
		for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
			_, err := root.Open(context.Background(), preserve.ObjectID(shelfmark.ID(id)))
			if err == nil {
				return
			}
			if !errors.Is(err, ocfl.ErrNotFound) || time.Since(start) > 20*time.Second {
				t.Fatalf("the object of %s never appeared: %v", id, err)
			}
		}
	}
	waitObject(createWork(t, hc, base, "kept-on-s3").ID)

	proxy.SetFault(s3test.Down, 0)
	during := createWork(t, hc, base, "made-while-down")
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		_, body, err := do(hc, http.MethodGet, base+"/readyz", "", nil, nil)
		if err == nil && strings.Contains(string(body), "preservation copy: behind") {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("readyz never said the copy is behind: %s %v", body, err)
		}
	}
	status, _, err := do(hc, http.MethodGet, base+"/api/v1/resources/"+during.ID, "", nil, nil)
	if err != nil || status != http.StatusOK {
		t.Fatalf("reading a work while the copy's bucket is down: %d %v", status, err)
	}
	proxy.SetFault(s3test.Pass, 0)
	waitObject(during.ID)
	if rep := ocfl.ValidateRoot(context.Background(), fsys); len(rep.Errors)+len(rep.Warnings) > 0 {
		t.Errorf("the storage root on S3 is not clean:\n%s", rep)
		for _, k := range testkit.S3Keys(t, srv, "shelfmark", "ocfl/") {
			t.Log(k)
		}
	}
}
