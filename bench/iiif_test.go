package bench

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestIIIFRegionReqs: the regions phase asks for regions inside their
// pages, off the tile grid, at sizes no larger than the region (so none
// is refused and none is a stored tile), the same ones for the same seed.
func TestIIIFRegionReqs(t *testing.T) {
	// a 2,000 × 1,100 page's tiles at scales 1 and 4
	var a iiifArchive
	for _, n := range []string{"0,0,512,512/512,512/0/default.jpg", "1536,1024,464,76/464,76/0/default.jpg", "0,0,2000,1100/500,275/0/default.jpg"} {
		a.entries = append(a.entries, iiifEntry{name: n})
	}
	if w, h := a.size(); w != 2000 || h != 1100 {
		t.Fatalf("size %d × %d", w, h)
	}
	books := [][]shelfmark.ID{{"p1", "p2"}, {"q1", "q2"}}
	archives := []iiifArchive{a, a}
	reqs := iiifRegionReqs(rand.New(rand.NewPCG(1, 2)), books, archives, 2000)
	again := iiifRegionReqs(rand.New(rand.NewPCG(1, 2)), books, archives, 2000)
	for i, q := range reqs {
		var id string
		var x, y, w, h, ow int
		if _, err := fmt.Sscanf(q.path, "/iiif/%2s/image/%d,%d,%d,%d/%d,/0/default.jpg", &id, &x, &y, &w, &h, &ow); err != nil {
			t.Fatalf("%s: %v", q.path, err)
		}
		switch {
		case q != again[i]:
			t.Fatalf("request %d: %s, then %s", i, q.path, again[i].path)
		case x < 1 || y < 1 || w < 64 || h < 64 || x+w > 2000 || y+h > 1100 || h > 2*w:
			t.Fatalf("%s: a region outside the page", q.path)
		case x%512 == 0:
			t.Fatalf("%s: a region on the tile grid", q.path)
		case ow < 1 || ow > w || ow > 800 || h*ow/w > 1600:
			t.Fatalf("%s: a size larger than the region or the limits", q.path)
		case q.size != -1 || id != string(books[0][q.page]) && id != string(books[1][q.page]):
			t.Fatalf("%s: page %d, size %d", q.path, q.page, q.size)
		}
	}
}
