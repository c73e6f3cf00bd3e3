package blob

import (
	"bytes"
	"context"
	"encoding/hex"
	"io"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestDeferredPut: Deferred puts are stored and readable at once, Sync
// succeeds, a later synced Put of the same bytes is deduplicated, and a
// Deferred put still verifies digests and keeps nothing on a mismatch.
func TestDeferredPut(t *testing.T) {
	ctx := context.Background()
	s, err := NewLocal(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var shas []string
	for i := 0; i < 20; i++ {
		b, err := s.Put(ctx, bytes.NewReader([]byte{byte(i), 'x'}), shelfmark.PutOptions{Deferred: true})
		if err != nil {
			t.Fatal(err)
		}
		shas = append(shas, b.Digests[shelfmark.SHA256])
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	for i, sha := range shas {
		r, err := s.Open(ctx, sha)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(r)
		r.Close()
		if !bytes.Equal(got, []byte{byte(i), 'x'}) {
			t.Fatalf("blob %d holds %q", i, got)
		}
	}
	// the same bytes again, synced: one file, and the stored one is synced
	b, err := s.Put(ctx, bytes.NewReader([]byte{0, 'x'}), shelfmark.PutOptions{})
	if err != nil || b.Digests[shelfmark.SHA256] != shas[0] {
		t.Fatalf("dedupe: %v %v", b, err)
	}
	before := len(files(t, s.dir))
	_, err = s.Put(ctx, bytes.NewReader([]byte("other")), shelfmark.PutOptions{Deferred: true,
		Expect: []shelfmark.Digest{{Algorithm: shelfmark.SHA256, Value: make([]byte, 32)}}})
	if shelfmark.ErrorCode(err) != shelfmark.EDIGESTMISMATCH {
		t.Fatalf("deferred mismatch: %v", err)
	}
	if after := len(files(t, s.dir)); after != before {
		t.Fatalf("a refused deferred put left files: %d -> %d", before, after)
	}
}

// TestDeferredPutDuringSync: a Deferred put made while a Sync writes the
// pack database returns without waiting for that write, is readable at
// once, is not in the pack database after that Sync (which did not cover
// it) and is after the next.
func TestDeferredPutDuringSync(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	entered, release := make(chan struct{}), make(chan struct{})
	first := true
	s.pending.flushing = func() {
		if first {
			first = false
			close(entered)
			<-release
		}
	}
	if _, err := s.Put(ctx, bytes.NewReader([]byte("synced first")), shelfmark.PutOptions{Deferred: true}); err != nil {
		t.Fatal(err)
	}
	synced := make(chan error, 1)
	go func() { synced <- s.Sync(ctx) }()
	<-entered // the Sync holds its write
	in := []byte("put while the Sync writes")
	put := make(chan error, 1)
	var sha string
	go func() {
		b, err := s.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{Deferred: true})
		if err == nil {
			sha = b.Digests[shelfmark.SHA256]
		}
		put <- err
	}()
	if err := <-put; err != nil { // a put that waited for the Sync would hang here
		t.Fatal(err)
	}
	readBack(t, s, sha, in)
	close(release)
	if err := <-synced; err != nil {
		t.Fatal(err)
	}
	sum := sumOfHex(t, sha)
	if _, ok, err := s.small.get(ctx, sum); err != nil || ok {
		t.Fatalf("a blob put after the Sync began is in the pack database (%v, %v)", ok, err)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.small.get(ctx, sum); err != nil || !ok {
		t.Fatalf("not in the pack database after the next Sync (%v, %v)", ok, err)
	}
}

// TestDeferredPutBound: once the deferred blobs reach their bound, a put
// writes them first; when that write fails, the put fails and keeps
// nothing, the blobs acknowledged before it stay pending, and the next
// Sync with space stores them all.
func TestDeferredPutBound(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	s.pending.max = 3 * 5000
	var pages int
	if err := s.small.w.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.small.w.Exec(`PRAGMA max_page_count = ` + strconv.Itoa(pages)); err != nil {
		t.Fatal(err)
	}
	var shas []string
	for i := range 3 {
		b, err := s.Put(ctx, bytes.NewReader(bytes.Repeat([]byte{byte(i)}, 5000)), shelfmark.PutOptions{Deferred: true})
		if err != nil {
			t.Fatal(err)
		}
		shas = append(shas, b.Digests[shelfmark.SHA256])
	}
	over := bytes.Repeat([]byte{9}, 5000)
	if _, err := s.Put(ctx, bytes.NewReader(over), shelfmark.PutOptions{Deferred: true}); shelfmark.ErrorCode(err) != shelfmark.ESTORAGEFULL {
		t.Fatalf("a put past the bound with no space: %v", err)
	}
	if _, ok := s.pending.get(hexSHA256(over)); ok {
		t.Fatal("the refused put's blob is kept")
	}
	if _, err := s.small.w.Exec(`PRAGMA max_page_count = 1073741823`); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	for _, sha := range shas {
		if _, ok, err := s.small.get(ctx, sumOfHex(t, sha)); err != nil || !ok {
			t.Fatalf("an acknowledged deferred blob was not stored (%v, %v)", ok, err)
		}
	}
}

// sumOfHex decodes a SHA-256 in hex.
func sumOfHex(t *testing.T, sha string) []byte {
	t.Helper()
	sum, err := hex.DecodeString(sha)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}
