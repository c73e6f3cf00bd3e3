package worker

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// TIFF tags the page check reads.
const (
	tiffImageWidth      = 256
	tiffImageLength     = 257
	tiffBitsPerSample   = 258
	tiffPhotometric     = 262
	tiffSamplesPerPixel = 277
	tiffSubIFDs         = 330
	tiffPaletteColour   = 3 // Photometric: a palette
	tiffOrientation     = 274
	tiffExtraSamples    = 338
	tiffICCProfile      = 34675
)

// tiffReader walks a TIFF's image directories (IFDs), classic or BigTIFF,
// through an io.ReaderAt, charging every byte it reads to budget.
type tiffReader struct {
	r      io.ReaderAt
	size   int64
	order  binary.ByteOrder
	big    bool // BigTIFF: 8-byte counts and offsets, 20-byte entries
	budget int64
}

// read reads n bytes at off, within the file and the budget.
func (t *tiffReader) read(off uint64, n int64) ([]byte, error) {
	if n > t.budget {
		return nil, fmt.Errorf("TIFF: image directories beyond %d MiB", headerBudget>>20)
	}
	if off > uint64(t.size) || n > t.size-int64(off) {
		return nil, fmt.Errorf("TIFF: directory at %d beyond the end of the file", off)
	}
	t.budget -= n
	b := make([]byte, n)
	if _, err := t.r.ReadAt(b, int64(off)); err != nil {
		return nil, fmt.Errorf("TIFF: %w", err)
	}
	return b, nil
}

// offset decodes an offset or count of the file's width.
func (t *tiffReader) offset(b []byte) uint64 {
	if t.big {
		return t.order.Uint64(b)
	}
	return uint64(t.order.Uint32(b))
}

// newTIFFReader reads a TIFF's header: its byte order, whether it is a
// BigTIFF, and the offset of its first image directory.
func newTIFFReader(r io.ReaderAt, size int64) (*tiffReader, uint64, error) {
	head := make([]byte, 16)
	if size < 8 {
		return nil, 0, errors.New("TIFF: header cut short")
	}
	if _, err := r.ReadAt(head[:min(size, 16)], 0); err != nil && err != io.EOF {
		return nil, 0, fmt.Errorf("TIFF: %w", err)
	}
	t := &tiffReader{r: r, size: size, budget: headerBudget}
	switch string(head[:2]) {
	case "II":
		t.order = binary.LittleEndian
	case "MM":
		t.order = binary.BigEndian
	default:
		return nil, 0, errors.New("TIFF: no byte order mark")
	}
	var first uint64
	switch t.order.Uint16(head[2:]) {
	case 42:
		first = uint64(t.order.Uint32(head[4:]))
	case 43:
		if size < 16 || t.order.Uint16(head[4:]) != 8 {
			return nil, 0, errors.New("BigTIFF: header cut short or offsets not of 8 bytes")
		}
		t.big, first = true, t.order.Uint64(head[8:])
	default:
		return nil, 0, errors.New("TIFF: not version 42 or 43")
	}
	return t, first, nil
}

// tiffPages reads every page of a TIFF (the chain of IFDs) and every
// sub-image a page lists (SubIFDs), each as an image: tesseract reads
// every page, and libvips can read any page or sub-image. EXIF and GPS
// directories hold no image and are not read. It refuses a chain that
// loops, more than maxImagePages images, and directories of more than
// headerBudget bytes in all.
func tiffPages(r io.ReaderAt, size int64) ([]imagePage, error) {
	t, first, err := newTIFFReader(r, size)
	if err != nil {
		return nil, err
	}
	var pages []imagePage
	seen := map[uint64]bool{}
	add := func(off uint64, label string) (uint64, []uint64, error) {
		if seen[off] {
			return 0, nil, errors.New("TIFF: the image directories form a loop")
		}
		seen[off] = true
		if len(pages) == maxImagePages {
			return 0, nil, fmt.Errorf("TIFF: more than %d pages and sub-images", maxImagePages)
		}
		p, next, subs, err := t.ifd(off)
		if err != nil {
			return 0, nil, fmt.Errorf("%s: %w", label, err)
		}
		p.label = label
		pages = append(pages, p)
		return next, subs, nil
	}
	for n, off := 1, first; off != 0; n++ {
		label := fmt.Sprintf("page %d", n)
		next, subs, err := add(off, label)
		if err != nil {
			return nil, err
		}
		for i, sub := range subs {
			if _, _, err := add(sub, fmt.Sprintf("sub-image %d of %s", i+1, label)); err != nil {
				return nil, err
			}
		}
		off = next
	}
	if len(pages) == 0 {
		return nil, errors.New("TIFF: no image directory")
	}
	if len(pages) == 1 {
		pages[0].label = ""
	}
	return pages, nil
}

// ifd reads the directory at off: its image, the offset of the next
// directory and the offsets of its sub-images.
func (t *tiffReader) ifd(off uint64) (imagePage, uint64, []uint64, error) {
	body, n, entrySize, err := t.entries(off)
	if err != nil {
		return imagePage{}, 0, nil, err
	}
	var w, h uint64
	p := imagePage{channels: 1, sampleBytes: 1}
	var subs []uint64
	photometric := uint64(0)
	for i := range int64(n) {
		e := body[i*entrySize : (i+1)*entrySize]
		tag := t.order.Uint16(e)
		switch tag {
		case tiffImageWidth, tiffImageLength, tiffBitsPerSample, tiffPhotometric, tiffSamplesPerPixel, tiffSubIFDs:
		default:
			continue
		}
		vals, err := t.values(e)
		if err != nil {
			return imagePage{}, 0, nil, fmt.Errorf("tag %d: %w", tag, err)
		}
		if len(vals) == 0 {
			continue
		}
		switch tag {
		case tiffImageWidth:
			w = vals[0]
		case tiffImageLength:
			h = vals[0]
		case tiffBitsPerSample:
			bits := uint64(0)
			for _, v := range vals {
				bits = max(bits, v)
			}
			p.sampleBytes = sampleBytes(int64(min(bits, 1<<16)))
		case tiffPhotometric:
			photometric = vals[0]
		case tiffSamplesPerPixel:
			p.channels = int64(min(vals[0], 1<<16))
		case tiffSubIFDs:
			subs = vals
		}
	}
	if photometric == tiffPaletteColour {
		p.channels += 2 // each index becomes red, green and blue
	}
	if p.width, p.height, err = dims(w, h); err != nil {
		return imagePage{}, 0, nil, fmt.Errorf("TIFF: %w", err)
	}
	return p, t.offset(body[int64(n)*entrySize:]), subs, nil
}

// entries reads the directory at off: its n entries of entrySize bytes
// each, followed by the offset of the next directory.
func (t *tiffReader) entries(off uint64) (body []byte, n uint64, entrySize int64, err error) {
	countSize, entrySize, offsetSize := int64(2), int64(12), int64(4)
	if t.big {
		countSize, entrySize, offsetSize = 8, 20, 8
	}
	b, err := t.read(off, countSize)
	if err != nil {
		return nil, 0, 0, err
	}
	if t.big {
		n = t.order.Uint64(b)
	} else {
		n = uint64(t.order.Uint16(b))
	}
	if n > uint64(t.budget/entrySize) {
		return nil, 0, 0, fmt.Errorf("TIFF: image directories beyond %d MiB", headerBudget>>20)
	}
	body, err = t.read(off+uint64(countSize), int64(n)*entrySize+offsetSize)
	return body, n, entrySize, err
}

// plain reports whether the image of the directory at off is 8-bit grey
// (photometric 0 or 1, one sample) or RGB (photometric 2, three samples),
// with no extra samples (alpha), no ICC profile and no orientation that
// turns it.
func (t *tiffReader) plain(off uint64) (bool, error) {
	body, n, entrySize, err := t.entries(off)
	if err != nil {
		return false, err
	}
	photometric, samples, eight := uint64(1<<32), uint64(1), false
	for i := range int64(n) {
		e := body[i*entrySize : (i+1)*entrySize]
		tag := t.order.Uint16(e)
		switch tag {
		case tiffICCProfile, tiffExtraSamples:
			return false, nil
		case tiffOrientation, tiffBitsPerSample, tiffPhotometric, tiffSamplesPerPixel:
		default:
			continue
		}
		vals, err := t.values(e)
		if err != nil || len(vals) == 0 {
			return false, err
		}
		switch tag {
		case tiffOrientation:
			if vals[0] > 1 {
				return false, nil
			}
		case tiffBitsPerSample:
			for _, v := range vals {
				if v != 8 {
					return false, nil
				}
			}
			eight = true
		case tiffPhotometric:
			photometric = vals[0]
		case tiffSamplesPerPixel:
			samples = vals[0]
		}
	}
	return eight && ((photometric <= 1 && samples == 1) || (photometric == 2 && samples == 3)), nil
}

// tiffPlain reports whether the first image of the TIFF at path is
// plain (tiffReader.plain): one that dzsave's tiles show as vipsthumbnail
// would (both read the first page only).
func tiffPlain(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	t, first, err := newTIFFReader(f, fi.Size())
	if err != nil {
		return false
	}
	ok, err := t.plain(first)
	return err == nil && ok
}

// values decodes an entry's values of an unsigned integer type (BYTE,
// SHORT, LONG, IFD, LONG8, IFD8), inline or at the offset it gives.
func (t *tiffReader) values(e []byte) ([]uint64, error) {
	typ := t.order.Uint16(e[2:])
	var count uint64
	var field []byte
	if t.big {
		count, field = t.order.Uint64(e[4:]), e[12:20]
	} else {
		count, field = uint64(t.order.Uint32(e[4:])), e[8:12]
	}
	var size uint64
	switch typ {
	case 1: // BYTE
		size = 1
	case 3: // SHORT
		size = 2
	case 4, 13: // LONG, IFD
		size = 4
	case 16, 18: // LONG8, IFD8
		size = 8
	default:
		return nil, fmt.Errorf("TIFF: type %d where an integer belongs", typ)
	}
	if count > 1<<16 { // samples a pixel and sub-images are at most 65,535
		return nil, fmt.Errorf("TIFF: %d values where at most 65536 belong", count)
	}
	if count > uint64(t.budget)/size {
		return nil, fmt.Errorf("TIFF: image directories beyond %d MiB", headerBudget>>20)
	}
	data := field
	if n := count * size; n > uint64(len(field)) {
		var err error
		if data, err = t.read(t.offset(field), int64(n)); err != nil {
			return nil, err
		}
	}
	vals := make([]uint64, count)
	for i := range vals {
		switch size {
		case 1:
			vals[i] = uint64(data[i])
		case 2:
			vals[i] = uint64(t.order.Uint16(data[2*i:]))
		case 4:
			vals[i] = uint64(t.order.Uint32(data[4*i:]))
		case 8:
			vals[i] = t.order.Uint64(data[8*i:])
		}
	}
	return vals, nil
}
