package worker

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench/gen"
)

// TestTiles cuts a 1,300 × 700 PNG into a pyramid and checks the archive:
// stored entries, the info entry, every tile a JPEG of the size its name
// says, and the tiles of each scale covering the image exactly once.
func TestTiles(t *testing.T) {
	tools := toolTestTools(t)
	toolTestNeed(t, tools.Vips, "vips")
	img := image.NewRGBA(image.Rect(0, 0, 1300, 700))
	for y := 0; y < 700; y++ {
		for x := 0; x < 1300; x++ {
			img.Set(x, y, color.RGBA{uint8(x / 6), uint8(y / 3), 90, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	path := toolTestFile(t, "page[1].png", buf.Bytes()) // a name vips would read as options
	sizes := []shelfmark.TileSize{{Width: 400, Height: 215, Use: shelfmark.UseThumbnail}}
	p, err := tools.Tiles(context.Background(), path, "image/png", sizes)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.Info.Width != 1300 || p.Info.Height != 700 || len(p.Info.Tiles) != 1 || p.Info.Tiles[0].Width != 512 {
		t.Fatalf("info %+v", p.Info)
	}
	if fmt.Sprint(p.Info.Tiles[0].ScaleFactors) != "[1 2 4]" || len(p.Info.Sizes) != 1 {
		t.Errorf("scale factors %v, sizes %v; want [1 2 4] down to one tile, and the sizes given", p.Info.Tiles[0].ScaleFactors, p.Info.Sizes)
	}
	zr, err := zip.OpenReader(p.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	area := map[int]int{} // scale factor -> full-image pixels its tiles cover
	for _, f := range zr.File {
		if f.Method != zip.Store {
			t.Errorf("%s is compressed; tiles must be stored to be served from their offset", f.Name)
		}
		if f.Name == shelfmark.TileInfoName {
			continue
		}
		var x, y, w, h, sw, sh int
		if _, err := fmt.Sscanf(f.Name, "%d,%d,%d,%d/%d,%d/0/default.jpg", &x, &y, &w, &h, &sw, &sh); err != nil {
			t.Fatalf("entry %q is not a level 0 tile request: %v", f.Name, err)
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := jpeg.DecodeConfig(rc)
		rc.Close()
		if err != nil || cfg.Width != sw || cfg.Height != sh {
			t.Errorf("%s: %v, %d × %d", f.Name, err, cfg.Width, cfg.Height)
		}
		scale := (w + sw - 1) / sw
		area[scale] += w * h
	}
	if len(area) != len(p.Info.Tiles[0].ScaleFactors) {
		t.Errorf("tiles at scales %v, info lists %v", area, p.Info.Tiles[0].ScaleFactors)
	}
	for _, s := range p.Info.Tiles[0].ScaleFactors {
		if area[s] != 1300*700 {
			t.Errorf("tiles at scale %d cover %d pixels, want %d", s, area[s], 1300*700)
		}
	}
}

// TestTilesRefuses: a file that is not an image, and one that claims too
// many pixels, fail permanently (no retries), before vips runs.
func TestTilesRefuses(t *testing.T) {
	tools := toolTestTools(t)
	toolTestNeed(t, tools.Vips, "vips")
	tools.MaxPixels = 1000
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 100, 100))); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"text.png":  []byte("not an image at all"),
		"large.png": buf.Bytes(),
		"cut.png":   buf.Bytes()[:40],
	} {
		_, err := tools.Tiles(context.Background(), toolTestFile(t, name, data), "image/png", nil)
		if !IsPermanent(err) {
			t.Errorf("%s: %v; want a permanent error", name, err)
		}
	}
	tools.Vips = ""
	if _, err := tools.Tiles(context.Background(), toolTestFile(t, "a.png", buf.Bytes()), "image/png", nil); !errors.Is(err, ErrToolMissing) {
		t.Errorf("without vips: %v", err)
	}
}

// TestTilesThumbnail: the thumbnail made from the pyramid's tiles has the
// size Thumbnail gives (its longer side 400, a small image enlarged), the
// picture of the image, and the archive lists it beside the access copy.
func TestTilesThumbnail(t *testing.T) {
	tools := toolTestTools(t)
	toolTestNeed(t, tools.Vips, "vips")
	for _, c := range []struct{ w, h, tw, th int }{{1300, 700, 400, 215}, {2100, 3000, 280, 400}, {200, 100, 400, 200}} {
		img := image.NewRGBA(image.Rect(0, 0, c.w, c.h))
		for y := 0; y < c.h; y++ {
			for x := 0; x < c.w; x++ {
				img.Set(x, y, color.RGBA{uint8(x * 255 / c.w), uint8(y * 255 / c.h), 90, 255})
			}
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		access := shelfmark.TileSize{Width: min(c.w, 1600), Height: c.h * min(c.w, 1600) / c.w, Use: shelfmark.UseAccess}
		p, th, err := tools.TilesThumbnail(context.Background(), toolTestFile(t, "page.png", buf.Bytes()), "image/png", 400, access)
		if err != nil {
			t.Fatal(err)
		}
		p.Close()
		if th.Width != c.tw || th.Height != c.th || th.MediaType != "image/jpeg" {
			t.Errorf("%d × %d: thumbnail %d × %d %s, want %d × %d", c.w, c.h, th.Width, th.Height, th.MediaType, c.tw, c.th)
		}
		dec, err := jpeg.Decode(bytes.NewReader(th.Data))
		if err != nil || dec.Bounds().Dx() != th.Width || dec.Bounds().Dy() != th.Height {
			t.Fatalf("%d × %d: the thumbnail does not decode to its size: %v", c.w, c.h, err)
		}
		for _, pt := range [][2]float64{{0.25, 0.25}, {0.5, 0.5}, {0.9, 0.8}} {
			r, g, b, _ := dec.At(int(pt[0]*float64(th.Width)), int(pt[1]*float64(th.Height))).RGBA()
			wr, wg := pt[0]*255, pt[1]*255
			if d := max(absf(float64(r>>8)-wr), absf(float64(g>>8)-wg), absf(float64(b>>8)-90)); d > 12 {
				t.Errorf("%d × %d: the thumbnail at %v is %d,%d,%d, want about %.0f,%.0f,90", c.w, c.h, pt, r>>8, g>>8, b>>8, wr, wg)
			}
		}
		listed := map[shelfmark.TileSize]bool{}
		for _, sz := range p.Info.Sizes {
			listed[sz] = true
		}
		if len(listed) != 2 || !listed[access] || !listed[shelfmark.TileSize{Width: c.tw, Height: c.th, Use: shelfmark.UseThumbnail}] {
			t.Errorf("%d × %d: sizes %v", c.w, c.h, p.Info.Sizes)
		}
	}
}

func absf(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// TestPDFTiles: each page of a PDF is rendered and cut into a pyramid of
// its own, under its number, with the rendered page beside its tiles.
func TestPDFTiles(t *testing.T) {
	tools := toolTestTools(t)
	toolTestNeed(t, tools.Vips, "vips")
	toolTestNeed(t, tools.Pdftoppm, "pdftoppm")
	doc := gen.PDF(3, 2, strings.Repeat("a page of text to render ", 3300)) // a whole chunk of pages, then a range past its end
	p, err := tools.PDFTiles(context.Background(), toolTestFile(t, "doc.pdf", doc))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if want := bytes.Count(doc, []byte("/Type /Page ")); len(p.Info.Pages) != want || want < pdfChunk || p.Info.Width != p.Info.Pages[0].Width || p.Info.Width == 0 {
		t.Fatalf("%d pages cut of %d (a chunk renders %d)", len(p.Info.Pages), want, pdfChunk)
	}
	zr, err := zip.OpenReader(p.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	entries := map[string]*zip.File{}
	for _, f := range zr.File {
		entries[f.Name] = f
		if f.Method != zip.Store {
			t.Errorf("%s is compressed", f.Name)
		}
	}
	for i, pg := range p.Info.Pages {
		prefix := fmt.Sprint(i+1) + "/"
		if max(pg.Width, pg.Height) != PDFPageSize || len(pg.Sizes) != 1 || pg.Sizes[0].Use != shelfmark.UsePage {
			t.Errorf("page %d: %+v", i+1, pg)
		}
		f := entries[prefix+shelfmark.TilePageName]
		if f == nil {
			t.Fatalf("page %d: no %s", i+1, shelfmark.TilePageName)
		}
		rc, _ := f.Open()
		cfg, err := jpeg.DecodeConfig(rc)
		rc.Close()
		if err != nil || cfg.Width != pg.Width || cfg.Height != pg.Height {
			t.Errorf("page %d: rendered %d × %d, %v; info says %d × %d", i+1, cfg.Width, cfg.Height, err, pg.Width, pg.Height)
		}
		if entries[prefix+"0,0,512,512/512,512/0/default.jpg"] == nil {
			t.Errorf("page %d: no first tile", i+1)
		}
	}
	// not a PDF: refused for good
	if _, err := tools.PDFTiles(context.Background(), toolTestFile(t, "no.pdf", []byte("%PDF-1.4 broken"))); !IsPermanent(err) {
		t.Errorf("a broken PDF: %v", err)
	}
}
