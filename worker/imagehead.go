package worker

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// imagePage is one image a file holds (the image itself, a TIFF page or
// sub-image, a GIF or WebP frame, a HEIF item) as its header describes
// it. Its decoded size is counted as width × height × channels ×
// sampleBytes: channels include alpha, a palette counts as the colours it
// expands to (3, or 4 with transparency), and a sample takes whole bytes
// (1 up to 8 bits, 2 up to 16, and so on), as the tools decode them.
type imagePage struct {
	label         string // "" for the image itself, else "page 2", "frame 3"…
	width, height int64
	channels      int64
	sampleBytes   int64
	// total marks the sum of a file's frames (width is their pixels,
	// height 1): a reader that holds them all at once holds that many.
	total bool
}

// samples describes a pixel's samples: "4 channels of 2 bytes".
func (p imagePage) samples() string {
	plural := func(n int64, s string) string {
		if n == 1 {
			return fmt.Sprintf("%d %s", n, s)
		}
		return fmt.Sprintf("%d %ss", n, s)
	}
	return plural(max(p.channels, 1), "channel") + " of " + plural(max(p.sampleBytes, 1), "byte")
}

// sampleBytes returns the bytes a sample of bits takes once decoded.
func sampleBytes(bits int64) int64 {
	return max(1, (bits+7)/8)
}

// dims checks that an image's dimensions fit an int on every platform.
func dims(w, h uint64) (int64, int64, error) {
	if w > 1<<31-1 || h > 1<<31-1 {
		return 0, 0, fmt.Errorf("dimensions %d×%d out of range", w, h)
	}
	return int64(w), int64(h), nil
}

// imagePages reads the headers of the images the file at path holds
// (format as toolImageFormat names it). It reads at most headerBudget
// bytes of header, except that a GIF is walked to its end (skipping each
// data block by its length) to find every frame.
func imagePages(path, format string) ([]imagePage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch format {
	case "tiff":
		return tiffPages(f, fi.Size())
	case "webp":
		return webpPages(f, fi.Size())
	case "gif":
		return gifPages(bufio.NewReader(f))
	}
	r := bufio.NewReader(io.LimitReader(f, headerBudget))
	var p imagePage
	switch format {
	case "png":
		p, err = pngPage(r)
	case "jpeg":
		var fr jpegFrame
		fr, err = readJPEGFrame(r)
		p = fr.page
	case "bmp":
		p, err = bmpPage(r)
	case "pnm":
		p, err = pnmPage(r)
	case "jp2":
		p, err = jp2Page(r)
	case "heif":
		return heifPages(r)
	default:
		return nil, fmt.Errorf("no header reader for %q images", format)
	}
	if err != nil {
		return nil, err
	}
	return []imagePage{p}, nil
}

// pngPage reads a PNG's IHDR and the chunks before its image data, for a
// transparency chunk (tRNS), which adds an alpha channel. Animation
// frames (APNG) are not read: none of the tools decodes them.
func pngPage(r *bufio.Reader) (imagePage, error) {
	sig := make([]byte, 8)
	if _, err := io.ReadFull(r, sig); err != nil || string(sig) != "\x89PNG\r\n\x1a\n" {
		return imagePage{}, errors.New("PNG: no signature")
	}
	hdr := make([]byte, 8+13)
	if _, err := io.ReadFull(r, hdr); err != nil || string(hdr[4:8]) != "IHDR" || binary.BigEndian.Uint32(hdr) != 13 {
		return imagePage{}, errors.New("PNG: no IHDR chunk first")
	}
	be := binary.BigEndian
	w, h, err := dims(uint64(be.Uint32(hdr[8:])), uint64(be.Uint32(hdr[12:])))
	if err != nil {
		return imagePage{}, fmt.Errorf("PNG: %w", err)
	}
	depth, colour := hdr[16], hdr[17]
	var ch int64
	switch colour {
	case 0: // grey
		ch = 1
	case 2, 3: // RGB, palette
		ch = 3
	case 4: // grey and alpha
		ch = 2
	case 6: // RGBA
		ch = 4
	default:
		return imagePage{}, fmt.Errorf("PNG: colour type %d", colour)
	}
	if colour != 4 && colour != 6 && pngHasTRNS(r) {
		ch++
	}
	return imagePage{width: w, height: h, channels: ch, sampleBytes: sampleBytes(int64(depth))}, nil
}

// pngHasTRNS reads the chunks that follow IHDR's CRC up to the image
// data and reports whether one is tRNS; when the header budget ends
// first, it answers true (the larger count).
func pngHasTRNS(r *bufio.Reader) bool {
	if _, err := r.Discard(4); err != nil { // IHDR's CRC
		return true
	}
	head := make([]byte, 8)
	for {
		if _, err := io.ReadFull(r, head); err != nil {
			return true
		}
		switch string(head[4:]) {
		case "tRNS":
			return true
		case "IDAT", "IEND":
			return false
		}
		if _, err := r.Discard(int(binary.BigEndian.Uint32(head)) + 4); err != nil {
			return true
		}
	}
}

// pngChunkBudget is the most chunks pngPlain walks: a PNG of more is not
// plain (encoders write IDAT chunks of 8 KiB and up, so that is gigabytes).
const pngChunkBudget = 1 << 18

// pngPlain reports whether the PNG at path is 8-bit grey or RGB (colour
// types 0 and 2) without a transparency (tRNS), an ICC profile (iCCP) or
// EXIF (eXIf, which may turn it) anywhere: one whose pixels need no
// conversion but to JPEG. It walks the chunks to IEND by their lengths,
// reading 8 bytes of each (and IHDR's 13).
func pngPlain(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var b [8 + 8 + 13]byte
	if _, err := f.ReadAt(b[:], 0); err != nil || string(b[:8]) != "\x89PNG\r\n\x1a\n" ||
		string(b[12:16]) != "IHDR" || binary.BigEndian.Uint32(b[8:]) != 13 {
		return false
	}
	if depth, colour := b[24], b[25]; depth != 8 || (colour != 0 && colour != 2) {
		return false
	}
	off := int64(8 + 8 + 13 + 4)
	for range pngChunkBudget {
		var head [8]byte
		if _, err := f.ReadAt(head[:], off); err != nil {
			return false // no IEND
		}
		switch string(head[4:]) {
		case "tRNS", "iCCP", "eXIf":
			return false
		case "IEND":
			return true
		}
		off += 12 + int64(binary.BigEndian.Uint32(head[:4]))
	}
	return false
}

// jpegFrame is a JPEG's frame header: its size and samples, and whether
// it is progressive.
type jpegFrame struct {
	page        imagePage
	progressive bool
	icc         bool // an ICC profile (APP2 ICC_PROFILE) comes before the frame
	orientation int  // the EXIF orientation (APP1), 0 when there is none
}

// readJPEGFrame walks a JPEG's marker segments to its first frame
// header (SOF0–SOF15 but DHT, JPG and DAC), noting on the way an ICC
// profile and the EXIF orientation. Further images of the file (an
// MPO's, a thumbnail in EXIF) are not read: the tools decode the first.
func readJPEGFrame(r *bufio.Reader) (jpegFrame, error) {
	var b [2]byte
	if _, err := io.ReadFull(r, b[:]); err != nil || b != [2]byte{0xFF, 0xD8} {
		return jpegFrame{}, errors.New("JPEG: no start of image")
	}
	var meta jpegFrame
	for {
		c, err := r.ReadByte()
		if err != nil {
			return jpegFrame{}, fmt.Errorf("JPEG: no frame header: %w", err)
		}
		if c != 0xFF {
			continue
		}
		m, err := r.ReadByte()
		for err == nil && m == 0xFF {
			m, err = r.ReadByte()
		}
		if err != nil {
			return jpegFrame{}, fmt.Errorf("JPEG: no frame header: %w", err)
		}
		switch {
		case m == 0xD8 || (m >= 0xD0 && m <= 0xD7) || m == 0x01 || m == 0x00:
			continue
		case m == 0xDA || m == 0xD9:
			return jpegFrame{}, errors.New("JPEG: no frame header before the scan")
		}
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return jpegFrame{}, fmt.Errorf("JPEG: %w", err)
		}
		n := int(binary.BigEndian.Uint16(b[:])) - 2
		if n < 0 {
			return jpegFrame{}, errors.New("JPEG: bad segment length")
		}
		if m == 0xE1 || m == 0xE2 {
			seg := make([]byte, n)
			if _, err := io.ReadFull(r, seg); err != nil {
				return jpegFrame{}, fmt.Errorf("JPEG: %w", err)
			}
			if m == 0xE2 && bytes.HasPrefix(seg, []byte("ICC_PROFILE\x00")) {
				meta.icc = true
			}
			if m == 0xE1 && bytes.HasPrefix(seg, []byte("Exif\x00\x00")) && meta.orientation == 0 {
				meta.orientation = exifOrientation(seg[6:])
			}
			continue
		}
		if m < 0xC0 || m > 0xCF || m == 0xC4 || m == 0xC8 || m == 0xCC {
			if _, err := r.Discard(n); err != nil {
				return jpegFrame{}, fmt.Errorf("JPEG: %w", err)
			}
			continue
		}
		// precision(1) height(2) width(2) components(1)
		sof := make([]byte, 6)
		if n < len(sof) {
			return jpegFrame{}, errors.New("JPEG: frame header cut short")
		}
		if _, err := io.ReadFull(r, sof); err != nil {
			return jpegFrame{}, fmt.Errorf("JPEG: frame header: %w", err)
		}
		h, w := binary.BigEndian.Uint16(sof[1:]), binary.BigEndian.Uint16(sof[3:])
		meta.page = imagePage{width: int64(w), height: int64(h), channels: int64(sof[5]),
			sampleBytes: sampleBytes(int64(sof[0]))}
		meta.progressive = m == 0xC2 || m == 0xC6 || m == 0xCA || m == 0xCE
		return meta, nil
	}
}

// exifOrientation reads the Orientation tag (0x0112) of IFD0 from a
// TIFF-structured EXIF block; 0 when it is absent or unreadable.
func exifOrientation(t []byte) int {
	if len(t) < 8 {
		return 0
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 0
	}
	off := int64(bo.Uint32(t[4:]))
	if off < 8 || off+2 > int64(len(t)) {
		return 0
	}
	n := int64(bo.Uint16(t[off:]))
	for i := int64(0); i < n; i++ {
		e := off + 2 + 12*i
		if e+12 > int64(len(t)) {
			return 0
		}
		if bo.Uint16(t[e:]) == 0x0112 && bo.Uint16(t[e+2:]) == 3 { // SHORT
			return int(bo.Uint16(t[e+8:]))
		}
	}
	return 0
}

// jpegHead reads a JPEG's first frame header and what comes before it.
func jpegHead(path string) (jpegFrame, error) {
	f, err := os.Open(path)
	if err != nil {
		return jpegFrame{}, fmt.Errorf("worker: input: %w", err)
	}
	defer f.Close()
	return readJPEGFrame(bufio.NewReader(io.LimitReader(f, headerBudget)))
}

// jpegProgressive reports whether a JPEG's first frame header is
// progressive (SOF2, SOF6, SOF10, SOF14).
func jpegProgressive(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	fr, err := readJPEGFrame(bufio.NewReader(io.LimitReader(f, headerBudget)))
	return err == nil && fr.progressive
}

// bmpPage reads a BMP's information header: its size (a negative height
// is a top-down image) and bits a pixel (32: 4 channels; fewer, a
// palette or packed RGB: 3).
func bmpPage(r *bufio.Reader) (imagePage, error) {
	head := make([]byte, 14+16)
	if _, err := io.ReadFull(r, head); err != nil || string(head[:2]) != "BM" {
		return imagePage{}, errors.New("BMP: header cut short")
	}
	le := binary.LittleEndian
	var w, h int64
	var bits uint16
	if size := le.Uint32(head[14:]); size == 12 { // BITMAPCOREHEADER
		w, h, bits = int64(le.Uint16(head[18:])), int64(le.Uint16(head[20:])), le.Uint16(head[24:])
	} else {
		w, h = int64(int32(le.Uint32(head[18:]))), int64(int32(le.Uint32(head[22:])))
		bits = le.Uint16(head[28:])
	}
	h = max(h, -h)
	ch := int64(3)
	if bits == 32 {
		ch = 4
	}
	return imagePage{width: w, height: h, channels: ch, sampleBytes: 1}, nil
}

// pnmPage reads a Netpbm header: P1-P6, width and height, and for all but
// the bitmaps (P1, P4) the largest sample value, beyond 255 two bytes.
func pnmPage(r *bufio.Reader) (imagePage, error) {
	magic := make([]byte, 2)
	if _, err := io.ReadFull(r, magic); err != nil || magic[0] != 'P' || magic[1] < '1' || magic[1] > '6' {
		return imagePage{}, errors.New("not a PNM header")
	}
	var v [3]int
	n := 3
	if magic[1] == '1' || magic[1] == '4' {
		n = 2
	}
	for i := range n {
		x, err := pnmNumber(r)
		if err != nil {
			return imagePage{}, err
		}
		v[i] = x
	}
	p := imagePage{width: int64(v[0]), height: int64(v[1]), channels: 1, sampleBytes: 1}
	if magic[1] == '3' || magic[1] == '6' {
		p.channels = 3
	}
	if v[2] > 255 {
		p.sampleBytes = 2
	}
	return p, nil
}

func pnmNumber(r *bufio.Reader) (int, error) {
	digits := 0
	n := 0
	for {
		c, err := r.ReadByte()
		if err != nil {
			return 0, fmt.Errorf("PNM header: %w", err)
		}
		switch {
		case c == '#' && digits == 0:
			if _, err := r.ReadBytes('\n'); err != nil {
				return 0, fmt.Errorf("PNM header: %w", err)
			}
		case c >= '0' && c <= '9':
			if n > (1<<31)/10 {
				return 0, errors.New("PNM header: dimension too large")
			}
			n = n*10 + int(c-'0')
			digits++
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			if digits > 0 {
				return n, nil
			}
		default:
			return 0, fmt.Errorf("PNM header: unexpected byte %q", c)
		}
	}
}

// jp2Page reads the size and samples of a JPEG 2000 image: the SIZ marker
// segment of a raw codestream (FF4F FF51), or of a JP2 file the image
// header box (ihdr), its bits per component box (bpcc) when ihdr says
// they vary, and a palette box (pclr), whose columns are the channels.
func jp2Page(r io.Reader) (imagePage, error) {
	head := make([]byte, 64<<10)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return imagePage{}, err
	}
	head = head[:n]
	be := binary.BigEndian
	if len(head) >= 4 && be.Uint16(head) == 0xFF4F && be.Uint16(head[2:]) == 0xFF51 {
		// SIZ: Lsiz(2) Rsiz(2) Xsiz Ysiz XOsiz YOsiz XTsiz YTsiz XTOsiz
		// YTOsiz(4 each) Csiz(2), then Ssiz XRsiz YRsiz for each component.
		if len(head) < 42 {
			return imagePage{}, errors.New("JPEG 2000: SIZ segment cut short")
		}
		x, y := be.Uint32(head[8:]), be.Uint32(head[12:])
		xo, yo := be.Uint32(head[16:]), be.Uint32(head[20:])
		if xo > x || yo > y {
			return imagePage{}, errors.New("JPEG 2000: SIZ offsets beyond the image")
		}
		w, h, err := dims(uint64(x-xo), uint64(y-yo))
		if err != nil {
			return imagePage{}, fmt.Errorf("JPEG 2000: %w", err)
		}
		c := int(be.Uint16(head[40:]))
		if c == 0 || len(head) < 42+3*c {
			return imagePage{}, errors.New("JPEG 2000: SIZ components cut short")
		}
		bits := int64(0)
		for i := range c {
			bits = max(bits, int64(head[42+3*i]&0x7F)+1)
		}
		return imagePage{width: w, height: h, channels: int64(c), sampleBytes: sampleBytes(bits)}, nil
	}
	// ihdr: height(4) width(4) components(2) bits per component(1)…
	i := bytes.Index(head, []byte("ihdr"))
	if i < 0 || i+15 > len(head) {
		return imagePage{}, errors.New("JPEG 2000: no image header (ihdr) in the first 64 KiB")
	}
	w, h, err := dims(uint64(be.Uint32(head[i+8:])), uint64(be.Uint32(head[i+4:])))
	if err != nil {
		return imagePage{}, fmt.Errorf("JPEG 2000: %w", err)
	}
	c, bpc := int64(be.Uint16(head[i+12:])), int64(head[i+14])
	bits := bpc&0x7F + 1
	if bpc == 0xFF { // varies: the bpcc box has one byte a component
		j := bytes.Index(head, []byte("bpcc"))
		if j < 0 || int64(j)+4+c > int64(len(head)) {
			return imagePage{}, errors.New("JPEG 2000: no bits per component (bpcc) box")
		}
		bits = 0
		for _, b := range head[j+4 : int64(j)+4+c] {
			bits = max(bits, int64(b&0x7F)+1)
		}
	}
	// pclr: entries(2) columns(1) then a depth byte each; entries are
	// bytes of at most 38 bits.
	if j := bytes.Index(head, []byte("pclr")); j >= 0 && j+7 <= len(head) {
		cols := int64(head[j+6])
		c = max(c, cols)
		for k := 0; k < int(cols) && j+7+k < len(head); k++ {
			bits = max(bits, int64(head[j+7+k]&0x7F)+1)
		}
	}
	return imagePage{width: w, height: h, channels: c, sampleBytes: sampleBytes(bits)}, nil
}

// heifPages reads every image spatial extents property (ispe: version and
// flags(4) width(4) height(4)) of a HEIF or AVIF file's first 256 KiB,
// one image each, with the widest samples its pixel information
// properties (pixi: version and flags(4) channels(1) bits(1 each)) name
// (8 bits when none does), and three channels, four when the file names
// an alpha plane.
func heifPages(r io.Reader) ([]imagePage, error) {
	head := make([]byte, 256<<10)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	head = head[:n]
	bits := int64(8)
	for i := 0; i+9 <= len(head); i++ {
		if string(head[i:i+4]) != "pixi" {
			continue
		}
		c := int(head[i+8])
		for k := 0; k < c && i+9+k < len(head); k++ {
			bits = max(bits, int64(head[i+9+k]))
		}
	}
	ch := int64(3)
	if bytes.Contains(head, []byte("auxiliary:alpha")) || bytes.Contains(head, []byte("auxid:1")) {
		ch = 4
	}
	var pages []imagePage
	for i := 0; i+16 <= len(head); i++ {
		if string(head[i:i+4]) != "ispe" {
			continue
		}
		if len(pages) == maxImagePages {
			return nil, fmt.Errorf("HEIF: more than %d images", maxImagePages)
		}
		w, h, err := dims(uint64(binary.BigEndian.Uint32(head[i+8:])), uint64(binary.BigEndian.Uint32(head[i+12:])))
		if err != nil {
			return nil, fmt.Errorf("HEIF: %w", err)
		}
		pages = append(pages, imagePage{label: fmt.Sprintf("image %d", len(pages)+1), width: w, height: h, channels: ch, sampleBytes: sampleBytes(bits)})
	}
	switch len(pages) {
	case 0:
		return nil, errors.New("HEIF: no image extents (ispe) in the first 256 KiB")
	case 1:
		pages[0].label = ""
	}
	return pages, nil
}
