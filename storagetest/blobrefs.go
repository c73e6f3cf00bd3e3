package storagetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// testBlobReferences checks shelfmark.BlobReferences: a blob is referenced
// while a file of a live or deleted resource names it, never by an
// external file, and one statement answers a whole batch.
func testBlobReferences(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	refs, ok := e.store.(shelfmark.BlobReferences)
	if !ok {
		t.Fatalf("%T does not implement shelfmark.BlobReferences", e.store)
	}
	ctx := context.Background()
	sha := func(i int) string { return fmt.Sprintf("%064x", i) }
	w := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	fs := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}))
	file := func(i int) {
		rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
			File: &shelfmark.File{Name: "f", MediaType: "image/tiff", Size: 10, SHA256: sha(i), Use: "original"}}))
	}
	file(1)
	file(2)
	file(2) // the same bytes twice
	rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
		File: &shelfmark.File{Name: "x", MediaType: "image/jp2", Size: -1, Use: "original", ExternalURL: "https://images.example.org/x.jp2"}}))
	// A deleted work keeps its files' bytes referenced: its tombstone
	// still describes them.
	w2 := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	fs2 := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w2.ID}))
	rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs2.ID,
		File: &shelfmark.File{Name: "g", MediaType: "image/tiff", Size: 10, SHA256: sha(3), Use: "original"}}))
	if err := e.repo.DeleteResource(ctx, w2.ID, 0); err != nil {
		t.Fatal(err)
	}

	var batch []string
	for i := range 1000 {
		batch = append(batch, sha(i))
	}
	var got map[string]bool
	calls := e.rec.capture(func() {
		var err error
		if got, err = refs.ReferencedBlobs(ctx, batch); err != nil {
			t.Fatal(err)
		}
	})
	if len(got) != 3 || !got[sha(1)] || !got[sha(2)] || !got[sha(3)] {
		t.Errorf("referenced among %d: %v, want %s, %s and %s", len(batch), got, sha(1), sha(2), sha(3))
	}
	if len(calls) != 1 {
		t.Errorf("%d statements for a batch of %d, want 1: %v", len(calls), len(batch), calls)
	}
	if got, err := refs.ReferencedBlobs(ctx, nil); err != nil || len(got) != 0 {
		t.Errorf("no digests: %v, %v", got, err)
	}
	if got, err := refs.ReferencedBlobs(ctx, []string{"", "https://images.example.org/x.jp2"}); err != nil || len(got) != 0 {
		t.Errorf("an empty digest or a URL: %v, %v", got, err)
	}
}
