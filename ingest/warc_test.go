package ingest

import (
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestMergeWaiting: batches waiting in the channel join the first, up to
// the limit, running from the first's From to the last's Next, with the
// records in file order and the first batch's slice left as it was.
func TestMergeWaiting(t *testing.T) {
	mk := func(from, next int64, n int, done bool) batchOut {
		b := &shelfmark.WebBatch{From: from, Next: next, Errors: 1, Done: done}
		for i := range n {
			b.Records = append(b.Records, &shelfmark.WebRecord{Offset: from + int64(i)})
		}
		return batchOut{b: b, links: int64(n)}
	}
	ch := make(chan batchOut, 8)
	ch <- mk(10, 20, 2, false)
	ch <- mk(20, 30, 3, false)
	ch <- mk(30, 40, 1, true)
	first := mk(0, 10, 2, false)
	got := mergeWaiting(first, ch, 3)
	if got.b.From != 0 || got.b.Next != 30 || got.b.Done || got.b.Errors != 3 || got.links != 7 || len(got.b.Records) != 7 {
		t.Fatalf("merged %+v links %d, want 0..30, 7 records, 3 errors", got.b, got.links)
	}
	for i, r := range got.b.Records {
		if i > 0 && r.Offset <= got.b.Records[i-1].Offset {
			t.Fatalf("records out of file order at %d", i)
		}
	}
	if len(first.b.Records) != 2 {
		t.Fatalf("the first batch changed: %d records", len(first.b.Records))
	}
	last := mergeWaiting(<-ch, ch, 3)
	if last.b.From != 30 || last.b.Next != 40 || !last.b.Done {
		t.Fatalf("last %+v", last.b)
	}
	// nothing waiting: the batch alone
	if one := mergeWaiting(mk(0, 5, 1, false), ch, 8); one.b.Next != 5 {
		t.Fatalf("alone: %+v", one.b)
	}
}
