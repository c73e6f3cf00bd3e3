package iiif

import (
	"image"
	"image/color"
	"math/rand/v2"
	"strings"
	"testing"
)

// noisy is a w × h image of gradients and noise, compressing as a scan does.
func noisy(w, h int) *image.RGBA {
	r := rand.New(rand.NewPCG(1, 2))
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			n := uint8(r.IntN(40))
			m.SetRGBA(x, y, color.RGBA{uint8(x*200/w) + n, uint8(y*200/h) + n, 120 + n, 255})
		}
	}
	return m
}

// BenchmarkCompose composes a viewer's region (about 860 × 860 pixels
// of a 2,480 × 3,508 scan shown 430 pixels wide) from the pyramid.
func BenchmarkCompose(b *testing.B) {
	info, a := memPyramid(b, noisy(2480, 3508))
	lim := limitsOf(info, testLimits)
	for _, path := range []string{"700,900,860,860/430,/0/default.jpg", "100,100,1200,1700/800,/0/default.jpg", "1000,1000,300,300/300,/0/default.jpg"} {
		b.Run(strings.ReplaceAll(path, "/", "_"), func(b *testing.B) {
			p := strings.SplitN(path, "/", 4)
			q, err := parseImage(info, lim, p[0], p[1], p[2], p[3])
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, _, err := compose(info, a, q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
