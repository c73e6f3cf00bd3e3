package gen

import (
	"bytes"
	"image"
	"image/jpeg"
	"image/png"
	"strings"
)

// jfifAPP0 is a JFIF 1.01 APP0 segment (no density, no thumbnail). Go's
// image/jpeg writes none, and format identifiers (PRONOM) then see a raw
// JPEG (fmt/41) instead of JFIF.
var jfifAPP0 = []byte{0xff, 0xe0, 0x00, 0x10, 'J', 'F', 'I', 'F', 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00}

// JPEG returns a baseline JFIF JPEG (quality 75) of a w×h colour page of
// deterministic blocky text with a few coloured blocks.
func JPEG(seed uint64, i, w, h int) []byte {
	r := rng(seed, i, saltJPEG)
	img := toRGBA(r, textPage(r, w, h, max(1, min(w, h)/200)))
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 75}); err != nil {
		panic(err) // only fails on writer errors; bytes.Buffer has none
	}
	out := b.Bytes()
	// After SOI (FF D8), insert APP0.
	return append(append(append(make([]byte, 0, len(out)+len(jfifAPP0)), out[:2]...), jfifAPP0...), out[2:]...)
}

// PNG returns a colour (8-bit palette) PNG of a w×h page of
// deterministic blocky text with a few coloured blocks.
func PNG(seed uint64, i, w, h int) []byte {
	r := rng(seed, i, saltPNG)
	return encodePNG(toPaletted(r, textPage(r, w, h, max(1, min(w, h)/200))))
}

// Page image size in pixels (about A4 at 120 dpi).
const (
	PageWidth  = 1000
	PageHeight = 1400
)

// Page image text layout: glyphs are 5×7 cells of pageScale pixels.
const (
	pageScale  = 8
	pageMargin = 60
)

// PageImage returns a scanned-style page: a PageWidth×PageHeight greyscale
// PNG with only black and white pixels, carrying words in large upper-case
// bitmap letters (40×56 pixels), wrapped into lines, for OCR to read back.
// Letters A–Z, digits and . , - are drawn; lower case is drawn as upper
// case and other characters as blanks. Words that do not fit on the page
// are dropped. A few small specks and a slight per-line offset, both
// deterministic, make it look scanned without hurting legibility.
func PageImage(seed uint64, i int, words []string) []byte {
	r := rng(seed, i, saltPage)
	img := image.NewGray(image.Rect(0, 0, PageWidth, PageHeight))
	fillRect(img, 0, 0, PageWidth, PageHeight, 0xff)
	perLine := (PageWidth - 2*pageMargin) / (advance * pageScale)
	var lines []string
	line := ""
	for _, w := range words {
		w = strings.ToUpper(w)
		if len(w) > perLine {
			w = w[:perLine]
		}
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) <= perLine:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	y := pageMargin
	for _, l := range lines {
		if y+glyphH*pageScale > PageHeight-pageMargin {
			break
		}
		drawText(img, pageMargin+r.IntN(9)-4, y+r.IntN(5)-2, pageScale, l, 0)
		y += leading * pageScale
	}
	for range 40 {
		fillRect(img, r.IntN(PageWidth), r.IntN(PageHeight), 1+r.IntN(2), 1+r.IntN(2), 0)
	}
	return encodePNG(img)
}

func encodePNG(img image.Image) []byte {
	var b bytes.Buffer
	e := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := e.Encode(&b, img); err != nil {
		panic(err) // only fails on writer errors; bytes.Buffer has none
	}
	return b.Bytes()
}
