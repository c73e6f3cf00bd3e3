package worker

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"
	"os"
	"strconv"

	"golang.org/x/image/tiff"
)

// Decompression bombs: a few hundred kilobytes of PNG or JPEG may claim
// billions of pixels. Every path that hands an image to a decoder (the
// pure-Go fallback, vipsthumbnail, tesseract) first reads its width and
// height from the header and refuses an image beyond the limits below,
// with a Permanent error that says why.
const (
	// DefaultMaxPixels is the default of Tools.MaxPixels: 100 megapixels,
	// a 10,000 × 10,000 scan or an A0 sheet at 300 dpi.
	DefaultMaxPixels = 100_000_000

	// goMaxDecodeBytes bounds the memory the pure-Go fallback may decode
	// an image into (it holds the whole image; vipsthumbnail streams): at
	// 4 bytes a pixel, 64 megapixels. Beyond it, derivatives need
	// vipsthumbnail.
	goMaxDecodeBytes = 256 << 20

	// headerBudget bounds how much of a file is read to find its
	// dimensions.
	headerBudget = 4 << 20
)

// maxPixels returns t.MaxPixels, or DefaultMaxPixels when it is not set.
func (t Tools) maxPixels() int64 {
	if t.MaxPixels > 0 {
		return t.MaxPixels
	}
	return DefaultMaxPixels
}

// checkPixels reads the dimensions of the image at path (format as
// toolImageFormat names it) and refuses, Permanently, one whose header
// cannot be read or whose pixel count exceeds t.maxPixels(). It returns
// the image's header configuration when Go could read it (the fallback
// decoder needs its colour model), else a zero Config with the size set.
func (t Tools) checkPixels(path, format string) (image.Config, error) {
	cfg, err := imageConfig(path, format)
	if err != nil {
		return cfg, Permanent(fmt.Errorf("reading the %s image's dimensions: %w", format, err))
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return cfg, Permanent(fmt.Errorf("the %s image claims %d×%d pixels", format, cfg.Width, cfg.Height))
	}
	if n, limit := int64(cfg.Width)*int64(cfg.Height), t.maxPixels(); n > limit {
		return cfg, Permanent(fmt.Errorf("the %s image is %d×%d pixels (%s megapixels), beyond the limit of %s megapixels (--max-image-pixels): refused as a possible decompression bomb",
			format, cfg.Width, cfg.Height, megapixels(n), megapixels(limit)))
	}
	return cfg, nil
}

// checkDecodeMemory refuses, Permanently, an image the pure-Go fallback
// would need more than goMaxDecodeBytes to hold.
func checkDecodeMemory(cfg image.Config, format string, progressive bool) error {
	bpp := bytesPerPixel(cfg.ColorModel)
	if progressive {
		// image/jpeg keeps a progressive image's coefficients, 2 bytes
		// each, besides the pixels.
		bpp += 6
	}
	if need := int64(cfg.Width) * int64(cfg.Height) * bpp; need > goMaxDecodeBytes {
		return Permanent(fmt.Errorf("the %s image is %d×%d pixels; decoding it without vipsthumbnail would take %d MiB, beyond the fallback's %d MiB (install libvips' vipsthumbnail, which streams)",
			format, cfg.Width, cfg.Height, need>>20, goMaxDecodeBytes>>20))
	}
	return nil
}

// bytesPerPixel is the size of a pixel of the image type Go decodes into
// for a colour model (YCbCr counted as 4:4:4, its largest).
func bytesPerPixel(m color.Model) int64 {
	switch m {
	case color.GrayModel, color.AlphaModel:
		return 1
	case color.Gray16Model, color.Alpha16Model:
		return 2
	case color.YCbCrModel:
		return 3
	case color.RGBAModel, color.NRGBAModel, color.CMYKModel:
		return 4
	}
	if _, ok := m.(color.Palette); ok {
		return 1
	}
	return 8 // RGBA64, NRGBA64 and anything else
}

func megapixels(n int64) string {
	return strconv.FormatFloat(float64(n)/1e6, 'f', -1, 64)
}

// imageConfig reads an image's header: Go's own decoders' DecodeConfig for
// the formats Go reads, a small parser for PNM, JPEG 2000 and HEIF/AVIF,
// which only vipsthumbnail and tesseract read.
func imageConfig(path, format string) (image.Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return image.Config{}, err
	}
	defer f.Close()
	r := io.LimitReader(f, headerBudget)
	switch format {
	case "tiff":
		// tiff.DecodeConfig reads the first IFD through io.ReaderAt.
		return tiff.DecodeConfig(io.NewSectionReader(f, 0, headerBudget))
	case "pnm":
		return pnmConfig(bufio.NewReader(r))
	case "jp2":
		return jp2Config(r)
	case "heif":
		return heifConfig(r)
	}
	cfg, _, err := image.DecodeConfig(bufio.NewReader(r))
	return cfg, err
}

// pnmConfig reads a Netpbm header: P1-P6, then width and height as
// decimal numbers separated by white space and comments.
func pnmConfig(r *bufio.Reader) (image.Config, error) {
	magic := make([]byte, 2)
	if _, err := io.ReadFull(r, magic); err != nil || magic[0] != 'P' {
		return image.Config{}, errors.New("not a PNM header")
	}
	var dims [2]int
	for i := range dims {
		n, err := pnmNumber(r)
		if err != nil {
			return image.Config{}, err
		}
		dims[i] = n
	}
	return image.Config{ColorModel: color.RGBAModel, Width: dims[0], Height: dims[1]}, nil
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

// jp2Config reads the size of a JPEG 2000 image: the SIZ marker segment of
// a raw codestream (FF4F FF51), or the image header box (ihdr) of a JP2
// file.
func jp2Config(r io.Reader) (image.Config, error) {
	head := make([]byte, 64<<10)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return image.Config{}, err
	}
	head = head[:n]
	be := binary.BigEndian
	if len(head) >= 4 && be.Uint16(head) == 0xFF4F && be.Uint16(head[2:]) == 0xFF51 {
		// SIZ: Lsiz(2) Rsiz(2) Xsiz(4) Ysiz(4) XOsiz(4) YOsiz(4)
		if len(head) < 4+2+2+16 {
			return image.Config{}, errors.New("JPEG 2000: SIZ segment cut short")
		}
		x, y := be.Uint32(head[8:]), be.Uint32(head[12:])
		xo, yo := be.Uint32(head[16:]), be.Uint32(head[20:])
		if xo > x || yo > y {
			return image.Config{}, errors.New("JPEG 2000: SIZ offsets beyond the image")
		}
		return config32(x-xo, y-yo)
	}
	// ihdr: height(4) width(4) ... inside the jp2h box.
	for i := 0; i+4 <= len(head); i++ {
		if string(head[i:i+4]) == "ihdr" && i+12 <= len(head) {
			return config32(be.Uint32(head[i+8:]), be.Uint32(head[i+4:]))
		}
	}
	return image.Config{}, errors.New("JPEG 2000: no image header (ihdr) in the first 64 KiB")
}

// heifConfig reads the largest image spatial extents property (ispe) of a
// HEIF or AVIF file: version and flags(4) width(4) height(4).
func heifConfig(r io.Reader) (image.Config, error) {
	head := make([]byte, 256<<10)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return image.Config{}, err
	}
	head = head[:n]
	var best image.Config
	found := false
	for i := 0; i+16 <= len(head); i++ {
		if string(head[i:i+4]) != "ispe" {
			continue
		}
		c, err := config32(binary.BigEndian.Uint32(head[i+8:]), binary.BigEndian.Uint32(head[i+12:]))
		if err != nil {
			return c, err
		}
		if !found || int64(c.Width)*int64(c.Height) > int64(best.Width)*int64(best.Height) {
			best, found = c, true
		}
	}
	if !found {
		return best, errors.New("HEIF: no image extents (ispe) in the first 256 KiB")
	}
	return best, nil
}

// config32 makes a Config of 32-bit dimensions, refusing those an int
// cannot hold on every platform.
func config32(w, h uint32) (image.Config, error) {
	if w > 1<<31-1 || h > 1<<31-1 {
		return image.Config{}, fmt.Errorf("dimensions %d×%d out of range", w, h)
	}
	return image.Config{ColorModel: color.RGBAModel, Width: int(w), Height: int(h)}, nil
}

// jpegProgressive reports whether a JPEG's first frame header is
// progressive (SOF2, SOF6, SOF10, SOF14), walking the marker segments.
func jpegProgressive(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	r := bufio.NewReader(io.LimitReader(f, headerBudget))
	var b [2]byte
	if _, err := io.ReadFull(r, b[:]); err != nil || b != [2]byte{0xFF, 0xD8} {
		return false
	}
	for {
		c, err := r.ReadByte()
		if err != nil {
			return false
		}
		if c != 0xFF {
			continue
		}
		m, err := r.ReadByte()
		for err == nil && m == 0xFF {
			m, err = r.ReadByte()
		}
		if err != nil {
			return false
		}
		switch {
		case m == 0xD8 || (m >= 0xD0 && m <= 0xD7) || m == 0x01 || m == 0x00:
			continue
		case m == 0xC2 || m == 0xC6 || m == 0xCA || m == 0xCE:
			return true
		case m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC:
			return false // a sequential frame
		case m == 0xDA || m == 0xD9:
			return false
		}
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return false
		}
		if _, err := r.Discard(int(binary.BigEndian.Uint16(b[:])) - 2); err != nil {
			return false
		}
	}
}
