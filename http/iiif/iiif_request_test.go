package iiif

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/internal/testkit"
	"golang.org/x/image/draw"
)

// fuzzPyramid is a 2,000 × 1,100 page with 512-pixel tiles at scales 1, 2
// and 4, a 400 × 220 thumbnail and a 1,600 × 880 access copy.
var fuzzPyramid = shelfmark.TileInfo{Width: 2000, Height: 1100,
	Tiles: []shelfmark.TileSet{{Width: 512, ScaleFactors: []int{1, 2, 4}}},
	Sizes: []shelfmark.TileSize{{Width: 400, Height: 220, Use: shelfmark.UseThumbnail}, {Width: 1600, Height: 880, Use: shelfmark.UseAccess}}}

// testLimits are the server's limits the tests parse against.
var testLimits = imageLimits{maxWidth: imageMaxSide, maxHeight: imageMaxSide, maxArea: imageMaxArea}

// TestLimitsOf: a page served at most at its access copy's size states
// that size; the server's limits otherwise, widened to its sizes and
// tiles.
func TestLimitsOf(t *testing.T) {
	if got := limitsOf(&fuzzPyramid, testLimits); got != (imageLimits{1600, 880, imageMaxArea}) {
		t.Errorf("limits of a page with an access copy: %+v", got)
	}
	small := shelfmark.TileInfo{Width: 900, Height: 700, Tiles: []shelfmark.TileSet{{Width: 512, ScaleFactors: []int{1, 2}}},
		Sizes: []shelfmark.TileSize{{Width: 400, Height: 311}, {Width: 900, Height: 700}}}
	if got := limitsOf(&small, testLimits); got != testLimits {
		t.Errorf("limits of a page smaller than its access copy: %+v", got)
	}
	if got := limitsOf(&fuzzPyramid, imageLimits{100, 100, 10_000}); got != (imageLimits{1600, 880, 1600 * 880}) {
		t.Errorf("limits narrower than the sizes listed: %+v", got)
	}
}

// TestParseImage: each form of each parameter, and the canonical form of
// the request.
func TestParseImage(t *testing.T) {
	lim := limitsOf(&fuzzPyramid, testLimits)
	for _, c := range []struct{ region, size, rotation, file, canonical string }{
		{"full", "max", "0", "default.jpg", "full/max/0/default.jpg"},
		{"full", "1600,880", "0", "default.jpg", "full/max/0/default.jpg"},
		{"full", "^max", "0", "default.jpg", "full/max/0/default.jpg"}, // the region is beyond the limits: no upscaling
		{"full", "400,", "0", "default.jpg", "full/400,220/0/default.jpg"},
		{"full", ",220", "0", "default.jpg", "full/400,220/0/default.jpg"},
		{"full", "!400,400", "0", "default.jpg", "full/400,220/0/default.jpg"},
		{"full", "^!400,400", "0", "default.jpg", "full/400,220/0/default.jpg"},
		{"full", "pct:10", "0", "default.jpg", "full/200,110/0/default.jpg"},
		{"full", "pct:12.5", "0", "default.jpg", "full/250,138/0/default.jpg"},
		{"full", "123,45", "0", "default.jpg", "full/123,45/0/default.jpg"},
		{"full", "^400,", "0", "default.jpg", "full/400,220/0/default.jpg"},
		{"full", "!2000,2000", "0", "default.jpg", "full/max/0/default.jpg"}, // within the region, beyond the limits
		{"0,0,2000,1100", "max", "0", "default.jpg", "full/max/0/default.jpg"},
		{"square", "max", "0", "default.jpg", "450,0,1100,1100/max/0/default.jpg"},
		{"square", "500,", "0", "default.jpg", "450,0,1100,1100/500,500/0/default.jpg"},
		{"pct:50,50,50,50", "max", "0", "default.jpg", "1000,550,1000,550/max/0/default.jpg"},
		{"pct:0,0,100,100", "max", "0", "default.jpg", "full/max/0/default.jpg"},
		{"pct:41.6,7.5,40,70", "max", "0", "default.jpg", "832,83,800,770/max/0/default.jpg"},
		{"0,0,512,512", "512,512", "0", "default.jpg", "0,0,512,512/max/0/default.jpg"},
		{"0,0,512,512", "256,", "90", "gray.png", "0,0,512,512/256,256/90/gray.png"},
		{"1536,1024,512,512", "max", "0", "default.jpg", "1536,1024,464,76/max/0/default.jpg"}, // clipped at the edge
		{"1536,1024,512,512", "464,", "0", "default.jpg", "1536,1024,464,76/max/0/default.jpg"},
		{"full", "pct:10", "!90", "bitonal.jpg", "full/200,110/!90/bitonal.jpg"},
		{"full", "pct:10", "90.0", "color.png", "full/200,110/90/color.png"},
		{"full", "pct:10", "!0", "default.jpg", "full/200,110/!0/default.jpg"},
		{"full", "pct:10", "360", "default.jpg", "full/200,110/360/default.jpg"},
		{"0,0,2000,100", "max", "270", "default.jpg", "0,0,2000,100/max/270/default.jpg"},
	} {
		q, err := parseImage(&fuzzPyramid, lim, c.region, c.size, c.rotation, c.file)
		if err != nil {
			t.Errorf("%s/%s/%s/%s: %v", c.region, c.size, c.rotation, c.file, err)
			continue
		}
		if got := q.canonical(&fuzzPyramid); got != c.canonical {
			t.Errorf("%s/%s/%s/%s: canonical %s, want %s", c.region, c.size, c.rotation, c.file, got, c.canonical)
		}
	}
}

// TestParseImageErrors: malformed requests, regions outside the image,
// sizes larger than the region or the limits and arbitrary rotations are
// 400; a size after ^ that needs upscaling is 501.
func TestParseImageErrors(t *testing.T) {
	lim := limitsOf(&fuzzPyramid, testLimits)
	for _, c := range []struct {
		path, code, want string
	}{
		{"2000,0,10,10/10,10/0/default.jpg", shelfmark.EINVALID, "outside the image"},
		{"0,5000,10,10/10,10/0/default.jpg", shelfmark.EINVALID, "outside the image"},
		{"pct:100,0,10,10/max/0/default.jpg", shelfmark.EINVALID, "outside the image"},
		{"0,0,0,10/max/0/default.jpg", shelfmark.EINVALID, "no width or height"},
		{"pct:0,0,0,10/max/0/default.jpg", shelfmark.EINVALID, "no width or height"},
		{"pct:-1,0,10,10/max/0/default.jpg", shelfmark.EINVALID, "is not full"},
		{"pct:1e1,0,10,10/max/0/default.jpg", shelfmark.EINVALID, "is not full"},
		{"pct:.5,0,10,10/max/0/default.jpg", shelfmark.EINVALID, "is not full"},
		{"a,b,c,d/max/0/default.jpg", shelfmark.EINVALID, "is not full"},
		{"0,0,512/max/0/default.jpg", shelfmark.EINVALID, "is not full"},
		{"squares/max/0/default.jpg", shelfmark.EINVALID, "is not full"},
		{"0,0,512,512/0,0/0/default.jpg", shelfmark.EINVALID, "without width or height"},
		{"0,0,512,512/0,/0/default.jpg", shelfmark.EINVALID, "without width or height"},
		{"full/pct:0/0/default.jpg", shelfmark.EINVALID, "without width or height"},
		{"full/pct:0.01/0/default.jpg", shelfmark.EINVALID, "without width or height"},
		{"0,0,512,512/513,/0/default.jpg", shelfmark.EINVALID, "larger than the region"},
		{"0,0,512,512/,513/0/default.jpg", shelfmark.EINVALID, "larger than the region"},
		{"0,0,512,512/pct:101/0/default.jpg", shelfmark.EINVALID, "larger than the region"},
		{"0,0,512,512/!600,700/0/default.jpg", shelfmark.EINVALID, "larger than the region"},
		{"full/99999999,/0/default.jpg", shelfmark.EINVALID, "larger than the region"},
		{"full/1900,/0/default.jpg", shelfmark.EINVALID, "larger than this service serves"},
		{"full/2000,1100/0/default.jpg", shelfmark.EINVALID, "larger than this service serves"},
		{"full/999999999,/0/default.jpg", shelfmark.EINVALID, "is not max"},
		{"full/full/0/default.jpg", shelfmark.EINVALID, "is not max"},
		{"full/!,5/0/default.jpg", shelfmark.EINVALID, "is not max"},
		{"full/pct:/0/default.jpg", shelfmark.EINVALID, "is not max"},
		{"0,0,512,512/^513,/0/default.jpg", kit.ENOTIMPLEMENTED, "upscaling"},
		{"0,0,512,512/^pct:120/0/default.jpg", kit.ENOTIMPLEMENTED, "upscaling"},
		{"0,0,512,512/^max/0/default.jpg", kit.ENOTIMPLEMENTED, "upscaling"},
		{"0,0,512,512/^!600,700/0/default.jpg", kit.ENOTIMPLEMENTED, "upscaling"},
		{"full/max/45/default.jpg", shelfmark.EINVALID, "0, 90, 180 or 270"},
		{"full/max/90.5/default.jpg", shelfmark.EINVALID, "0, 90, 180 or 270"},
		{"full/max/361/default.jpg", shelfmark.EINVALID, "from 0 to 360"},
		{"full/max/-90/default.jpg", shelfmark.EINVALID, "from 0 to 360"},
		{"full/max/abc/default.jpg", shelfmark.EINVALID, "from 0 to 360"},
		{"full/max/NaN/default.jpg", shelfmark.EINVALID, "from 0 to 360"},
		{"full/max/!!0/default.jpg", shelfmark.EINVALID, "from 0 to 360"},
		{"full/max/0/sepia.jpg", shelfmark.EINVALID, "is not one of"},
		{"full/max/0/grey.jpg", shelfmark.EINVALID, "is not one of"},
		{"full/max/0/default.webp", shelfmark.EINVALID, "jpg and png"},
		{"full/max/0/default.tif", shelfmark.EINVALID, "jpg and png"},
		{"full/max/0/default.exe", shelfmark.EINVALID, "not an Image API format"},
		{"full/max/0/default", shelfmark.EINVALID, "{quality}.{format}"},
	} {
		p := strings.SplitN(c.path, "/", 4)
		_, err := parseImage(&fuzzPyramid, lim, p[0], p[1], p[2], p[3])
		if shelfmark.ErrorCode(err) != c.code || !strings.Contains(shelfmark.ErrorMessage(err), c.want) {
			t.Errorf("%s: %v, want %s with %q", c.path, err, c.code, c.want)
		}
	}
}

// FuzzParseImage: any request is refused with a 400 or 501 that says why,
// or resolves to a region within the image and a size of at least a pixel,
// no larger than the region and within the limits; and its canonical form
// resolves to itself.
func FuzzParseImage(f *testing.F) {
	for _, s := range [][4]string{
		{"full", "max", "0", "default.jpg"}, {"0,0,512,512", "512,", "0", "default.jpg"}, {"pct:1,2,3,4", "^!5,5", "!90", "gray.png"},
		{"99999999,0,1,1", ",0", "360", "default.jpg"}, {"0,0,1,1", "!,", "1e3", "default."}, {"square", "pct:50", "-0", "color.webp"},
		{"pct:0.5,99.9,0.1,0.1", "^max", "!270", "bitonal.png"}, {"1999,1099,5,5", "^pct:100", "180.000", "default.jpg"},
		{"full", "!1600,1", "90", "color.jpg"}, {"pct:33.3,33.3,33.3,33.3", "^1,", "!360", "gray.jpg"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	lim := limitsOf(&fuzzPyramid, testLimits)
	f.Fuzz(func(t *testing.T, region, size, rotation, file string) {
		q, err := parseImage(&fuzzPyramid, lim, region, size, rotation, file)
		if err != nil {
			if code := shelfmark.ErrorCode(err); (code != shelfmark.EINVALID && code != kit.ENOTIMPLEMENTED) || shelfmark.ErrorMessage(err) == "" {
				t.Fatalf("%s/%s/%s/%s: %v is not a 400 or 501 with a message", region, size, rotation, file, err)
			}
			return
		}
		r, w, h := q.region, q.sizes[0][0], q.sizes[0][1]
		switch {
		case r.x < 0 || r.y < 0 || r.w < 1 || r.h < 1 || r.x+r.w > fuzzPyramid.Width || r.y+r.h > fuzzPyramid.Height:
			t.Fatalf("%s/%s/%s/%s: region %+v", region, size, rotation, file, r)
		case w < 1 || h < 1 || w > r.w || h > r.h || !lim.fits(w, h):
			t.Fatalf("%s/%s/%s/%s: size %d × %d of region %+v", region, size, rotation, file, w, h, r)
		case q.degrees%90 != 0:
			t.Fatalf("%s/%s/%s/%s: rotation %d", region, size, rotation, file, q.degrees)
		}
		canon := q.canonical(&fuzzPyramid)
		p := strings.SplitN(canon, "/", 4)
		again, err := parseImage(&fuzzPyramid, lim, p[0], p[1], p[2], p[3])
		if err != nil || again.canonical(&fuzzPyramid) != canon || again.sizes[0] != q.sizes[0] {
			t.Fatalf("%s/%s/%s/%s: canonical %s parses to %v, %v", region, size, rotation, file, canon, again, err)
		}
	})
}

// TestInfoSizes: sizes are listed unless OpenSeadragon would take them
// for the pyramid's levels (as many as the levels above full size, or
// one more).
func TestInfoSizes(t *testing.T) {
	two := []shelfmark.TileSize{{Width: 400, Height: 220}, {Width: 1600, Height: 880}}
	for _, c := range []struct {
		scales []int
		sizes  []shelfmark.TileSize
		want   int
	}{
		{[]int{1, 2, 4}, two, 0},    // levels 2: 2 sizes would be read as levels
		{[]int{1, 2}, two, 0},       // levels 1: 2 = levels + 1
		{[]int{1, 2, 4, 8}, two, 2}, // levels 3
		{[]int{1, 2, 4, 8, 16}, two, 2},
		{[]int{1}, two[:1], 0},       // levels 0: 1 = levels + 1
		{[]int{1, 2, 4}, two[:1], 1}, // levels 2, one size
	} {
		info := shelfmark.TileInfo{Width: 2000, Height: 1100, Tiles: []shelfmark.TileSet{{Width: 512, ScaleFactors: c.scales}}, Sizes: c.sizes}
		if got := infoSizes(&info); len(got) != c.want {
			t.Errorf("scale factors %v, %d sizes: %d listed, want %d", c.scales, len(c.sizes), len(got), c.want)
		}
	}
}

// memPyramid cuts m into a pyramid as dzsave does (512-pixel JPEG tiles
// at scales 1, 2, 4…, down to one tile), in an archive in memory.
func memPyramid(t testing.TB, m image.Image) (*shelfmark.TileInfo, pyramidArchive) {
	t.Helper()
	W, H := m.Bounds().Dx(), m.Bounds().Dy()
	info := &shelfmark.TileInfo{Width: W, Height: H, Tiles: []shelfmark.TileSet{{Width: 512}}}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for s := 1; ; s *= 2 {
		info.Tiles[0].ScaleFactors = append(info.Tiles[0].ScaleFactors, s)
		lw, lh := (W+s-1)/s, (H+s-1)/s
		var level interface {
			draw.Image
			SubImage(image.Rectangle) image.Image
		} = image.NewRGBA(image.Rect(0, 0, lw, lh))
		if _, gray := m.(*image.Gray); gray {
			level = image.NewGray(image.Rect(0, 0, lw, lh))
		}
		draw.BiLinear.Scale(level, level.Bounds(), m, m.Bounds(), draw.Src, nil)
		for row := 0; row*512 < lh; row++ {
			for col := 0; col*512 < lw; col++ {
				r := image.Rect(col*512, row*512, min(col*512+512, lw), min(row*512+512, lh))
				w, err := zw.CreateHeader(&zip.FileHeader{Name: tileName(info, 512, 512, s, col, row), Method: zip.Store})
				if err != nil {
					t.Fatal(err)
				}
				if err := jpeg.Encode(w, level.SubImage(r), &jpeg.Options{Quality: 95}); err != nil {
					t.Fatal(err)
				}
			}
		}
		if lw <= 512 && lh <= 512 {
			break
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	idx := &tileIndex{sha: strings.Repeat("0", 64), info: *info, entries: map[string]tileEntry{}}
	for _, f := range zr.File {
		off, _ := f.DataOffset()
		idx.entries[f.Name] = tileEntry{offset: off, size: int64(f.UncompressedSize64)}
	}
	return info, pyramidArchive{idx: idx, ra: bytes.NewReader(buf.Bytes())}
}

// near reports whether c is within 40 of want in each channel.
func near(c color.Color, want color.RGBA) bool {
	r, g, b, _ := c.RGBA()
	d := func(a uint32, b uint8) bool { return int(a>>8)-int(b) < 40 && int(b)-int(a>>8) < 40 }
	return d(r, want.R) && d(g, want.G) && d(b, want.B)
}

// TestCompose composes images from a pyramid of a 1,300 × 700 image of
// four coloured quarters, and checks their size and pixels: a region
// picks its quarter, at every level; rotation and mirroring move the
// corners; gray is gray and bitonal black and white.
func TestCompose(t *testing.T) {
	info, a := memPyramid(t, testkit.Quadrants(1300, 700))
	red, green, blue, white := color.RGBA{255, 0, 0, 255}, color.RGBA{0, 255, 0, 255}, color.RGBA{0, 0, 255, 255}, color.RGBA{255, 255, 255, 255}
	black := color.RGBA{0, 0, 0, 255}
	lim := limitsOf(info, testLimits)
	type px struct {
		x, y int
		c    color.RGBA
	}
	for _, c := range []struct {
		path string
		w, h int
		px   []px
	}{
		{"0,0,650,350/max/0/default.png", 650, 350, []px{{5, 5, red}, {644, 344, red}}},
		{"650,0,650,350/max/0/default.png", 650, 350, []px{{5, 5, green}, {644, 344, green}}},
		{"600,300,100,100/max/0/default.png", 100, 100, []px{{10, 10, red}, {90, 10, green}, {10, 90, blue}, {90, 90, white}}},
		{"600,300,100,100/50,/0/default.png", 50, 50, []px{{5, 5, red}, {45, 5, green}, {5, 45, blue}, {45, 45, white}}},
		{"pct:0,50,50,50/100,/0/default.jpg", 100, 54, []px{{50, 27, blue}}},
		{"full/325,/0/default.png", 325, 175, []px{{10, 10, red}, {315, 10, green}, {10, 165, blue}, {315, 165, white}}},
		{"full/650,/90/default.png", 350, 650, []px{{340, 10, red}, {10, 10, blue}, {340, 640, green}, {10, 640, white}}},
		{"full/650,/180/default.png", 650, 350, []px{{10, 10, white}, {640, 340, red}}},
		{"full/650,/270/default.png", 350, 650, []px{{10, 10, green}, {340, 640, blue}}},
		{"full/650,/!0/default.png", 650, 350, []px{{10, 10, green}, {640, 10, red}}},
		{"full/650,/!90/default.png", 350, 650, []px{{340, 10, green}, {10, 10, white}}},
		{"full/650,/0/color.jpg", 650, 350, []px{{10, 10, red}}},
		{"square/300,300/0/default.png", 300, 300, []px{{10, 10, red}, {290, 10, green}}},
		{"full/200,200/0/default.png", 200, 200, []px{{10, 10, red}, {190, 190, white}}}, // distorted
		{"full/650,/0/bitonal.png", 650, 350, []px{{10, 10, black}, {640, 10, white}, {10, 340, black}, {640, 340, white}}},
	} {
		p := strings.SplitN(c.path, "/", 4)
		q, err := parseImage(info, lim, p[0], p[1], p[2], p[3])
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		body, ct, err := compose(info, a, q)
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		m, format, err := image.Decode(bytes.NewReader(body))
		if err != nil || "image/"+format != ct || m.Bounds().Dx() != c.w || m.Bounds().Dy() != c.h {
			t.Errorf("%s: %s %v, %v; want %d × %d", c.path, ct, m.Bounds(), err, c.w, c.h)
			continue
		}
		for _, want := range c.px {
			if got := m.At(want.x, want.y); !near(got, want.c) {
				t.Errorf("%s: pixel %d,%d is %v, want %v", c.path, want.x, want.y, got, want.c)
			}
		}
		if q.quality == "bitonal" {
			g, ok := m.(*image.Paletted)
			if !ok {
				t.Errorf("%s: a %T", c.path, m)
				continue
			}
			for _, v := range g.Pix {
				if v > 1 {
					t.Fatalf("%s: colour index %d", c.path, v)
				}
			}
		}
	}

	// gray is gray: a JPEG of one channel, a PNG whose pixels are all grey
	for _, format := range []string{"jpg", "png"} {
		q, err := parseImage(info, lim, "full", "650,", "0", "gray."+format)
		if err != nil {
			t.Fatal(err)
		}
		body, _, err := compose(info, a, q)
		if err != nil {
			t.Fatal(err)
		}
		m, _, err := image.Decode(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.(*image.Gray); !ok {
			t.Errorf("gray.%s decodes to %T", format, m)
		}
	}
	// bitonal JPEG: one channel, nearly all black or white
	q, _ := parseImage(info, lim, "full", "650,", "0", "bitonal.jpg")
	body, _, err := compose(info, a, q)
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := image.Decode(bytes.NewReader(body))
	g, ok := m.(*image.Gray)
	if err != nil || !ok {
		t.Fatalf("bitonal.jpg: %T, %v", m, err)
	}
	off := 0
	for _, v := range g.Pix {
		if v > 24 && v < 232 {
			off++
		}
	}
	if off > len(g.Pix)/100 {
		t.Errorf("bitonal.jpg: %d of %d pixels neither black nor white", off, len(g.Pix))
	}
}

// TestLevelFor: the level chosen is the smallest at or above the output's
// resolution.
func TestLevelFor(t *testing.T) {
	info := &shelfmark.TileInfo{Width: 4000, Height: 3000, Tiles: []shelfmark.TileSet{{Width: 512, ScaleFactors: []int{1, 2, 4, 8}}}}
	for _, c := range []struct {
		r    imageRect
		w, h int
		want int
	}{
		{imageRect{0, 0, 4000, 3000}, 500, 375, 8},
		{imageRect{0, 0, 4000, 3000}, 501, 376, 4},
		{imageRect{0, 0, 4000, 3000}, 1000, 750, 4},
		{imageRect{0, 0, 4000, 3000}, 4000, 3000, 1},
		{imageRect{0, 0, 512, 512}, 256, 256, 2},
		{imageRect{0, 0, 512, 512}, 300, 100, 1},
	} {
		if got := levelFor(info, c.r, c.w, c.h); got != c.want {
			t.Errorf("%+v at %d × %d: scale %d, want %d", c.r, c.w, c.h, got, c.want)
		}
	}
}

// TestImageCache: the cache keeps images up to its size, least recently
// used out first, and does not keep one larger than an eighth of it.
func TestImageCache(t *testing.T) {
	c := newImageCache(8000)
	for i := 0; i < 10; i++ {
		c.put(fmt.Sprint(i), make([]byte, 900))
	}
	has := func(k string) bool { _, ok := c.get(k); return ok }
	if c.bytes() > 8000 || has("0") || !has("9") {
		t.Errorf("%d bytes kept; 0 %v, 9 %v", c.bytes(), has("0"), has("9"))
	}
	has("2") // now the most recent of the oldest
	c.put("10", make([]byte, 900))
	if !has("2") || has("3") {
		t.Errorf("least recently used is not the one dropped")
	}
	c.put("big", make([]byte, 1000))
	if has("big") {
		t.Errorf("an image above an eighth of the cache was kept")
	}
	none := newImageCache(0)
	if none.put("x", []byte{1}); none.bytes() != 0 {
		t.Errorf("a cache of 0 bytes kept an image")
	}
	tiles := newTileCache(8 << 20)
	tiles.put("t", image.NewYCbCr(image.Rect(0, 0, 512, 512), image.YCbCrSubsampleRatio420))
	if tiles.bytes() != 512*512*3/2+1 {
		t.Errorf("a decoded tile counted as %d bytes", tiles.bytes())
	}
}

// TestComposerOnce: requests for the same image at the same time compose
// it once, and keep it; a failed composition is tried again by a waiter,
// once.
func TestComposerOnce(t *testing.T) {
	c := newComposer(1 << 20)
	var mu sync.Mutex
	builds := 0
	release := make(chan struct{})
	build := func() ([]byte, error) {
		mu.Lock()
		builds++
		mu.Unlock()
		<-release
		return []byte("image"), nil
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if b, err := c.image(context.Background(), "k", build); err != nil || string(b) != "image" {
				t.Errorf("%q, %v", b, err)
			}
		}()
	}
	for {
		c.flightMu.Lock()
		n := len(c.flights)
		c.flightMu.Unlock()
		if n == 1 {
			break
		}
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if builds != 1 || c.count != 1 {
		t.Errorf("%d builds, %d composed", builds, c.count)
	}
	if _, err := c.image(context.Background(), "k", build); err != nil || builds != 1 {
		t.Errorf("kept image composed again: %d builds, %v", builds, err)
	}
	// a failed one is not kept
	fail := func() ([]byte, error) { return nil, errors.New("broken tile") }
	if _, err := c.image(context.Background(), "bad", fail); err == nil {
		t.Error("a failed composition succeeded")
	}
	if _, ok := c.cache.get("bad"); ok {
		t.Error("a failed composition was kept")
	}
}

// TestComposeGray: a pyramid of grayscale tiles composes to a grayscale
// image in the default quality, and to colour only when asked.
func TestComposeGray(t *testing.T) {
	g := image.NewGray(image.Rect(0, 0, 700, 600))
	for i := range g.Pix {
		g.Pix[i] = uint8(i % 251)
	}
	info, a := memPyramid(t, g)
	lim := limitsOf(info, testLimits)
	for file, gray := range map[string]bool{"default.jpg": true, "default.png": true, "color.jpg": false, "bitonal.png": false} {
		q, err := parseImage(info, lim, "100,100,500,400", "250,", "90", file)
		if err != nil {
			t.Fatal(err)
		}
		body, _, err := compose(info, a, q)
		if err != nil {
			t.Fatal(err)
		}
		m, _, err := image.Decode(bytes.NewReader(body))
		if err != nil || m.Bounds().Dx() != 200 || m.Bounds().Dy() != 250 {
			t.Fatalf("%s: %v, %v", file, m.Bounds(), err)
		}
		if _, isGray := m.(*image.Gray); isGray != gray {
			t.Errorf("%s: a %T", file, m)
		}
	}
}

// FuzzCompose: any request the parser accepts on a small odd-sized
// pyramid composes to a decodable image of exactly the size it resolved
// to (turned by 90 or 270 degrees, its sides swapped), in the format and
// channels it asked for.
func FuzzCompose(f *testing.F) {
	for _, s := range [][4]string{
		{"full", "max", "0", "default.jpg"}, {"square", "pct:33.3", "!90", "gray.png"}, {"pct:99,99,1,1", "max", "270", "bitonal.png"},
		{"600,200,500,500", "7,", "180", "color.jpg"}, {"0,0,701,301", "!50,50", "!0", "default.png"}, {"350,150,1,1", "^max", "90", "gray.jpg"},
		{"1,1,699,299", "699,1", "0", "default.jpg"},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	info, a := memPyramid(f, testkit.Quadrants(701, 301))
	lim := limitsOf(info, testLimits)
	f.Fuzz(func(t *testing.T, region, size, rotation, file string) {
		q, err := parseImage(info, lim, region, size, rotation, file)
		if err != nil {
			return
		}
		body, ct, err := compose(info, a, q)
		if err != nil {
			t.Fatalf("%s/%s/%s/%s: %v", region, size, rotation, file, err)
		}
		m, format, err := image.Decode(bytes.NewReader(body))
		w, h := q.sizes[0][0], q.sizes[0][1]
		if q.degrees%180 == 90 {
			w, h = h, w
		}
		if err != nil || ct != "image/"+format || m.Bounds().Dx() != w || m.Bounds().Dy() != h {
			t.Fatalf("%s/%s/%s/%s: %s %v, %v; want %d × %d", region, size, rotation, file, ct, m, err, w, h)
		}
		if _, gray := m.(*image.Gray); gray != (q.quality == "gray" || q.quality == "bitonal" && q.format == "jpg") {
			t.Fatalf("%s/%s/%s/%s: a %T", region, size, rotation, file, m)
		}
	})
}

// TestComposeParallel: tiles decoded by several goroutines (idle slots of
// the semaphore) make the same image as one goroutine does.
func TestComposeParallel(t *testing.T) {
	info, a := memPyramid(t, noisy(1500, 1300))
	lim := limitsOf(info, testLimits)
	q, err := parseImage(info, lim, "100,100,1300,1100", "900,", "90", "default.png")
	if err != nil {
		t.Fatal(err)
	}
	one, _, err := compose(info, a, q)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	spares := 0
	a.spare = func() (func(), bool) {
		mu.Lock()
		defer mu.Unlock()
		spares++
		return func() {}, true
	}
	many, _, err := compose(info, a, q)
	if err != nil || !bytes.Equal(one, many) || spares < 2 {
		t.Errorf("%d more goroutines: %d bytes against %d, %v", spares, len(many), len(one), err)
	}
}
