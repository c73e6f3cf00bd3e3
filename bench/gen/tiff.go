package gen

import (
	"encoding/binary"
	"image"
)

// TIFF tag numbers and field types used by the baseline grey writer.
const (
	tiffShort    = 3
	tiffLong     = 4
	tiffRational = 5
)

type tiffEntry struct {
	tag, typ uint16
	vals     []uint32 // LONG or SHORT values; pairs for RATIONAL
}

// TIFF returns a baseline TIFF (little-endian, uncompressed 8-bit grey,
// BlackIsZero, in strips of about 8 KB, 300 dpi) of a w×h page of
// deterministic blocky text.
func TIFF(seed uint64, i, w, h int) []byte {
	r := rng(seed, i, saltTIFF)
	return encodeTIFF(textPage(r, w, h, max(1, min(w, h)/200)))
}

func encodeTIFF(img *image.Gray) []byte {
	w, h := img.Rect.Dx(), img.Rect.Dy()
	rowsPerStrip := max(1, min(h, 8192/max(1, w)))
	strips := max(1, (h+rowsPerStrip-1)/rowsPerStrip)
	le := binary.LittleEndian

	b := make([]byte, 8, 8+w*h+512)
	copy(b, "II*\x00")
	offsets := make([]uint32, strips)
	counts := make([]uint32, strips)
	for s := range strips {
		offsets[s] = uint32(len(b))
		y0, y1 := s*rowsPerStrip, min(h, (s+1)*rowsPerStrip)
		for y := y0; y < y1; y++ {
			b = append(b, img.Pix[img.PixOffset(img.Rect.Min.X, img.Rect.Min.Y+y):][:w]...)
		}
		counts[s] = uint32(len(b)) - offsets[s]
	}
	if len(b)%2 == 1 {
		b = append(b, 0)
	}
	entries := []tiffEntry{
		{254, tiffLong, []uint32{0}},                    // NewSubfileType
		{256, tiffLong, []uint32{uint32(w)}},            // ImageWidth
		{257, tiffLong, []uint32{uint32(h)}},            // ImageLength
		{258, tiffShort, []uint32{8}},                   // BitsPerSample
		{259, tiffShort, []uint32{1}},                   // Compression: none
		{262, tiffShort, []uint32{1}},                   // Photometric: BlackIsZero
		{273, tiffLong, offsets},                        // StripOffsets
		{277, tiffShort, []uint32{1}},                   // SamplesPerPixel
		{278, tiffLong, []uint32{uint32(rowsPerStrip)}}, // RowsPerStrip
		{279, tiffLong, counts},                         // StripByteCounts
		{282, tiffRational, []uint32{300, 1}},           // XResolution
		{283, tiffRational, []uint32{300, 1}},           // YResolution
		{296, tiffShort, []uint32{2}},                   // ResolutionUnit: inch
	}
	ifd := uint32(len(b))
	le.PutUint32(b[4:], ifd)
	// Values that do not fit the 4-byte field go after the IFD.
	extra := ifd + 2 + 12*uint32(len(entries)) + 4
	var tail []byte
	b = le.AppendUint16(b, uint16(len(entries)))
	for _, e := range entries {
		count := uint32(len(e.vals))
		size := 4 * count
		switch e.typ {
		case tiffShort:
			size = 2 * count
		case tiffRational:
			count /= 2
		}
		b = le.AppendUint16(b, e.tag)
		b = le.AppendUint16(b, e.typ)
		b = le.AppendUint32(b, count)
		var field []byte
		for _, v := range e.vals {
			if e.typ == tiffShort {
				field = le.AppendUint16(field, uint16(v))
			} else {
				field = le.AppendUint32(field, v)
			}
		}
		if size <= 4 {
			b = append(b, append(field, make([]byte, 4-len(field))...)...)
			continue
		}
		b = le.AppendUint32(b, extra+uint32(len(tail)))
		tail = append(tail, field...)
	}
	b = le.AppendUint32(b, 0) // no next IFD
	return append(b, tail...)
}
