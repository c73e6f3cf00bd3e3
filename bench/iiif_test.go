package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
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

// TestIIIFCopyBookOCR: a copy of a book as OCR leaves it holds, on every
// page, the page's original with its characterization, its derivatives
// and the OCR files of the first page OCR read, all of the same blobs;
// a plain copy holds only the derivatives.
func TestIIIFCopyBookOCR(t *testing.T) {
	ctx := context.Background()
	repo, blobs := labRepo(t)
	put := func(s string) (string, int64) {
		b, err := blobs.Put(ctx, strings.NewReader(s), shelfmark.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return b.Digests[shelfmark.SHA256], b.Size
	}
	file := func(name, mt, use, body string) *shelfmark.File {
		sha, size := put(body)
		return &shelfmark.File{Name: name, MediaType: mt, Use: use, SHA256: sha, Size: size}
	}
	work, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
	if err != nil {
		t.Fatal(err)
	}
	const n = 3
	var order []shelfmark.ID
	for i := range n {
		fs, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work.ID})
		if err != nil {
			t.Fatal(err)
		}
		order = append(order, fs.ID)
		orig := file("p.tif", "image/tiff", shelfmark.UseOriginal, fmt.Sprint("page ", i))
		orig.Format = &shelfmark.Format{PRONOM: "fmt/353", MediaType: "image/tiff", Width: 2000, Height: 3000}
		files := []*shelfmark.File{orig, file("p.zip", "application/zip", shelfmark.UseTiles, "tiles"),
			file("t.jpg", "image/jpeg", shelfmark.UseThumbnail, "thumb"), file("a.jpg", "image/jpeg", shelfmark.UseAccess, "access")}
		if i == 1 {
			files = append(files, file("p.hocr", "application/xhtml+xml", shelfmark.UseOCR, "<html/>"), file("p.xml", "application/xml", shelfmark.UseALTO, "<alto/>"))
		}
		for _, f := range files {
			if _, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID, File: f}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := repo.SetOrder(ctx, work.ID, order, 0); err != nil {
		t.Fatal(err)
	}
	pages, err := iiifPages(ctx, repo, work.ID, n)
	if err != nil {
		t.Fatal(err)
	}
	ocr := iiifOCRFiles(pages)
	if len(ocr) != 2 || iiifOCRFiles(pages[:1]) != nil {
		t.Fatalf("OCR files %v", ocr)
	}
	for _, c := range []struct {
		whole bool
		ocr   []*shelfmark.File
		uses  string
	}{{false, nil, "access thumbnail tiles"}, {true, ocr, "access alto ocr original thumbnail tiles"}} {
		book, ids, err := iiifCopyBook(ctx, repo, pages, 7, c.whole, c.ocr)
		if err != nil {
			t.Fatal(err)
		}
		copied, err := iiifPages(ctx, repo, book, n)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range copied {
			if p.id != ids[i] {
				t.Errorf("page %d is %s, want %s", i, p.id, ids[i])
			}
			sources := slices.Clone(c.ocr) // the OCR files given, before the page's own
			for _, r := range pages[i].files {
				sources = append(sources, r.File)
			}
			var uses []string
			for _, f := range p.files {
				uses = append(uses, f.File.Use)
				var src *shelfmark.File
				for _, g := range sources {
					if g.Use == f.File.Use {
						src = g
						break
					}
				}
				if src == nil || f.File.SHA256 != src.SHA256 || f.File.Name != src.Name || (src.Format != nil) != (f.File.Format != nil) ||
					(src.Format != nil && f.File.Format.Width != src.Format.Width) {
					t.Errorf("whole %v, page %d: %+v, copied from %+v", c.whole, i, f.File, src)
				}
			}
			slices.Sort(uses)
			if strings.Join(uses, " ") != c.uses {
				t.Errorf("whole %v, page %d: uses %v, want %s", c.whole, i, uses, c.uses)
			}
		}
	}
}
