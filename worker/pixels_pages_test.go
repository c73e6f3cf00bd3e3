package worker

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/png"
	"strings"
	"testing"
)

// tiffTestIFD is an image directory tiffTestFile writes: w×h pixels of
// spp samples of bits bits (a strip of real pixels when strip is set,
// else a strip of one byte that claims the rest), and its sub-images.
type tiffTestIFD struct {
	w, h        uint32
	spp, bits   uint16
	photometric uint16
	strip       []byte
	subs        []tiffTestIFD
}

// tiffTestFile builds a little-endian TIFF (a BigTIFF with big) of
// uncompressed pages, one strip each, chained in order.
func tiffTestFile(big bool, pages ...tiffTestIFD) []byte {
	le := binary.LittleEndian
	var b bytes.Buffer
	word := func(v uint64) { // an offset or a count of the file's width
		if big {
			b.Write(le.AppendUint64(nil, v))
		} else {
			b.Write(le.AppendUint32(nil, uint32(v)))
		}
	}
	if big {
		b.WriteString("II+\x00\x08\x00\x00\x00")
	} else {
		b.WriteString("II*\x00")
	}
	firstAt := b.Len()
	word(0)
	type entry struct {
		tag, typ uint16
		vals     []uint64
	}
	size := map[uint16]int{3: 2, 4: 4, 16: 8}
	var write func(p tiffTestIFD) (at, nextAt int)
	write = func(p tiffTestIFD) (int, int) {
		strip := p.strip
		if strip == nil {
			strip = []byte{0}
		}
		stripAt := b.Len()
		b.Write(strip)
		if b.Len()%2 == 1 {
			b.WriteByte(0)
		}
		var subs []uint64
		for _, s := range p.subs {
			at, _ := write(s)
			subs = append(subs, uint64(at))
		}
		bits := make([]uint64, p.spp)
		for i := range bits {
			bits[i] = uint64(p.bits)
		}
		offType := uint16(4)
		if big {
			offType = 16
		}
		entries := []entry{
			{256, 4, []uint64{uint64(p.w)}},
			{257, 4, []uint64{uint64(p.h)}},
			{258, 3, bits},
			{259, 3, []uint64{1}},
			{262, 3, []uint64{uint64(p.photometric)}},
			{273, offType, []uint64{uint64(stripAt)}},
			{277, 3, []uint64{uint64(p.spp)}},
			{278, 4, []uint64{uint64(p.h)}},
			{279, offType, []uint64{uint64(len(strip))}},
		}
		if len(subs) > 0 {
			entries = append(entries, entry{330, offType, subs})
		}
		field := 4
		if big {
			field = 8
		}
		// values too long for their entry first
		valueAt := map[uint16]int{}
		for _, e := range entries {
			if len(e.vals)*size[e.typ] > field {
				valueAt[e.tag] = b.Len()
				for _, v := range e.vals {
					b.Write(le.AppendUint64(nil, v)[:size[e.typ]])
				}
			}
		}
		at := b.Len()
		if big {
			b.Write(le.AppendUint64(nil, uint64(len(entries))))
		} else {
			b.Write(le.AppendUint16(nil, uint16(len(entries))))
		}
		for _, e := range entries {
			b.Write(le.AppendUint16(nil, e.tag))
			b.Write(le.AppendUint16(nil, e.typ))
			word(uint64(len(e.vals)))
			v := make([]byte, field)
			if off, ok := valueAt[e.tag]; ok {
				copy(v, le.AppendUint64(nil, uint64(off)))
			} else {
				for i, x := range e.vals {
					copy(v[i*size[e.typ]:], le.AppendUint64(nil, x)[:size[e.typ]])
				}
			}
			b.Write(v)
		}
		nextAt := b.Len()
		word(0)
		return at, nextAt
	}
	prev := firstAt
	for _, p := range pages {
		at, nextAt := write(p)
		raw := b.Bytes()
		if big {
			le.PutUint64(raw[prev:], uint64(at))
		} else {
			le.PutUint32(raw[prev:], uint32(at))
		}
		prev = nextAt
	}
	return b.Bytes()
}

// greyPage is a real w×h page of 8-bit grey: white with a black band.
func greyPage(w, h uint32) tiffTestIFD {
	pix := bytes.Repeat([]byte{255}, int(w*h))
	for i := int(w * h / 3); i < int(w*h/2); i++ {
		pix[i] = 0
	}
	return tiffTestIFD{w: w, h: h, spp: 1, bits: 8, photometric: 1, strip: pix}
}

// deepPNG returns a small PNG whose header claims w×h pixels of the
// given bit depth and colour type; its image data holds a few rows of
// zeros and then ends.
func deepPNG(w, h uint32, depth, colour byte) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		b.Write(binary.BigEndian.AppendUint32(nil, uint32(len(data))))
		crc := crc32.NewIEEE()
		crc.Write([]byte(typ))
		crc.Write(data)
		b.WriteString(typ)
		b.Write(data)
		b.Write(binary.BigEndian.AppendUint32(nil, crc.Sum32()))
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr, w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = depth, colour
	chunk("IHDR", ihdr)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(make([]byte, 4*(1+8*int(w))))
	zw.Close()
	chunk("IDAT", z.Bytes())
	chunk("IEND", nil)
	return b.Bytes()
}

// imageOps are the ways an image reaches a decoder: the derivatives
// (vipsthumbnail, or the pure-Go fallback), the tiles (vips dzsave) and
// OCR (tesseract).
func imageOps(t *testing.T, tools Tools) []struct {
	name string
	run  func(path, mediaType string) error
} {
	ctx := context.Background()
	fallback := tools
	fallback.Vipsthumbnail, fallback.Vips, fallback.Tesseract = "", "", ""
	return []struct {
		name string
		run  func(path, mediaType string) error
	}{
		{"fallback", func(p, mt string) error { _, err := fallback.Thumbnail(ctx, p, mt, 200); return err }},
		{"vipsthumbnail", func(p, mt string) error {
			toolTestNeed(t, tools.Vipsthumbnail, "vipsthumbnail")
			_, err := tools.Access(ctx, p, mt, 200)
			return err
		}},
		{"vips dzsave", func(p, mt string) error {
			toolTestNeed(t, tools.Vips, "vips")
			pyr, err := tools.Tiles(ctx, p, mt, nil)
			if err == nil {
				pyr.Close()
			}
			return err
		}},
		{"tesseract", func(p, _ string) error {
			toolTestNeed(t, tools.Tesseract, "tesseract")
			_, _, err := tools.OCR(ctx, p)
			return err
		}},
	}
}

// TestMultiPageTIFFBomb: a TIFF whose first page is small and whose
// second claims 400 megapixels is refused on every path, naming the page,
// before any decoder or tool runs (tesseract reads every page); one whose
// pages are all within the limits is read.
func TestMultiPageTIFFBomb(t *testing.T) {
	tools := toolTestTools(t)
	bomb := toolTestFile(t, "bomb.tif", tiffTestFile(false,
		greyPage(300, 200),
		tiffTestIFD{w: 20_000, h: 20_000, spp: 1, bits: 1, photometric: 0}))
	for _, op := range imageOps(t, tools) {
		t.Run(op.name, func(t *testing.T) {
			err := op.run(bomb, "image/tiff")
			if !IsPermanent(err) || !strings.Contains(err.Error(), "page 2 of the tiff image is 20000×20000 pixels (400 megapixels), beyond the limit of 100 megapixels") {
				t.Errorf("error %v, want a permanent refusal of page 2 that gives its size and the limit", err)
			}
		})
	}

	// Beyond a lowered limit only on its third page, and in a sub-image.
	small := tools
	small.MaxPixels = 100_000
	for name, data := range map[string][]byte{
		"page 3 of": tiffTestFile(false, greyPage(300, 200), greyPage(300, 200), greyPage(400, 300)),
		"sub-image 1 of page 2 of": tiffTestFile(false, greyPage(300, 200),
			tiffTestIFD{w: 300, h: 200, spp: 1, bits: 8, photometric: 1, strip: greyPage(300, 200).strip, subs: []tiffTestIFD{{w: 1000, h: 1000, spp: 1, bits: 8, photometric: 1}}}),
	} {
		p := toolTestFile(t, "pages.tif", data)
		for _, op := range imageOps(t, small) {
			if err := op.run(p, "image/tiff"); !IsPermanent(err) || !strings.Contains(err.Error(), name+" the tiff image is") {
				t.Errorf("%s: %s: error %v, want a permanent refusal naming %q", name, op.name, err, name)
			}
		}
	}

	// Two pages within the limits: every path reads it.
	good := toolTestFile(t, "good.tif", tiffTestFile(false, greyPage(300, 200), greyPage(200, 300)))
	for _, op := range imageOps(t, tools) {
		if err := op.run(good, "image/tiff"); err != nil {
			t.Errorf("two small pages: %s: %v", op.name, err)
		}
	}
}

// TestDecodedBytesBomb: an image within the pixel limit whose samples are
// wide (16-bit RGBA: 8 bytes a pixel) is refused on every path when its
// decoded bytes are beyond the limit, at the default limits and at lower
// ones, before any decoder or tool runs.
func TestDecodedBytesBomb(t *testing.T) {
	tools := toolTestTools(t)
	// 10,000 × 8,000 = 80 megapixels, within 100; 640 MB decoded.
	bomb := toolTestFile(t, "deep.png", deepPNG(10_000, 8_000, 16, 6))
	for _, op := range imageOps(t, tools) {
		if op.name == "tesseract" {
			continue // below, at a smaller scale: before the check it decoded
		}
		err := op.run(bomb, "image/png")
		if !IsPermanent(err) || !strings.Contains(err.Error(), "the png image is 10000×8000 pixels of 4 channels of 2 bytes, 640 MB decoded, beyond the limit of 400 MB (--max-image-bytes)") {
			t.Errorf("%s: error %v, want a permanent refusal that gives the bytes and the limit", op.name, err)
		}
	}

	// At a limit of 1 megapixel (4 MB decoded by default), the same
	// image at 1,000 × 800 (6.4 MB) is refused and its 8-bit form
	// (3.2 MB) is read on every path.
	small := tools
	small.MaxPixels = 1_000_000
	deep := toolTestFile(t, "deep-small.png", deepPNG(1000, 800, 16, 6))
	for _, op := range imageOps(t, small) {
		err := op.run(deep, "image/png")
		if !IsPermanent(err) || !strings.Contains(err.Error(), "the png image is 1000×800 pixels of 4 channels of 2 bytes, 6.4 MB decoded, beyond the limit of 4 MB (--max-image-bytes)") {
			t.Errorf("16-bit at 1 megapixel: %s: error %v, want a permanent refusal that gives the bytes and the limit", op.name, err)
		}
	}
	var shallow bytes.Buffer
	if err := png.Encode(&shallow, image.NewNRGBA(image.Rect(0, 0, 1000, 800))); err != nil {
		t.Fatal(err)
	}
	p := toolTestFile(t, "shallow.png", shallow.Bytes())
	for _, op := range imageOps(t, small) {
		if err := op.run(p, "image/png"); err != nil {
			t.Errorf("8-bit RGBA at 1 megapixel: %s: %v", op.name, err)
		}
	}
}
