package blob

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
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
