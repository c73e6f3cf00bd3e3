package blob

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestSmallDeferredSharedDirectory: two stores over one directory (as two
// processes sharing it) put small blobs concurrently, deferred and synced;
// each store's deferred blobs are readable by itself at once and by the
// other store once synced, and nothing is lost or duplicated.
func TestSmallDeferredSharedDirectory(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "blobs")
	a, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	// Deferred: readable by its own store before Sync, by the other after.
	in := []byte("a deferred small blob")
	blob, err := a.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{Deferred: true})
	if err != nil {
		t.Fatal(err)
	}
	sha := blob.Digests[shelfmark.SHA256]
	readBack(t, a, sha, in)
	if r, err := b.Open(ctx, sha); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
		if r != nil {
			r.Close()
		}
		t.Fatalf("another store sees an unsynced deferred blob: %v", err)
	}
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	readBack(t, b, sha, in)

	// Concurrent writers in both stores, some sharing bytes.
	const writers, each = 4, 50
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers)
	for _, s := range []*LocalStore{a, b} {
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					data := fmt.Appendf(nil, "blob %d of writer %d", i, w)
					opts := shelfmark.PutOptions{Deferred: i%2 == 0}
					if _, err := s.Put(ctx, bytes.NewReader(data), opts); err != nil {
						errs <- err
						return
					}
					if i%10 == 9 {
						if err := s.Sync(ctx); err != nil {
							errs <- err
							return
						}
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := len(files(t, dir)), 1+writers*each; got != want {
		t.Fatalf("%d blobs stored, want %d (distinct contents)", got, want)
	}
	for w := range writers {
		for i := range each {
			data := fmt.Appendf(nil, "blob %d of writer %d", i, w)
			readBack(t, a, hexSHA256(data), data)
		}
	}
}

// TestSmallRangeAndLimit: a small blob seeks like a file, and the size limit
// and digest checks apply to small blobs as to files, keeping nothing.
func TestSmallRangeAndLimit(t *testing.T) {
	ctx := context.Background()
	s, dir := newStore(t)
	in := data(1000, 4)
	blob, err := s.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.Open(ctx, blob.Digests[shelfmark.SHA256])
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if n, err := r.Seek(-10, io.SeekEnd); err != nil || n != 990 {
		t.Fatalf("seek: %d, %v", n, err)
	}
	tail, _ := io.ReadAll(r)
	if !bytes.Equal(tail, in[990:]) {
		t.Fatalf("tail %x", tail)
	}
	before := len(files(t, dir))
	_, err = s.Put(ctx, bytes.NewReader(data(101, 1)), shelfmark.PutOptions{MaxSize: 100})
	assertCode(t, err, shelfmark.ETOOLARGE)
	_, err = s.Put(ctx, bytes.NewReader(data(50, 1)), shelfmark.PutOptions{Deferred: true,
		Expect: []shelfmark.Digest{{Algorithm: shelfmark.SHA256, Value: make([]byte, 32)}}})
	assertCode(t, err, shelfmark.EDIGESTMISMATCH)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if after := len(files(t, dir)); after != before {
		t.Fatalf("refused puts stored blobs: %d -> %d", before, after)
	}
}

func readBack(t *testing.T, s *LocalStore, sha string, want []byte) {
	t.Helper()
	r, err := s.Open(context.Background(), sha)
	if err != nil {
		t.Fatalf("open %s: %v", sha, err)
	}
	defer r.Close()
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("read %q, %v; want %q", got, err, want)
	}
}

func hexSHA256(b []byte) string { return hex.EncodeToString(hexSum(shelfmark.SHA256, b)) }

// TestWalk visits every stored blob once, files and small ones alike, and
// stops at fn's error.
func TestWalk(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	want := map[string]bool{}
	for _, n := range []int{0, 10, SmallMax, SmallMax + 1, 3 * copyBufSize} {
		b, err := s.Put(ctx, bytes.NewReader(data(n, 7)), shelfmark.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want[b.Digests[shelfmark.SHA256]] = true
	}
	got := map[string]bool{}
	err := s.Walk(ctx, func(sha string) error {
		if got[sha] {
			t.Errorf("%s visited twice", sha)
		}
		got[sha] = true
		return nil
	})
	if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("walked %v, %v; want %v", got, err, want)
	}
	stop := errors.New("stop")
	n := 0
	if err := s.Walk(ctx, func(string) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("walk after stop: %d calls, %v", n, err)
	}
}
