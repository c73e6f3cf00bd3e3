package s3test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// SmallBlobs checks a shelfmark.SmallBlobStore: put (with duplicates in
// one batch), get, keyset listing, and deletion that spares blobs stored
// again. statements, when not nil, returns how many statements the store
// sent since the last call: a put of any batch must cost one.
func SmallBlobs(t *testing.T, s shelfmark.SmallBlobStore, statements func() int) {
	ctx := context.Background()
	blob := func(i int) shelfmark.SmallBlob {
		data := []byte(fmt.Sprintf("small blob %d", i))
		sum := sha256.Sum256(data)
		return shelfmark.SmallBlob{SHA256: hex.EncodeToString(sum[:]), Data: data}
	}
	if statements != nil {
		statements()
	}
	var batch []shelfmark.SmallBlob
	for i := 0; i < 120; i++ {
		batch = append(batch, blob(i))
	}
	batch = append(batch, blob(3)) // a duplicate in the batch
	if err := s.PutSmallBlobs(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if statements != nil {
		if n := statements(); n != 1 {
			t.Errorf("a put of %d blobs sent %d statements, want 1", len(batch), n)
		}
		if err := s.PutSmallBlobs(ctx, nil); err != nil {
			t.Fatal(err)
		}
		if n := statements(); n != 0 {
			t.Errorf("an empty put sent %d statements", n)
		}
	}
	for _, i := range []int{0, 3, 119} {
		b := blob(i)
		data, ok, err := s.SmallBlob(ctx, b.SHA256)
		if err != nil || !ok || string(data) != string(b.Data) {
			t.Fatalf("blob %d: %q %v %v", i, data, ok, err)
		}
	}
	if _, ok, err := s.SmallBlob(ctx, hex.EncodeToString(make([]byte, 32))); ok || err != nil {
		t.Fatalf("a blob never stored: %v %v", ok, err)
	}
	if _, ok, err := s.SmallBlob(ctx, "not-hex"); ok || err != nil {
		t.Fatalf("a bad digest: %v %v", ok, err)
	}
	// keyset listing in pages of 50
	future := time.Now().Add(time.Hour)
	seen := map[string]bool{}
	sizes := map[string]int64{}
	for _, b := range batch {
		sizes[b.SHA256] = int64(len(b.Data))
	}
	after := ""
	for pages := 0; ; pages++ {
		page, err := s.ListSmallBlobs(ctx, after, future, 50)
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range page {
			if i > 0 && b.SHA256 <= page[i-1].SHA256 || b.SHA256 <= after || seen[b.SHA256] {
				t.Fatalf("page %d out of order at %d", pages, i)
			}
			seen[b.SHA256] = true
			if want, ok := sizes[b.SHA256]; !ok || b.Size != want {
				t.Fatalf("listed %s of size %d, want %d", b.SHA256, b.Size, want)
			}
		}
		if len(page) < 50 {
			break
		}
		after = page[len(page)-1].SHA256
	}
	if len(seen) != 120 {
		t.Fatalf("listed %d blobs, want 120", len(seen))
	}
	past := time.Now().Add(-time.Hour)
	if page, err := s.ListSmallBlobs(ctx, "", past, 50); err != nil || len(page) != 0 {
		t.Fatalf("blobs stored before an hour ago: %d %v", len(page), err)
	}
	// deletion spares what was stored after the cutoff
	cutoff := time.Now().Add(time.Minute)
	n, err := s.DeleteSmallBlobs(ctx, []string{blob(0).SHA256, blob(1).SHA256}, past)
	if err != nil || n != 0 {
		t.Fatalf("deleted %d blobs stored after the cutoff: %v", n, err)
	}
	n, err = s.DeleteSmallBlobs(ctx, []string{blob(0).SHA256, blob(1).SHA256, hex.EncodeToString(make([]byte, 32))}, cutoff)
	if err != nil || n != 2 {
		t.Fatalf("deleted %d, want 2: %v", n, err)
	}
	if _, ok, _ := s.SmallBlob(ctx, blob(0).SHA256); ok {
		t.Fatal("a deleted blob is still there")
	}
	// storing again renews the time
	before := time.Now()
	if err := s.PutSmallBlobs(ctx, []shelfmark.SmallBlob{blob(5)}); err != nil {
		t.Fatal(err)
	}
	page, err := s.ListSmallBlobs(ctx, "", future, 200)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range page {
		if b.SHA256 == blob(5).SHA256 && b.Stored.Before(before.Add(-time.Second)) {
			t.Fatalf("stored again at %v, listed as stored %v", before, b.Stored)
		}
	}
}
