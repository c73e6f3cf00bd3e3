// Package libjpeg decodes and encodes JPEG images with libjpeg-turbo, the
// JPEG library of most image tools (vips, ImageMagick, browsers), through
// its libjpeg 6.2 interface: its SIMD code decodes and encodes several
// times faster than Go's image/jpeg, which is most of what composing an
// IIIF region or a thumbnail from a pyramid's tiles costs.
//
// Built with the nolibjpeg tag (as make does on a machine without the
// library's header, jpeglib.h), the same functions use image/jpeg, so a
// build never needs the library, only runs slower without it.
//
// Only baseline and progressive JPEGs in grayscale or YCbCr/RGB are
// decoded by libjpeg-turbo; CMYK and YCCK ones go to image/jpeg. A JPEG
// that libjpeg-turbo reads with a warning (truncated data, a corrupt
// entropy segment) is an error, not an image with gray where the data
// was missing.
package libjpeg

import (
	"errors"
	"fmt"
	"image"
)

// MaxPixels is the largest image Decode accepts when its caller passes
// no limit of its own (64 megapixels, 256 MiB decoded in colour).
const MaxPixels = 64 << 20

// ErrTooLarge is returned for an image of more pixels than allowed,
// before any of it is decoded.
var ErrTooLarge = errors.New("libjpeg: image too large")

// Decode decodes a JPEG held in data: an *image.Gray for a grayscale
// JPEG, an *image.RGBA (opaque) for a colour one, or, for CMYK and YCCK
// JPEGs, what image/jpeg returns. The chroma of a colour JPEG is
// replicated, not interpolated, as image/jpeg does, so both builds give
// the same pixels but for the rounding of their IDCTs. An image of more
// than maxPixels pixels (0: MaxPixels) is refused with ErrTooLarge before
// it is decoded. Cost: one pass over the data and 1 or 4 bytes a pixel.
func Decode(data []byte, maxPixels int) (image.Image, error) {
	return DecodeRect(data, image.Rectangle{}, maxPixels)
}

// DecodeRect decodes the part of a JPEG that r covers (in the image's
// pixels): an image as Decode's whose bounds hold r within the image's,
// at the same coordinates, with the same pixels there as Decode's. The
// rows below r are not decoded at all, those above are skipped without
// their colour conversion, and the columns outside r (beyond libjpeg's
// whole blocks) are neither transformed nor converted; built with
// nolibjpeg, or for a CMYK JPEG, the whole image is decoded. An empty r
// (or one outside the image) decodes the whole image.
func DecodeRect(data []byte, r image.Rectangle, maxPixels int) (image.Image, error) {
	if maxPixels <= 0 {
		maxPixels = MaxPixels
	}
	m, err := decode(data, r, maxPixels)
	if err != nil && r.Empty() {
		return nil, fmt.Errorf("libjpeg: decode: %w", err)
	} else if err != nil {
		return nil, fmt.Errorf("libjpeg: decode %v: %w", r, err)
	}
	return m, nil
}

// Encode encodes m as a baseline JPEG of the quality given (1–100, as
// image/jpeg's), with 4:2:0 chroma for colour, and returns its bytes. An
// *image.Gray is written with one component; an *image.RGBA (its alpha
// ignored) with three; any other image is converted to RGBA first.
func Encode(m image.Image, quality int) ([]byte, error) {
	quality = min(max(quality, 1), 100)
	if r := m.Bounds(); r.Dx() <= 0 || r.Dy() <= 0 || r.Dx() > 65500 || r.Dy() > 65500 {
		return nil, fmt.Errorf("libjpeg: encode an image of %d × %d: a JPEG is 1 to 65,500 pixels a side", r.Dx(), r.Dy())
	}
	b, err := encode(m, quality)
	if err != nil {
		return nil, fmt.Errorf("libjpeg: encode: %w", err)
	}
	return b, nil
}
