package worker

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/color/palette"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/image/bmp"
)

// gifTestFile builds a GIF of a w×h screen and frames of the given
// sizes, each with an empty data block.
func gifTestFile(w, h uint16, frames ...[2]uint16) []byte {
	le := binary.LittleEndian
	b := []byte("GIF89a")
	b = le.AppendUint16(b, w)
	b = le.AppendUint16(b, h)
	b = append(b, 0x80, 0, 0)         // a global table of 2 colours
	b = append(b, make([]byte, 6)...) // the table
	b = append(b, 0x21, 0xF9, 4, 0, 0, 0, 0, 0)
	for _, f := range frames {
		b = append(b, 0x2C, 0, 0, 0, 0)
		b = le.AppendUint16(b, f[0])
		b = le.AppendUint16(b, f[1])
		b = append(b, 0, 2, 2, 0x4C, 0x01, 0) // code size 2, one block, end
	}
	return append(b, 0x3B)
}

// webpChunk is a RIFF chunk of a WebP file.
func webpChunk(fourcc string, data []byte) []byte {
	b := append([]byte(fourcc), binary.LittleEndian.AppendUint32(nil, uint32(len(data)))...)
	b = append(b, data...)
	if len(data)%2 == 1 {
		b = append(b, 0)
	}
	return b
}

// webpTestFile wraps chunks in a RIFF WEBP header.
func webpTestFile(chunks ...[]byte) []byte {
	body := []byte("WEBP")
	for _, c := range chunks {
		body = append(body, c...)
	}
	return append(append([]byte("RIFF"), binary.LittleEndian.AppendUint32(nil, uint32(len(body)))...), body...)
}

func u24(v int) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16)} }

// TestImagePagesHeaders: the header of every format the tools read gives
// each image it holds with its size, channels and bytes a sample.
func TestImagePagesHeaders(t *testing.T) {
	be := binary.BigEndian
	j2k := []byte{0xFF, 0x4F, 0xFF, 0x51, 0, 47, 0, 0}
	for _, v := range []uint32{30_000, 40_000, 0, 0, 1024, 1024, 0, 0} {
		j2k = be.AppendUint32(j2k, v)
	}
	j2k = append(j2k, 0, 3, 11, 1, 1, 11, 1, 1, 11, 1, 1) // 3 components of 12 bits
	jp2 := append([]byte("\x00\x00\x00\x0cjP  \r\n\x87\n\x00\x00\x00\x2djp2h\x00\x00\x00\x16ihdr"), 0, 0, 0x9c, 0x40, 0, 0, 0x75, 0x30, 0, 3, 7, 7, 0, 0)
	jp2var := append([]byte("\x00\x00\x00\x0cjP  \r\n\x87\n\x00\x00\x00\x35jp2h\x00\x00\x00\x16ihdr"), 0, 0, 0x9c, 0x40, 0, 0, 0x75, 0x30, 0, 1, 0xFF, 7, 0, 0)
	jp2var = append(jp2var, []byte("\x00\x00\x00\x09bpcc\x0f")...)
	jp2pal := append([]byte("\x00\x00\x00\x0cjP  \r\n\x87\n\x00\x00\x00\x40jp2h\x00\x00\x00\x16ihdr"), 0, 0, 0x9c, 0x40, 0, 0, 0x75, 0x30, 0, 1, 7, 7, 0, 0)
	jp2pal = append(jp2pal, []byte("\x00\x00\x00\x0fpclr\x00\x02\x04\x07\x07\x07\x07")...)
	heif := append([]byte("\x00\x00\x00\x18ftypheic"), make([]byte, 16)...)
	for _, wh := range [][2]uint32{{30_000, 40_000}, {320, 240}} {
		heif = append(heif, []byte("\x00\x00\x00\x14ispe\x00\x00\x00\x00")...)
		heif = be.AppendUint32(heif, wh[0])
		heif = be.AppendUint32(heif, wh[1])
	}
	heif = append(heif, []byte("\x00\x00\x00\x10pixi\x00\x00\x00\x00\x03\x0a\x0a\x0a")...)
	heif = append(heif, []byte("\x00\x00\x00\x30auxC\x00\x00\x00\x00urn:mpeg:mpegB:cicp:systems:auxiliary:alpha\x00")...)
	heifOpaque := append([]byte("\x00\x00\x00\x18ftypavif"), make([]byte, 16)...)
	heifOpaque = append(heifOpaque, []byte("\x00\x00\x00\x14ispe\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x02\x00")...)

	encode := func(f func(*bytes.Buffer) error) []byte {
		var b bytes.Buffer
		if err := f(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	pal := image.NewPaletted(image.Rect(0, 0, 30, 20), color.Palette{color.Transparent, color.White})
	grey16 := image.NewGray16(image.Rect(0, 0, 30, 20))
	rgb := image.NewRGBA(image.Rect(0, 0, 30, 20))
	for i := 3; i < len(rgb.Pix); i += 4 {
		rgb.Pix[i] = 255
	}
	nrgba := image.NewNRGBA(image.Rect(0, 0, 30, 20))
	jpeg12 := []byte{0xFF, 0xD8, 0xFF, 0xE0, 0, 4, 0, 0, 0xFF, 0xC1, 0, 17, 12, 0x9c, 0x40, 0x75, 0x30, 3, 1, 0x11, 0, 2, 0x11, 0, 3, 0x11, 0}
	frames := &gif.GIF{Config: image.Config{Width: 40, Height: 30, ColorModel: color.Palette(palette.Plan9)}}
	for range 3 {
		frames.Image = append(frames.Image, image.NewPaletted(image.Rect(0, 0, 40, 30), palette.Plan9))
		frames.Delay = append(frames.Delay, 10)
	}
	vp8x := append([]byte{0x12, 0, 0, 0}, append(u24(799), u24(599)...)...)
	anmf := func(w, h int) []byte {
		return append(append(append(make([]byte, 6), u24(w-1)...), u24(h-1)...), 0, 0, 0, 0)
	}
	vp8l := []byte{0x2F}
	vp8l = binary.LittleEndian.AppendUint32(vp8l, uint32(199)|uint32(99)<<14)

	type page struct {
		label       string
		w, h        int64
		ch, sampleB int64
	}
	for _, c := range []struct {
		name, format string
		data         []byte
		want         []page
	}{
		{"a.ppm", "pnm", []byte("P6\n# a comment\n30000 40000\n255\n"), []page{{"", 30_000, 40_000, 3, 1}}},
		{"a.pgm", "pnm", []byte("P5 300 400 65535\n"), []page{{"", 300, 400, 1, 2}}},
		{"a.pbm", "pnm", []byte("P4 300 400\n"), []page{{"", 300, 400, 1, 1}}},
		{"a.j2k", "jp2", j2k, []page{{"", 30_000, 40_000, 3, 2}}},
		{"a.jp2", "jp2", jp2, []page{{"", 30_000, 40_000, 3, 1}}},
		{"bpcc.jp2", "jp2", jp2var, []page{{"", 30_000, 40_000, 1, 2}}},
		{"pclr.jp2", "jp2", jp2pal, []page{{"", 30_000, 40_000, 4, 1}}},
		{"a.heic", "heif", heif, []page{{"image 1", 30_000, 40_000, 4, 2}, {"image 2", 320, 240, 4, 2}}},
		{"a.avif", "heif", heifOpaque, []page{{"", 256, 512, 3, 1}}},
		{"palette.png", "png", encode(func(b *bytes.Buffer) error { return png.Encode(b, pal) }), []page{{"", 30, 20, 4, 1}}},
		{"grey16.png", "png", encode(func(b *bytes.Buffer) error { return png.Encode(b, grey16) }), []page{{"", 30, 20, 1, 2}}},
		{"rgb.png", "png", encode(func(b *bytes.Buffer) error { return png.Encode(b, rgb) }), []page{{"", 30, 20, 3, 1}}},
		{"deep.png", "png", deepPNG(10_000, 8_000, 16, 6), []page{{"", 10_000, 8_000, 4, 2}}},
		{"a.jpg", "jpeg", encode(func(b *bytes.Buffer) error { return jpeg.Encode(b, rgb, nil) }), []page{{"", 30, 20, 3, 1}}},
		{"grey.jpg", "jpeg", encode(func(b *bytes.Buffer) error { return jpeg.Encode(b, image.NewGray(image.Rect(0, 0, 30, 20)), nil) }), []page{{"", 30, 20, 1, 1}}},
		{"twelve.jpg", "jpeg", jpeg12, []page{{"", 30_000, 40_000, 3, 2}}},
		{"rgb.bmp", "bmp", encode(func(b *bytes.Buffer) error { return bmp.Encode(b, rgb) }), []page{{"", 30, 20, 3, 1}}},
		{"rgba.bmp", "bmp", encode(func(b *bytes.Buffer) error { return bmp.Encode(b, nrgba) }), []page{{"", 30, 20, 4, 1}}},
		{"anim.gif", "gif", encode(func(b *bytes.Buffer) error { return gif.EncodeAll(b, frames) }), []page{
			{"", 40, 30, 4, 1}, {"frame 1", 40, 30, 4, 1}, {"frame 2", 40, 30, 4, 1}, {"frame 3", 40, 30, 4, 1}, {"the 3 frames", 3600, 1, 1, 1}}},
		{"big-frame.gif", "gif", gifTestFile(10, 10, [2]uint16{60_000, 50_000}), []page{{"", 10, 10, 4, 1}, {"frame 1", 60_000, 50_000, 4, 1}}},
		{"anim.webp", "webp", webpTestFile(webpChunk("VP8X", vp8x), webpChunk("ANIM", make([]byte, 6)),
			webpChunk("ANMF", anmf(800, 600)), webpChunk("ANMF", anmf(16_000, 16_000))), []page{
			{"", 800, 600, 4, 1}, {"frame 1", 800, 600, 4, 1}, {"frame 2", 16_000, 16_000, 4, 1}}},
		{"still.webp", "webp", webpTestFile(webpChunk("VP8L", vp8l)), []page{{"", 200, 100, 3, 1}}},
		{"pages.tif", "tiff", tiffTestFile(false,
			tiffTestIFD{w: 300, h: 200, spp: 3, bits: 16, photometric: 2, subs: []tiffTestIFD{{w: 30, h: 20, spp: 1, bits: 8, photometric: 1}}},
			tiffTestIFD{w: 20_000, h: 20_000, spp: 1, bits: 8, photometric: 3}), []page{
			{"page 1", 300, 200, 3, 2}, {"sub-image 1 of page 1", 30, 20, 1, 1}, {"page 2", 20_000, 20_000, 3, 1}}},
		{"big.tif", "tiff", tiffTestFile(true, greyPage(30, 20), tiffTestIFD{w: 70_000, h: 70_000, spp: 4, bits: 32, photometric: 2}), []page{
			{"page 1", 30, 20, 1, 1}, {"page 2", 70_000, 70_000, 4, 4}}},
		{"one.tif", "tiff", tiffTestFile(false, tiffTestIFD{w: 30, h: 20, spp: 1, bits: 1}), []page{{"", 30, 20, 1, 1}}},
	} {
		p := toolTestFile(t, c.name, c.data)
		if got, err := toolImageFormat(p); err != nil || got != c.format {
			t.Errorf("%s: format %q, %v", c.name, got, err)
			continue
		}
		pages, err := imagePages(p, c.format)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var got []page
		for _, p := range pages {
			got = append(got, page{p.label, p.width, p.height, p.channels, p.sampleBytes})
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: pages %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: pages %v, want %v", c.name, got, c.want)
				break
			}
		}
	}
}

// TestImagePagesRefuses: headers that cannot be checked are refused, with
// a bounded cost: a chain of TIFF directories that loops, more images
// than maxImagePages, directories that claim more than headerBudget, a
// file cut short.
func TestImagePagesRefuses(t *testing.T) {
	loop := tiffTestFile(false, greyPage(30, 20))
	first := binary.LittleEndian.Uint32(loop[4:])
	n := binary.LittleEndian.Uint16(loop[first:])
	binary.LittleEndian.PutUint32(loop[int(first)+2+12*int(n):], first) // the page is its own next
	many := make([]tiffTestIFD, maxImagePages+1)
	for i := range many {
		many[i] = tiffTestIFD{w: 1, h: 1, spp: 1, bits: 8, photometric: 1}
	}
	huge := tiffTestFile(true, greyPage(30, 20))
	binary.LittleEndian.PutUint64(huge[binary.LittleEndian.Uint64(huge[8:]):], 1<<40) // entries
	cut := tiffTestFile(false, greyPage(30, 20), greyPage(30, 20))
	var frames [][2]uint16
	for range maxImagePages + 1 {
		frames = append(frames, [2]uint16{1, 1})
	}
	for _, c := range []struct {
		name, format string
		data         []byte
		want         string
	}{
		{"loop.tif", "tiff", loop, "form a loop"},
		{"many.tif", "tiff", tiffTestFile(false, many...), "more than 10000 pages"},
		{"huge.tif", "tiff", huge, "beyond 4 MiB"},
		{"cut.tif", "tiff", cut[:len(cut)-40], "beyond the end of the file"},
		{"many.gif", "gif", gifTestFile(1, 1, frames...), "more than 10000 frames"},
		{"cut.png", "png", deepPNG(10, 10, 8, 2)[:20], "no IHDR"},
		{"cut.jpg", "jpeg", []byte{0xFF, 0xD8, 0xFF, 0xDA, 0, 2}, "no frame header"},
	} {
		p := toolTestFile(t, c.name, c.data)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := (Tools{}).checkPixels(p, c.format)
		runtime.ReadMemStats(&after)
		if !IsPermanent(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a permanent error saying %q", c.name, err, c.want)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 16<<20 {
			t.Errorf("%s: the check allocated %d MiB", c.name, alloc>>20)
		}
	}
}

// TestMaxImageBytes: the decoded-bytes limit follows the pixel limit (4
// bytes a pixel) unless set, and then is exact.
func TestMaxImageBytes(t *testing.T) {
	if got := (Tools{}).maxImageBytes(); got != 400_000_000 {
		t.Errorf("default: %d, want 400,000,000", got)
	}
	if got := (Tools{MaxPixels: 1000}).maxImageBytes(); got != 4000 {
		t.Errorf("MaxPixels 1000: %d, want 4000", got)
	}
	rgba := func(w, h int) string {
		var b bytes.Buffer
		if err := png.Encode(&b, image.NewNRGBA(image.Rect(0, 0, w, h))); err != nil {
			t.Fatal(err)
		}
		return toolTestFile(t, "rgba.png", b.Bytes())
	}
	tools := Tools{MaxImageBytes: 1_000_000}
	if err := tools.checkPixels(rgba(500, 500), "png"); err != nil {
		t.Errorf("1,000,000 bytes exactly: %v", err)
	}
	if err := tools.checkPixels(rgba(500, 501), "png"); !IsPermanent(err) ||
		!strings.Contains(err.Error(), "the png image is 500×501 pixels of 4 channels of 1 byte, 1 MB decoded, beyond the limit of 1 MB (--max-image-bytes)") {
		t.Errorf("1,002,000 bytes: %v", err)
	}
	gif := toolTestFile(t, "frames.gif", gifTestFile(6000, 6000, [2]uint16{6000, 6000}, [2]uint16{6000, 6000}, [2]uint16{6000, 6000}))
	if err := (Tools{}).checkPixels(gif, "gif"); !IsPermanent(err) ||
		!strings.Contains(err.Error(), "the 3 frames of the gif image are 108000000 pixels (108 megapixels), beyond the limit of 100 megapixels") {
		t.Errorf("three frames of 36 megapixels: %v", err)
	}
}

// TestImagePagesDamaged: a header cut short or with bytes changed gives an
// error or pages, never a panic.
func TestImagePagesDamaged(t *testing.T) {
	var png8 bytes.Buffer
	if err := png.Encode(&png8, image.NewNRGBA(image.Rect(0, 0, 3, 2))); err != nil {
		t.Fatal(err)
	}
	var jpg bytes.Buffer
	if err := jpeg.Encode(&jpg, image.NewRGBA(image.Rect(0, 0, 3, 2)), nil); err != nil {
		t.Fatal(err)
	}
	var bm bytes.Buffer
	if err := bmp.Encode(&bm, image.NewRGBA(image.Rect(0, 0, 3, 2))); err != nil {
		t.Fatal(err)
	}
	j2k := append([]byte{0xFF, 0x4F, 0xFF, 0x51, 0, 41, 0, 0}, make([]byte, 32)...)
	j2k = append(j2k, 0, 1, 7, 1, 1)
	samples := map[string][]byte{
		"tiff": tiffTestFile(false, greyPage(3, 2), tiffTestIFD{w: 3, h: 2, spp: 3, bits: 16, photometric: 2, subs: []tiffTestIFD{{w: 1, h: 1, spp: 1, bits: 8}}}),
		"big":  tiffTestFile(true, greyPage(3, 2), greyPage(2, 3)),
		"gif":  gifTestFile(3, 2, [2]uint16{3, 2}, [2]uint16{2, 1}),
		"webp": webpTestFile(webpChunk("VP8X", append([]byte{0x12, 0, 0, 0}, append(u24(2), u24(1)...)...)), webpChunk("ANMF", make([]byte, 16))),
		"png":  png8.Bytes(), "jpeg": jpg.Bytes(), "bmp": bm.Bytes(), "pnm": []byte("P6 3 2 65535\n"), "jp2": j2k,
		"heif": append([]byte("\x00\x00\x00\x18ftypheic\x00\x00\x00\x14ispe\x00\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x02pixi\x00\x00\x00\x00\x03\x08"), 0),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	p := filepath.Join(t.TempDir(), "damaged")
	for name, data := range samples {
		format := name
		if name == "big" {
			format = "tiff"
		}
		if _, err := imagePages(toolTestFile(t, "whole", data), format); err != nil {
			t.Errorf("%s, whole: %v", name, err)
		}
		try := func(b []byte) {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("%s: %x: panic %v", name, b, r)
				}
			}()
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			_, _ = imagePages(p, format)
		}
		for n := range len(data) {
			try(data[:n])
		}
		for range 300 {
			b := bytes.Clone(data)
			for range 1 + rng.IntN(4) {
				b[rng.IntN(len(b))] = byte(rng.Uint32())
			}
			try(b)
		}
	}
}
