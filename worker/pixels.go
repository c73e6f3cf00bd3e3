package worker

import (
	"fmt"
	"image"
	"image/color"
	"math"
	"strconv"
)

// Decompression bombs: a few hundred kilobytes of PNG or JPEG may claim
// billions of pixels, or a modest number of pixels of many wide samples.
// Every path that hands an image to a decoder (the pure-Go fallback,
// vipsthumbnail, vips, tesseract) first reads the header of every image
// the file holds (each page of a TIFF, each frame of a GIF or an animated
// WebP, each image of a HEIF) and refuses the file, with a Permanent error
// that says why, when one of them is beyond the limits below.
const (
	// DefaultMaxPixels is the default of Tools.MaxPixels: 100 megapixels,
	// a 10,000 × 10,000 scan or an A0 sheet at 300 dpi.
	DefaultMaxPixels = 100_000_000

	// DefaultBytesPerPixel sets the default of Tools.MaxImageBytes:
	// this many bytes for each pixel Tools.MaxPixels allows, so that
	// every image of 8-bit samples (at most four: RGBA, CMYK) within the
	// pixel limit passes, and images of 16-bit or wider samples, or of
	// more channels, are held to the same memory (400 MB by default).
	DefaultBytesPerPixel = 4

	// goMaxDecodeBytes bounds the memory the pure-Go fallback may decode
	// an image into (it holds the whole image; vipsthumbnail streams): at
	// 4 bytes a pixel, 64 megapixels. Beyond it, derivatives need
	// vipsthumbnail.
	goMaxDecodeBytes = 256 << 20

	// headerBudget bounds how much of a file is read to find the size of
	// its images (for a TIFF: the bytes of its image directories, which
	// may lie anywhere in the file).
	headerBudget = 4 << 20

	// maxImagePages bounds how many images (TIFF pages and sub-images,
	// GIF or WebP frames, HEIF items) a file may hold: the header check
	// reads each one, and no tool here needs more.
	maxImagePages = 10_000
)

// maxPixels returns t.MaxPixels, or DefaultMaxPixels when it is not set.
func (t Tools) maxPixels() int64 {
	if t.MaxPixels > 0 {
		return t.MaxPixels
	}
	return DefaultMaxPixels
}

// maxImageBytes returns t.MaxImageBytes, or DefaultBytesPerPixel bytes
// for each pixel of maxPixels when it is not set.
func (t Tools) maxImageBytes() int64 {
	if t.MaxImageBytes > 0 {
		return t.MaxImageBytes
	}
	if p := t.maxPixels(); p <= math.MaxInt64/DefaultBytesPerPixel {
		return p * DefaultBytesPerPixel
	}
	return math.MaxInt64
}

// checkPixels reads the header of every image the file at path holds
// (format as toolImageFormat names it) and refuses, Permanently, a file
// whose headers cannot be read, or one of whose images is beyond
// t.maxPixels() pixels or t.maxImageBytes() bytes decoded (pixels ×
// channels × bytes a sample; see imagePage). It reads at most the
// headers, never the pixels (for a GIF, the length bytes of its data
// blocks), and runs no decoder.
func (t Tools) checkPixels(path, format string) error {
	pages, err := imagePages(path, format)
	if err != nil {
		return Permanent(fmt.Errorf("reading the %s image's header: %w", format, err))
	}
	for _, p := range pages {
		if err := t.checkPage(format, p); err != nil {
			return err
		}
	}
	return nil
}

// checkPage refuses, Permanently, one image beyond the limits.
func (t Tools) checkPage(format string, p imagePage) error {
	subject := "the " + format + " image"
	if p.label != "" {
		subject = p.label + " of " + subject
	}
	verb, size := "is", fmt.Sprintf("%d×%d pixels", p.width, p.height)
	if p.total {
		verb, size = "are", fmt.Sprintf("%d pixels", p.width*p.height)
	}
	if p.width <= 0 || p.height <= 0 {
		return Permanent(fmt.Errorf("%s claims %d×%d pixels", subject, p.width, p.height))
	}
	n, limit := p.width*p.height, t.maxPixels() // dimensions are below 2^31
	if n > limit {
		return Permanent(fmt.Errorf("%s %s %s (%s megapixels), beyond the limit of %s megapixels (--max-image-pixels): refused as a possible decompression bomb",
			subject, verb, size, megapixels(n), megapixels(limit)))
	}
	per := max(p.channels, 1) * max(p.sampleBytes, 1)
	if maxBytes := t.maxImageBytes(); n > maxBytes/per {
		return Permanent(fmt.Errorf("%s %s %s of %s, %s MB decoded, beyond the limit of %s MB (--max-image-bytes): refused as a possible decompression bomb",
			subject, verb, size, p.samples(), megabytes(float64(n)*float64(per)), megabytes(float64(maxBytes))))
	}
	return nil
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

// megabytes formats a number of bytes in decimal megabytes, to at most
// one decimal.
func megabytes(n float64) string {
	return strconv.FormatFloat(math.Round(n/1e5)/10, 'f', -1, 64)
}
