package iiif

import (
	"image"
	"testing"

	"golang.org/x/image/draw"
)

// TestBilinearAsApproxBiLinear scales images of scans down (by the
// factors between 1 and 2 a composed image uses), up, and by exactly one,
// from subimages too, and compares each pixel with x/image/draw's
// ApproxBiLinear: the same but for rounding.
func TestBilinearAsApproxBiLinear(t *testing.T) {
	src := noisy(301, 211)
	for _, c := range []struct {
		from image.Rectangle
		w, h int
	}{
		{src.Rect, 200, 150}, {src.Rect, 151, 106}, {src.Rect, 300, 210}, {src.Rect, 301, 211},
		{src.Rect, 640, 400}, {src.Rect, 1, 1}, {src.Rect, 17, 200},
		{image.Rect(13, 7, 200, 190), 100, 100}, {image.Rect(0, 0, 1, 1), 5, 3}, {image.Rect(299, 0, 301, 211), 1, 150},
	} {
		from := src.SubImage(c.from).(*image.RGBA)
		got := image.NewRGBA(image.Rect(0, 0, c.w, c.h))
		bilinear(got, from)
		want := image.NewRGBA(image.Rect(0, 0, c.w, c.h))
		draw.ApproxBiLinear.Scale(want, want.Rect, from, from.Rect, draw.Src, nil)
		most := 0
		for i := range got.Pix {
			d := int(got.Pix[i]) - int(want.Pix[i])
			most = max(most, d, -d)
		}
		if most > 2 {
			t.Errorf("%v to %d × %d: differs from ApproxBiLinear by up to %d", c.from, c.w, c.h, most)
		}
	}
}

// BenchmarkBilinear scales an 860 × 860 region to 430 × 430 and 600 × 600.
func BenchmarkBilinear(b *testing.B) {
	src := noisy(860, 860)
	for _, side := range []int{430, 600} {
		dst := image.NewRGBA(image.Rect(0, 0, side, side))
		b.Run("ours", func(b *testing.B) {
			for b.Loop() {
				bilinear(dst, src)
			}
		})
		b.Run("x-image", func(b *testing.B) {
			for b.Loop() {
				draw.ApproxBiLinear.Scale(dst, dst.Rect, src, src.Rect, draw.Src, nil)
			}
		})
	}
}
