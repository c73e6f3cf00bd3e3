package postgres

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/blob/s3test"
)

func TestSmallBlobs(t *testing.T) {
	tr := &tracer{}
	db, _ := openTest(t, Options{Tracer: tr.trace})
	s3test.SmallBlobs(t, db, func() int {
		n := 0
		tr.mu.Lock()
		for _, c := range tr.calls {
			if strings.Contains(c, "small_blobs") {
				n++
			}
		}
		tr.mu.Unlock()
		tr.reset()
		return n
	})
}

// TestS3SmallBlobsInPostgres: an S3 content store whose metadata
// database is PostgreSQL keeps small blobs there; a deferred batch costs
// one statement at Sync, whatever its size, and no request to S3.
func TestS3SmallBlobsInPostgres(t *testing.T) {
	tr := &tracer{}
	db, _ := openTest(t, Options{Tracer: tr.trace})
	srv := s3test.Start(t)
	srv.CreateBucket(t, "shelfmark")
	proxy := s3test.NewProxy(t, srv.Endpoint)
	ctx := context.Background()
	s, err := blob.NewS3(ctx, blob.S3Options{Bucket: "shelfmark", Prefix: "p", Endpoint: proxy.Endpoint,
		AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey, Small: db, SpoolDir: t.TempDir(), Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, n := range []int{1, 10, 100} {
		proxy.Counts()
		tr.reset()
		var shas []string
		for i := 0; i < n; i++ {
			b, err := s.Put(ctx, strings.NewReader(fmt.Sprintf("file %d of %d", i, n)), shelfmark.PutOptions{Deferred: true})
			if err != nil {
				t.Fatal(err)
			}
			shas = append(shas, b.Digests[shelfmark.SHA256])
		}
		if c := tr.count(); c != 0 {
			t.Fatalf("%d deferred puts sent %d statements before Sync", n, c)
		}
		if err := s.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if c := tr.count(); c != 1 {
			t.Errorf("Sync of %d deferred puts sent %d statements, want 1", n, c)
		}
		if c := proxy.Counts(); s3test.Total(c) != 0 {
			t.Errorf("%d small puts cost S3 requests: %s", n, s3test.String(c))
		}
		rc, err := s.Open(ctx, shas[n-1])
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		_, _ = got.ReadFrom(rc)
		rc.Close()
		if want := fmt.Sprintf("file %d of %d", n-1, n); got.String() != want {
			t.Fatalf("read %q, want %q", got.String(), want)
		}
	}
}
