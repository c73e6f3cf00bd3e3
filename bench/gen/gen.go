// Package gen generates small, real files of the types the performance lab
// characterizes and stores (PDF, TIFF, JPEG, PNG, patent XML and scanned
// page images). Every generator is deterministic: the same seed and index
// give the same bytes, so runs can be repeated and compared.
package gen

import (
	"image"
	"image/color"
	"math/rand/v2"
	"strings"
)

// Salts keep the generators' random streams apart for the same seed and
// index.
const (
	saltPDF uint64 = (iota + 1) << 56
	saltTIFF
	saltJPEG
	saltPNG
	saltXML
	saltPage
)

func rng(seed uint64, i int, salt uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed^salt, uint64(i)))
}

// vocabulary is the word list generated text is drawn from; upper case
// and plain ASCII so that the bitmap font can draw every word.
var vocabulary = strings.Fields(`APPARATUS METHOD SHELF MARK STORAGE DEVICE
SIGNAL LAYER CARRIER FRAME HOUSING VALVE SENSOR MODULE UNIT CIRCUIT
PROCESSOR MEMORY CHANNEL SURFACE RECORD INDEX CATALOGUE VOLUME PAGE
BINDING SPINE LEAF FOLIO ARCHIVE LIBRARY READER OPTICAL MAGNETIC PAPER
INK PRESS PLATE ROLLER SHAFT GEAR SPRING LEVER BRACKET PANEL DRAWER
RACK BAY SLOT TRAY COVER LID HINGE LATCH CLAMP GUIDE RAIL TRACK WHEEL`)

func words(r *rand.Rand, n int) []string {
	out := make([]string, n)
	for k := range out {
		out[k] = vocabulary[r.IntN(len(vocabulary))]
	}
	return out
}

// sentence returns a capitalised sentence of n words ending in a full stop.
func sentence(r *rand.Rand, n int) string {
	w := words(r, n)
	for k := range w {
		w[k] = strings.ToLower(w[k])
	}
	w[0] = strings.ToUpper(w[0][:1]) + w[0][1:]
	return strings.Join(w, " ") + "."
}

// glyphs is a 5×7 bitmap font: upper-case letters, digits and a little
// punctuation. Lower-case letters are drawn as upper case; characters
// without a glyph are drawn as blanks.
var glyphs = map[rune][7]string{
	'A': {" ### ", "#   #", "#   #", "#####", "#   #", "#   #", "#   #"},
	'B': {"#### ", "#   #", "#   #", "#### ", "#   #", "#   #", "#### "},
	'C': {" ### ", "#   #", "#    ", "#    ", "#    ", "#   #", " ### "},
	'D': {"#### ", "#   #", "#   #", "#   #", "#   #", "#   #", "#### "},
	'E': {"#####", "#    ", "#    ", "#### ", "#    ", "#    ", "#####"},
	'F': {"#####", "#    ", "#    ", "#### ", "#    ", "#    ", "#    "},
	'G': {" ### ", "#   #", "#    ", "# ###", "#   #", "#   #", " ####"},
	'H': {"#   #", "#   #", "#   #", "#####", "#   #", "#   #", "#   #"},
	'I': {" ### ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "},
	'J': {"  ###", "   # ", "   # ", "   # ", "   # ", "#  # ", " ##  "},
	'K': {"#   #", "#  # ", "# #  ", "##   ", "# #  ", "#  # ", "#   #"},
	'L': {"#    ", "#    ", "#    ", "#    ", "#    ", "#    ", "#####"},
	'M': {"#   #", "## ##", "# # #", "# # #", "#   #", "#   #", "#   #"},
	'N': {"#   #", "#   #", "##  #", "# # #", "#  ##", "#   #", "#   #"},
	'O': {" ### ", "#   #", "#   #", "#   #", "#   #", "#   #", " ### "},
	'P': {"#### ", "#   #", "#   #", "#### ", "#    ", "#    ", "#    "},
	'Q': {" ### ", "#   #", "#   #", "#   #", "# # #", "#  # ", " ## #"},
	'R': {"#### ", "#   #", "#   #", "#### ", "# #  ", "#  # ", "#   #"},
	'S': {" ####", "#    ", "#    ", " ### ", "    #", "    #", "#### "},
	'T': {"#####", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  "},
	'U': {"#   #", "#   #", "#   #", "#   #", "#   #", "#   #", " ### "},
	'V': {"#   #", "#   #", "#   #", "#   #", "#   #", " # # ", "  #  "},
	'W': {"#   #", "#   #", "#   #", "# # #", "# # #", "# # #", " # # "},
	'X': {"#   #", "#   #", " # # ", "  #  ", " # # ", "#   #", "#   #"},
	'Y': {"#   #", "#   #", " # # ", "  #  ", "  #  ", "  #  ", "  #  "},
	'Z': {"#####", "    #", "   # ", "  #  ", " #   ", "#    ", "#####"},
	'0': {" ### ", "#   #", "#  ##", "# # #", "##  #", "#   #", " ### "},
	'1': {"  #  ", " ##  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "},
	'2': {" ### ", "#   #", "    #", "   # ", "  #  ", " #   ", "#####"},
	'3': {"#####", "   # ", "  #  ", "   # ", "    #", "#   #", " ### "},
	'4': {"   # ", "  ## ", " # # ", "#  # ", "#####", "   # ", "   # "},
	'5': {"#####", "#    ", "#### ", "    #", "    #", "#   #", " ### "},
	'6': {"  ## ", " #   ", "#    ", "#### ", "#   #", "#   #", " ### "},
	'7': {"#####", "    #", "   # ", "  #  ", " #   ", " #   ", " #   "},
	'8': {" ### ", "#   #", "#   #", " ### ", "#   #", "#   #", " ### "},
	'9': {" ### ", "#   #", "#   #", " ####", "    #", "   # ", " ##  "},
	'.': {"     ", "     ", "     ", "     ", "     ", " ##  ", " ##  "},
	',': {"     ", "     ", "     ", "     ", " ##  ", "  #  ", " #   "},
	'-': {"     ", "     ", "     ", " ### ", "     ", "     ", "     "},
}

// Glyph cell geometry in font units: a glyph is 5×7, advanced by 6 and
// lines by 9.
const (
	glyphW, glyphH   = 5, 7
	advance, leading = 6, 9
)

// drawText draws s at (x, y) (top left) in the bitmap font scaled by
// scale, in colour c, clipped to the image.
func drawText(img *image.Gray, x, y, scale int, s string, c uint8) {
	for _, ch := range strings.ToUpper(s) {
		if g, ok := glyphs[ch]; ok {
			for row, line := range g {
				for col := range glyphW {
					if line[col] == '#' {
						fillRect(img, x+col*scale, y+row*scale, scale, scale, c)
					}
				}
			}
		}
		x += advance * scale
	}
}

// fillRect fills a w×h rectangle at (x, y), clipped to the image.
func fillRect(img *image.Gray, x, y, w, h int, c uint8) {
	r := image.Rect(x, y, x+w, y+h).Intersect(img.Rect)
	for yy := r.Min.Y; yy < r.Max.Y; yy++ {
		row := img.Pix[img.PixOffset(r.Min.X, yy):img.PixOffset(r.Max.X, yy)]
		for k := range row {
			row[k] = c
		}
	}
}

// textPage draws deterministic lines of words in the bitmap font on a
// white w×h grey image, like a small printed page.
func textPage(r *rand.Rand, w, h, scale int) *image.Gray {
	img := image.NewGray(image.Rect(0, 0, w, h))
	fillRect(img, 0, 0, w, h, 0xff)
	margin := advance * scale
	perLine := max(1, (w-2*margin)/(advance*scale))
	for y := margin; y+glyphH*scale <= h-margin; y += leading * scale {
		line := ""
		for {
			word := vocabulary[r.IntN(len(vocabulary))]
			if len(line)+len(word)+1 > perLine {
				break
			}
			line += word + " "
		}
		drawText(img, margin, y, scale, line, 0x10)
	}
	return img
}

// toRGBA tints a grey page with a few deterministic coloured blocks, for
// the colour formats.
func toRGBA(r *rand.Rand, g *image.Gray) *image.RGBA {
	b := g.Rect
	img := image.NewRGBA(b)
	for k, v := range g.Pix {
		img.Pix[4*k], img.Pix[4*k+1], img.Pix[4*k+2], img.Pix[4*k+3] = v, v, v, 0xff
	}
	for range 3 {
		c := color.RGBA{uint8(r.IntN(200)), uint8(r.IntN(200)), uint8(r.IntN(200)), 0xff}
		x0, y0 := r.IntN(max(1, b.Dx())), r.IntN(max(1, b.Dy()))
		rect := image.Rect(x0, y0, x0+b.Dx()/6+1, y0+b.Dy()/8+1).Intersect(b)
		for y := rect.Min.Y; y < rect.Max.Y; y++ {
			for x := rect.Min.X; x < rect.Max.X; x++ {
				if g.GrayAt(x, y).Y > 0x80 {
					img.SetRGBA(x, y, c)
				}
			}
		}
	}
	return img
}

// toPaletted is toRGBA for a paletted image (which PNG encodes several
// times faster than RGBA, without filtering).
func toPaletted(r *rand.Rand, g *image.Gray) *image.Paletted {
	pal := color.Palette{color.Gray{0xff}, color.Gray{0x10}}
	for range 3 {
		pal = append(pal, color.RGBA{uint8(r.IntN(200)), uint8(r.IntN(200)), uint8(r.IntN(200)), 0xff})
	}
	b := g.Rect
	img := image.NewPaletted(b, pal)
	for k, v := range g.Pix {
		if v <= 0x80 {
			img.Pix[k] = 1
		}
	}
	for c := range 3 {
		x0, y0 := r.IntN(max(1, b.Dx())), r.IntN(max(1, b.Dy()))
		rect := image.Rect(x0, y0, x0+b.Dx()/6+1, y0+b.Dy()/8+1).Intersect(b)
		for y := rect.Min.Y; y < rect.Max.Y; y++ {
			row := img.Pix[img.PixOffset(rect.Min.X, y):img.PixOffset(rect.Max.X, y)]
			for k := range row {
				if row[k] == 0 {
					row[k] = uint8(2 + c)
				}
			}
		}
	}
	return img
}
