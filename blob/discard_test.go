package blob

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// discardCase runs the cases of Discard on a store: a blob file and a
// small blob each removed when nothing holds them, kept when held (asked
// once it is out of reach) or stored again after the refused upload, and
// a blob not stored is no error.
func discardCase(t *testing.T, s shelfmark.BlobStore, d shelfmark.BlobDiscarder, wait time.Duration) {
	ctx := context.Background()
	put := func(n int, seed byte) (string, time.Time) {
		t.Helper()
		b, err := s.Put(ctx, bytes.NewReader(data(n, seed)), shelfmark.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return b.Digests[shelfmark.SHA256], time.Now()
	}
	stored := func(sha string) bool {
		t.Helper()
		rc, err := s.Open(ctx, sha)
		if shelfmark.ErrorCode(err) == shelfmark.ENOTFOUND {
			return false
		} else if err != nil {
			t.Fatal(err)
		}
		rc.Close()
		return true
	}
	held := func(h bool) func(context.Context) (bool, error) {
		return func(ctx context.Context) (bool, error) { return h, nil }
	}
	for _, size := range []int{200 << 10, 1000} {
		sha, at := put(size, 1)
		if ok, err := d.Discard(ctx, sha, at, held(true)); err != nil || ok || !stored(sha) {
			t.Errorf("%d bytes, held: removed %v, %v; stored %v", size, ok, err, stored(sha))
		}
		if ok, err := d.Discard(ctx, sha, at, held(false)); err != nil || !ok || stored(sha) {
			t.Errorf("%d bytes, held by nothing: removed %v, %v; stored %v", size, ok, err, stored(sha))
		}
		// stored again (by another upload) after the refused one
		sha, at = put(size, 2)
		time.Sleep(wait) // the store's clock must move past at
		put(size, 2)
		if ok, err := d.Discard(ctx, sha, at, held(false)); err != nil || ok || !stored(sha) {
			t.Errorf("%d bytes stored again: removed %v, %v; stored %v", size, ok, err, stored(sha))
		}
	}
	if ok, err := d.Discard(ctx, shaHex([]byte("never stored")), time.Now(), held(false)); err != nil || ok {
		t.Errorf("bytes never stored: %v, %v", ok, err)
	}
	if ok, err := d.Discard(ctx, "not a digest", time.Now(), held(false)); err != nil || ok {
		t.Errorf("not a digest: %v, %v", ok, err)
	}
}

// TestDiscard: LocalStore removes the bytes of a refused upload at once
// unless held or stored again.
func TestDiscard(t *testing.T) {
	s, dir := newStore(t)
	discardCase(t, s, s, 10*time.Millisecond)
	// nothing is left aside
	for _, f := range files(t, dir) {
		if bytes.Contains([]byte(f), []byte(gcPrefix)) {
			t.Errorf("left aside: %s", f)
		}
	}
}

// TestS3Discard: S3Store does the same, with S3's whole seconds.
func TestS3Discard(t *testing.T) {
	e := newS3Env(t, func(o *S3Options) { o.Refresh = time.Nanosecond })
	discardCase(t, e.store, e.store, 2*time.Second)
}
