package worker

import (
	"bytes"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/shelfmark/shelfmark/bench/gen"
)

// TestAreaShrink compares areaShrink with area averaging done in floating
// point, on grey and colour images, at integer and fractional ratios: no
// output sample may be off by more than one.
func TestAreaShrink(t *testing.T) {
	for _, c := range []struct{ sw, sh, dw, dh, bpp int }{
		{8, 6, 4, 3, 1}, {8, 6, 4, 3, 4}, {175, 9, 160, 8, 4}, {37, 23, 20, 19, 1},
		{31, 17, 31, 17, 4}, {5, 5, 1, 1, 1}, {100, 3, 51, 2, 4}, {50, 40, 12, 9, 4}, {130, 9, 119, 8, 4},
		{90, 90, 89, 46, 1}, {64, 64, 63, 20, 4},
	} {
		stride := c.sw*c.bpp + 3 // rows need not be packed
		src := make([]byte, c.sh*stride)
		for i := range src {
			src[i] = uint8(i*37 + i/7)
		}
		got := areaShrink(src, c.sw, c.sh, stride, c.bpp, c.dw, c.dh)
		if len(got) != c.dw*c.dh*c.bpp {
			t.Fatalf("%+v: %d bytes", c, len(got))
		}
		rx, ry := float64(c.sw)/float64(c.dw), float64(c.sh)/float64(c.dh)
		for y := range c.dh {
			for x := range c.dw {
				for ch := range c.bpp {
					want := 255.0
					if c.bpp == 1 || ch < 3 {
						var sum float64
						for sy := range c.sh {
							oy := math.Max(0, math.Min(float64(sy+1), float64(y+1)*ry)-math.Max(float64(sy), float64(y)*ry))
							for sx := range c.sw {
								ox := math.Max(0, math.Min(float64(sx+1), float64(x+1)*rx)-math.Max(float64(sx), float64(x)*rx))
								sum += ox * oy * float64(src[sy*stride+sx*c.bpp+ch])
							}
						}
						want = sum / (rx * ry)
					}
					if g := float64(got[(y*c.dw+x)*c.bpp+ch]); math.Abs(g-want) > 1 {
						t.Fatalf("%+v: sample (%d,%d,%d) = %v, want %.2f", c, x, y, ch, g, want)
					}
				}
			}
		}
	}
}

// jpegWithSegments returns the JPEG data with marker segments inserted
// after its start of image.
func jpegWithSegments(data []byte, segs ...[]byte) []byte {
	out := append([]byte{}, data[:2]...)
	for _, s := range segs {
		out = append(out, s...)
	}
	return append(out, data[2:]...)
}

// jpegSegment is a marker segment holding payload.
func jpegSegment(marker byte, payload []byte) []byte {
	s := []byte{0xFF, marker, 0, 0}
	binary.BigEndian.PutUint16(s[2:], uint16(len(payload)+2))
	return append(s, payload...)
}

// exifWithOrientation is an EXIF APP1 payload whose IFD0 holds one
// Orientation entry, in byte order bo.
func exifWithOrientation(bo binary.AppendByteOrder, mark string, o uint16) []byte {
	b := []byte("Exif\x00\x00" + mark)
	b = bo.AppendUint16(b, 42)
	b = bo.AppendUint32(b, 8)
	b = bo.AppendUint16(b, 1)               // one entry
	b = bo.AppendUint16(b, 0x0112)          // Orientation
	b = bo.AppendUint16(b, 3)               // SHORT
	b = bo.AppendUint32(b, 1)               // one value
	b = append(bo.AppendUint16(b, o), 0, 0) // in the entry, padded
	return bo.AppendUint32(b, 0)            // no next IFD
}

// pngOf encodes m as image/png does (RGB for an opaque RGBA image).
func pngOf(t testing.TB, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pngWithChunk returns the PNG data with a chunk of the type and payload
// (and its CRC) inserted at byte at (33: just after IHDR).
func pngWithChunk(data []byte, at int, typ string, payload []byte) []byte {
	c := binary.BigEndian.AppendUint32(nil, uint32(len(payload)))
	c = append(append(c, typ...), payload...)
	c = binary.BigEndian.AppendUint32(c, crc32.ChecksumIEEE(c[4:]))
	return append(append(append([]byte{}, data[:at]...), c...), data[at:]...)
}

// tiffOf writes m (*image.Gray or opaque *image.RGBA) as a baseline,
// uncompressed, little-endian TIFF of photometric interpretation
// photometric, with extra entries of one SHORT each (tag: value).
func tiffOf(m image.Image, photometric uint16, extra map[uint16]uint16) []byte {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	var pix []byte
	samples := uint16(1)
	switch m := m.(type) {
	case *image.Gray:
		for y := range h {
			pix = append(pix, m.Pix[m.PixOffset(b.Min.X, b.Min.Y+y):m.PixOffset(b.Max.X, b.Min.Y+y)]...)
		}
	case *image.RGBA:
		samples = 3
		for i := 0; i < len(m.Pix); i += 4 {
			pix = append(pix, m.Pix[i:i+3]...)
		}
	}
	type entry struct {
		tag, typ     uint16
		count, value uint32
	}
	entries := []entry{{256, 4, 1, uint32(w)}, {257, 4, 1, uint32(h)}, {258, 3, uint32(samples), 8}, {259, 3, 1, 1},
		{262, 3, 1, uint32(photometric)}, {273, 4, 1, 0}, {277, 3, 1, uint32(samples)}, {278, 4, 1, uint32(h)}, {279, 4, 1, uint32(len(pix))}}
	for tag, v := range extra {
		entries = append(entries, entry{tag, 3, 1, uint32(v)})
	}
	slices.SortFunc(entries, func(a, b entry) int { return int(a.tag) - int(b.tag) })
	le := binary.LittleEndian
	ifdEnd := 8 + 2 + 12*len(entries) + 4
	bitsAt, pixAt := ifdEnd, ifdEnd+6
	out := le.AppendUint32([]byte("II*\x00"), 8)
	out = le.AppendUint16(out, uint16(len(entries)))
	for _, e := range entries {
		out = le.AppendUint16(le.AppendUint16(out, e.tag), e.typ)
		out = le.AppendUint32(out, e.count)
		switch {
		case e.tag == 258 && samples == 3:
			out = le.AppendUint32(out, uint32(bitsAt))
		case e.tag == 273:
			out = le.AppendUint32(out, uint32(pixAt))
		case e.typ == 3:
			out = le.AppendUint16(le.AppendUint16(out, uint16(e.value)), 0) // a SHORT, left-justified
		default:
			out = le.AppendUint32(out, e.value)
		}
	}
	out = le.AppendUint32(out, 0) // no next directory
	out = le.AppendUint16(le.AppendUint16(le.AppendUint16(out, 8), 8), 8)
	return append(out, pix...)
}

// TestTilesMakeAccess: the access copy comes from the tiles only for a
// plain JPEG or PNG; one that EXIF turns or that carries an ICC profile
// or transparency, one of 16-bit samples or a palette, or another
// format, keeps vipsthumbnail.
func TestTilesMakeAccess(t *testing.T) {
	plain := gen.JPEG(1, 1, 64, 48)
	greyPNG := pngOf(t, image.NewGray(image.Rect(0, 0, 40, 30)))
	opaque := image.NewRGBA(image.Rect(0, 0, 40, 30))
	draw.Draw(opaque, opaque.Rect, image.NewUniform(color.RGBA{10, 20, 30, 255}), image.Point{}, draw.Src)
	rgbPNG := pngOf(t, opaque)
	translucent := image.NewRGBA(image.Rect(0, 0, 8, 8))
	var grey bytes.Buffer
	if err := jpeg.Encode(&grey, image.NewGray(image.Rect(0, 0, 40, 30)), nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		data []byte
		want bool
	}{
		{"plain", plain, true},
		{"grey", grey.Bytes(), true},
		{"upright EXIF", jpegWithSegments(plain, jpegSegment(0xE1, exifWithOrientation(binary.LittleEndian, "II", 1))), true},
		{"turned EXIF (II)", jpegWithSegments(plain, jpegSegment(0xE1, exifWithOrientation(binary.LittleEndian, "II", 6))), false},
		{"turned EXIF (MM)", jpegWithSegments(plain, jpegSegment(0xE1, exifWithOrientation(binary.BigEndian, "MM", 8))), false},
		{"ICC profile", jpegWithSegments(plain, jpegSegment(0xE2, []byte("ICC_PROFILE\x00\x01\x01rest"))), false},
		{"truncated EXIF", jpegWithSegments(plain, jpegSegment(0xE1, []byte("Exif\x00\x00II*\x00"))), true},
		{"palette PNG", gen.PNG(1, 1, 64, 48), false},
		{"grey PNG", greyPNG, true},
		{"RGB PNG", rgbPNG, true},
		{"RGBA PNG", pngOf(t, translucent), false},
		{"16-bit PNG", pngOf(t, image.NewGray16(image.Rect(0, 0, 8, 8))), false},
		{"PNG with tRNS", pngWithChunk(greyPNG, 33, "tRNS", []byte{0, 0}), false},
		{"PNG with iCCP", pngWithChunk(rgbPNG, 33, "iCCP", []byte("sRGB\x00\x00rest")), false},
		{"PNG with eXIf after IDAT", pngWithChunk(rgbPNG, len(rgbPNG)-12, "eXIf", exifWithOrientation(binary.BigEndian, "MM", 1)), false},
		{"PNG with a text chunk", pngWithChunk(rgbPNG, 33, "tEXt", []byte("Title\x00a page")), true},
		{"PNG without IEND", greyPNG[:len(greyPNG)-12], false},
		{"grey TIFF", tiffOf(image.NewGray(image.Rect(0, 0, 40, 30)), 1, nil), true},
		{"grey TIFF, min-is-white", tiffOf(image.NewGray(image.Rect(0, 0, 40, 30)), 0, nil), true},
		{"RGB TIFF", tiffOf(opaque, 2, nil), true},
		{"RGB TIFF, upright", tiffOf(opaque, 2, map[uint16]uint16{274: 1}), true},
		{"RGB TIFF, turned", tiffOf(opaque, 2, map[uint16]uint16{274: 6}), false},
		{"RGB TIFF with alpha", tiffOf(opaque, 2, map[uint16]uint16{338: 2}), false},
		{"RGB TIFF with an ICC profile", tiffOf(opaque, 2, map[uint16]uint16{34675: 0}), false},
		{"CMYK TIFF", tiffOf(opaque, 5, nil), false},
		{"palette TIFF", tiffOf(image.NewGray(image.Rect(0, 0, 40, 30)), 3, nil), false},
		{"TIFF cut short", tiffOf(opaque, 2, nil)[:20], false},
	} {
		p := toolTestFile(t, "in", c.data)
		if got := tilesMakeAccess(p); got != c.want {
			t.Errorf("%s: tilesMakeAccess = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestTilesAccessThumbnail: the access copy and thumbnail made from the
// pyramid have the sizes Access and Thumbnail give, and the access copy
// looks like vipsthumbnail's (mean difference of a grey level or two),
// for a colour and a grey page; the archive lists both sizes.
func TestTilesAccessThumbnail(t *testing.T) {
	tools := toolTestTools(t)
	toolTestNeed(t, tools.Vips, "vips")
	toolTestNeed(t, tools.Vipsthumbnail, "vipsthumbnail")
	ctx := context.Background()
	colour, err := jpeg.Decode(bytes.NewReader(gen.JPEG(1, 3, 1300, 2100)))
	if err != nil {
		t.Fatal(err)
	}
	greyPage := image.NewGray(colour.Bounds())
	draw.Draw(greyPage, greyPage.Rect, colour, image.Point{}, draw.Src)
	var grey bytes.Buffer
	if err := jpeg.Encode(&grey, greyPage, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	colourPNG := image.NewRGBA(colour.Bounds())
	draw.Draw(colourPNG, colourPNG.Rect, colour, image.Point{}, draw.Src)
	for _, c := range []struct {
		name, mt string
		data     []byte
	}{
		{"colour", "image/jpeg", gen.JPEG(1, 1, 2500, 3500)}, {"grey", "image/jpeg", grey.Bytes()}, {"small", "image/jpeg", gen.JPEG(1, 2, 900, 700)},
		{"grey PNG", "image/png", gen.PageImage(1, 1, []string{"a", "page", "of", "words"})}, {"colour PNG", "image/png", pngOf(t, colourPNG)},
		{"colour TIFF", "image/tiff", tiffOf(colourPNG, 2, nil)}, {"grey TIFF", "image/tiff", tiffOf(greyPage, 1, nil)},
	} {
		p := toolTestFile(t, "page", c.data)
		if !tilesMakeAccess(p) {
			t.Fatalf("%s: not a page whose access copy comes from its tiles", c.name)
		}
		pyr, access, thumb, err := tools.TilesAccessThumbnail(ctx, p, c.mt, ThumbnailSize, AccessSize)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		pyr.Close()
		want, err := tools.Access(ctx, p, c.mt, AccessSize)
		if err != nil {
			t.Fatal(err)
		}
		wantThumb, err := tools.Thumbnail(ctx, p, c.mt, ThumbnailSize)
		if err != nil {
			t.Fatal(err)
		}
		if access.Width != want.Width || access.Height != want.Height || access.Name != "access.jpg" || access.MediaType != "image/jpeg" {
			t.Errorf("%s: access %s %d×%d, want %d×%d as Access makes it", c.name, access.Name, access.Width, access.Height, want.Width, want.Height)
		}
		if thumb.Width != wantThumb.Width || thumb.Height != wantThumb.Height || thumb.Name != "thumbnail.jpg" {
			t.Errorf("%s: thumbnail %d×%d, want %d×%d", c.name, thumb.Width, thumb.Height, wantThumb.Width, wantThumb.Height)
		}
		if len(pyr.Info.Sizes) != 2 || pyr.Info.Sizes[1].Width != access.Width || pyr.Info.Sizes[0].Width != thumb.Width {
			t.Errorf("%s: archive sizes %+v", c.name, pyr.Info.Sizes)
		}
		if d := meanDiff(t, access.Data, want.Data); d > 4 {
			t.Errorf("%s: access copy from the tiles differs from vipsthumbnail's by %.2f grey levels on average", c.name, d)
		} else {
			t.Logf("%s: %d×%d, mean difference from vipsthumbnail's %.2f", c.name, access.Width, access.Height, d)
		}
	}
}

// meanDiff decodes two JPEGs of one size and returns the mean absolute
// difference of their grey levels.
func meanDiff(t *testing.T, a, b []byte) float64 {
	t.Helper()
	ia, err := jpeg.Decode(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	ib, err := jpeg.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r := ia.Bounds()
	if r != ib.Bounds() {
		t.Fatalf("sizes %v and %v", r, ib.Bounds())
	}
	var sum float64
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			ga := color.GrayModel.Convert(ia.At(x, y)).(color.Gray).Y
			gb := color.GrayModel.Convert(ib.At(x, y)).(color.Gray).Y
			sum += math.Abs(float64(ga) - float64(gb))
		}
	}
	return sum / float64(r.Dx()*r.Dy())
}

// FuzzTilesMakeAccess reads the headers of any bytes as a page's
// (JPEG, PNG or TIFF, by their magic): an answer, never a crash.
func FuzzTilesMakeAccess(f *testing.F) {
	grey := image.NewGray(image.Rect(0, 0, 6, 5))
	f.Add(gen.JPEG(1, 1, 16, 12))
	f.Add(pngOf(f, grey))
	f.Add(tiffOf(grey, 1, map[uint16]uint16{274: 1}))
	f.Add(pngWithChunk(pngOf(f, grey), 33, "iCCP", []byte("p\x00\x00")))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "page")
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		tilesMakeAccess(p)
	})
}
