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
// passes (each source row averaged along itself once, then the rows an
// output row covers added with their weights). That is about
// (sw/dw + 1) + (sh/dh + 1) multiply-adds an output sample, far fewer
// than a Catmull-Rom kernel's and without floating point; for the small
// ratios it is used at (below 2: from a pyramid level to the size just
// under it) it is about as sharp as resampling gets without ringing.
// Besides the output it keeps two rows of dw samples (three a pixel in
// colour: the alpha is not averaged); a shrink by less than half, three
// rows, in areaShrink3.
func areaShrink(src []byte, sw, sh, stride, bpp int, dw, dh int) []byte {
	xt, yt := areaTaps(sw, dw), areaTaps(sh, dh)
	if most(xt) <= 3 && most(yt) <= 3 {
		return areaShrink3(src, sw, stride, bpp, dw, dh, xt, yt)
	}
	// the horizontal taps flattened, each output's from first[x] on
	first := make([]int, dw+1)
	var flat []areaTap
	for x, taps := range xt {
		first[x] = len(flat)
		flat = append(flat, taps...)
	}
	first[dw] = len(flat)
	lanes := 1 // samples a pixel averaged
	if bpp == 4 {
		lanes = 3
	}
	n := dw * lanes
	// along a row: dw pixels, scaled by 1 << areaWeightBits (at most
	// 255 << 12); the row last averaged is kept, as an output row's last
	// source row may be the next one's first
	row := make([]uint32, n)
	last := -1
	along := func(y int) {
		if y == last {
			return
		}
		last = y
		line := src[y*stride : y*stride+sw*bpp]
		if bpp == 1 {
			for x := range row {
				var a uint32
				for _, tp := range flat[first[x]:first[x+1]] {
					a += uint32(line[tp.src]) * tp.weight
				}
				row[x] = a
			}
			return
		}
		for x := 0; x < dw; x++ {
			var r, g, b uint32
			for _, tp := range flat[first[x]:first[x+1]] {
				i := tp.src * 4
				p := line[i : i+3 : i+3]
				r += uint32(p[0]) * tp.weight
				g += uint32(p[1]) * tp.weight
				b += uint32(p[2]) * tp.weight
			}
			o := row[x*3 : x*3+3 : x*3+3]
			o[0], o[1], o[2] = r, g, b
		}
	}
	// down columns: at most 255 << 24 plus the rounding, within 32 bits
	dst := make([]byte, dh*dw*bpp)
	acc := make([]uint32, n)
	const round = 1 << (2*areaWeightBits - 1)
	for y, taps := range yt {
		for i := range acc {
			acc[i] = round
		}
		for _, tp := range taps {
			along(tp.src)
			w := tp.weight
			for i, v := range row {
				acc[i] += v * w
			}
		}
		d := dst[y*dw*bpp : (y+1)*dw*bpp]
		if bpp == 1 {
			for i, a := range acc {
				d[i] = uint8(a >> (2 * areaWeightBits))
			}
			continue
		}
		for x := range dw {
			a := acc[x*3 : x*3+3 : x*3+3]
			o := d[x*4 : x*4+4 : x*4+4]
			o[0] = uint8(a[0] >> (2 * areaWeightBits))
			o[1] = uint8(a[1] >> (2 * areaWeightBits))
			o[2] = uint8(a[2] >> (2 * areaWeightBits))
			o[3] = 0xff
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

// most is the largest number of taps an output sample has.
func most(taps [][]areaTap) int {
	n := 0
	for _, t := range taps {
		n = max(n, len(t))
	}
	return n
}

// tap3 is an output sample's taps when it has at most three: the byte
// offsets of their source pixels and their weights, an absent tap
// weighing 0 at the first's offset.
type tap3 struct {
	off [3]int
	w   [3]uint32
}

// taps3 makes tap3s of taps (each of at most three), offsets in units of
// unit bytes.
func taps3(taps [][]areaTap, unit int) []tap3 {
	out := make([]tap3, len(taps))
	for i, t := range taps {
		for k := range 3 {
			if k < len(t) {
				out[i].off[k], out[i].w[k] = t[k].src*unit, t[k].weight
			} else {
				out[i].off[k] = t[0].src * unit
			}
		}
	}
	return out
}

// areaShrink3 is areaShrink when no output sample takes more than three
// source samples on either axis (a shrink by less than half, as from a
// pyramid level to the size just under it): each sample is three
// multiply-adds along its row and three down its column, in one pass
// each, with no inner loop over taps; the three source rows an output row
// takes are kept averaged along (3 × dw samples, three a pixel in colour).
func areaShrink3(src []byte, sw, stride, bpp int, dw, dh int, xt, yt [][]areaTap) []byte {
	lanes := 1 // samples a pixel averaged
	if bpp == 4 {
		lanes = 3
	}
	n := dw * lanes
	xs := taps3(xt, bpp)
	var rows [3][]uint32
	have := [3]int{-1, -1, -1}
	for i := range rows {
		rows[i] = make([]uint32, n)
	}
	// along returns source row y averaged along, from the kept rows or
	// into the one of the lowest row (rows are asked for in order)
	along := func(y int) []uint32 {
		low := 0
		for i, h := range have {
			if h == y {
				return rows[i]
			}
			if h < have[low] {
				low = i
			}
		}
		have[low] = y
		row := rows[low]
		line := src[y*stride : y*stride+sw*bpp]
		if bpp == 1 {
			for x := range row {
				t := &xs[x]
				row[x] = uint32(line[t.off[0]])*t.w[0] + uint32(line[t.off[1]])*t.w[1] + uint32(line[t.off[2]])*t.w[2]
			}
			return row
		}
		for x := range dw {
			t := &xs[x]
			a := line[t.off[0] : t.off[0]+3 : t.off[0]+3]
			b := line[t.off[1] : t.off[1]+3 : t.off[1]+3]
			c := line[t.off[2] : t.off[2]+3 : t.off[2]+3]
			o := row[x*3 : x*3+3 : x*3+3]
			o[0] = uint32(a[0])*t.w[0] + uint32(b[0])*t.w[1] + uint32(c[0])*t.w[2]
			o[1] = uint32(a[1])*t.w[0] + uint32(b[1])*t.w[1] + uint32(c[1])*t.w[2]
			o[2] = uint32(a[2])*t.w[0] + uint32(b[2])*t.w[1] + uint32(c[2])*t.w[2]
		}
		return row
	}
	dst := make([]byte, dh*dw*bpp)
	const round = 1 << (2*areaWeightBits - 1)
	for y, taps := range yt {
		var r [3][]uint32
		var w [3]uint32
		for k := range 3 {
			if k < len(taps) {
				r[k], w[k] = along(taps[k].src), taps[k].weight
			} else {
				r[k] = r[0]
			}
		}
		r0, r1, r2 := r[0][:n], r[1][:n], r[2][:n]
		d := dst[y*dw*bpp : (y+1)*dw*bpp]
		if bpp == 1 {
			d = d[:n]
			for i := range d {
				d[i] = uint8((r0[i]*w[0] + r1[i]*w[1] + r2[i]*w[2] + round) >> (2 * areaWeightBits))
			}
			continue
		}
		for x := range dw {
			i := x * 3
			o := d[x*4 : x*4+4 : x*4+4]
			o[0] = uint8((r0[i]*w[0] + r1[i]*w[1] + r2[i]*w[2] + round) >> (2 * areaWeightBits))
			o[1] = uint8((r0[i+1]*w[0] + r1[i+1]*w[1] + r2[i+1]*w[2] + round) >> (2 * areaWeightBits))
			o[2] = uint8((r0[i+2]*w[0] + r1[i+2]*w[1] + r2[i+2]*w[2] + round) >> (2 * areaWeightBits))
			o[3] = 0xff
		}
	}
	return dst
}
