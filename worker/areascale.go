package worker

import "image"

// areaWeightBits is the fixed-point precision of areaShrink's weights:
// the weights of one output sample sum to 1 << areaWeightBits.
const areaWeightBits = 12

// areaTap is one source sample's share of an output sample.
type areaTap struct {
	src    int    // source index along the axis
	weight uint32 // its share, out of 1 << areaWeightBits
}

// areaTaps returns, for each of d output samples along an axis of s ≥ d
// source samples, the source samples its span covers and the part of
// the span each covers (the first and last may be cut).
func areaTaps(s, d int) [][]areaTap {
	out := make([][]areaTap, d)
	const one = 1 << areaWeightBits
	for i := range d {
		// in units of 1/d source sample, output i spans [i·s, (i+1)·s)
		// and source j spans [j·d, (j+1)·d)
		a, b := i*s, (i+1)*s
		var taps []areaTap
		var sum uint32
		big := 0
		for j := a / d; j*d < b && j < s; j++ {
			lo, hi := max(a, j*d), min(b, (j+1)*d)
			w := uint32(int64(hi-lo) * one / int64(s))
			taps = append(taps, areaTap{j, w})
			sum += w
			if w > taps[big].weight {
				big = len(taps) - 1
			}
		}
		taps[big].weight += one - sum // the rounding's remainder
		out[i] = taps
	}
	return out
}

// areaShrink resizes an image of 8-bit samples, bpp bytes a pixel (1 for
// *image.Gray, 4 for opaque *image.RGBA, whose alpha it sets to 255), from
// sw×sh to dw×dh (each no larger) by area averaging: each output pixel is
// the mean of the source area it covers, in 32-bit fixed point, in two
// passes (along rows, then adding whole rows). That is about
// (sw/dw + 1) + (sh/dh + 1) multiply-adds an output sample, far fewer
// than a Catmull-Rom kernel's and without floating point; for the small
// ratios it is used at (below 2: from a pyramid level to the size just
// under it) it is about as sharp as resampling gets without ringing.
func areaShrink(src []byte, sw, sh, stride, bpp int, dw, dh int) []byte {
	xt, yt := areaTaps(sw, dw), areaTaps(sh, dh)
	// the horizontal taps flattened, each output's from first[x] on
	first := make([]int, dw+1)
	var flat []areaTap
	for x, taps := range xt {
		first[x] = len(flat)
		flat = append(flat, taps...)
	}
	first[dw] = len(flat)
	n := dw * bpp
	// along rows: sh rows of dw pixels, scaled by 1 << areaWeightBits
	// (at most 255 << 12)
	tmp := make([]uint32, sh*n)
	for y := range sh {
		row := src[y*stride : y*stride+sw*bpp]
		t := tmp[y*n : (y+1)*n]
		if bpp == 1 {
			for x := range t {
				var a uint32
				for _, tp := range flat[first[x]:first[x+1]] {
					a += uint32(row[tp.src]) * tp.weight
				}
				t[x] = a
			}
			continue
		}
		for x := 0; x < dw; x++ {
			var r, g, b uint32
			for _, tp := range flat[first[x]:first[x+1]] {
				i := tp.src * 4
				p := row[i : i+3 : i+3]
				r += uint32(p[0]) * tp.weight
				g += uint32(p[1]) * tp.weight
				b += uint32(p[2]) * tp.weight
			}
			o := t[x*4 : x*4+3 : x*4+3]
			o[0], o[1], o[2] = r, g, b
		}
	}
	// down columns, a whole row at a time: at most 255 << 24 plus the
	// rounding, within 32 bits
	dst := make([]byte, dh*n)
	acc := make([]uint32, n)
	const round = 1 << (2*areaWeightBits - 1)
	for y, taps := range yt {
		for i := range acc {
			acc[i] = round
		}
		for _, tp := range taps {
			t := tmp[tp.src*n : (tp.src+1)*n]
			for i, v := range t {
				acc[i] += v * tp.weight
			}
		}
		d := dst[y*n : (y+1)*n]
		for i, a := range acc {
			d[i] = uint8(a >> (2 * areaWeightBits))
		}
		if bpp == 4 {
			for i := 3; i < len(d); i += 4 {
				d[i] = 0xff
			}
		}
	}
	return dst
}

// areaShrinkImage resizes a *image.Gray or *image.RGBA to w×h (each no
// larger) with areaShrink; other images are returned as they are, with
// false.
func areaShrinkImage(m image.Image, w, h int) (image.Image, bool) {
	r := image.Rect(0, 0, w, h)
	switch m := m.(type) {
	case *image.Gray:
		b := m.Bounds()
		return &image.Gray{Pix: areaShrink(m.Pix[m.PixOffset(b.Min.X, b.Min.Y):], b.Dx(), b.Dy(), m.Stride, 1, w, h), Stride: w, Rect: r}, true
	case *image.RGBA:
		b := m.Bounds()
		return &image.RGBA{Pix: areaShrink(m.Pix[m.PixOffset(b.Min.X, b.Min.Y):], b.Dx(), b.Dy(), m.Stride, 4, w, h), Stride: 4 * w, Rect: r}, true
	}
	return m, false
}
