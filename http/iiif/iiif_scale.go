package iiif

import "image"

// bilinear scales src into dst (both RGBA, each from its own Min) by
// bilinear interpolation: each output pixel's centre is mapped into the
// source and weighs the four pixels around it, as x/image/draw's
// ApproxBiLinear does, in 8-bit fixed point and two passes (each source
// row used is interpolated across once, then each output row from the
// two rows around it), several times faster than the generic one.
//
// Cost: about three multiplications a channel per output pixel plus one
// per channel of each source row used; 2 × 8 bytes × dst's width of
// memory.
func bilinear(dst, src *image.RGBA) {
	dw, dh := dst.Rect.Dx(), dst.Rect.Dy()
	sw, sh := src.Rect.Dx(), src.Rect.Dy()
	if dw <= 0 || dh <= 0 || sw <= 0 || sh <= 0 {
		return
	}
	// per output column: the byte offsets of the two source pixels and
	// the weight of the second (0–256)
	x0 := make([]int, dw)
	x1 := make([]int, dw)
	xw := make([]uint32, dw)
	for x := range dw {
		s, w := tap(x, dw, sw)
		x0[x], x1[x], xw[x] = 4*int(s), 4*min(int(s)+1, sw-1), w
	}
	// two source rows interpolated across, by source row
	rows := [2][]uint32{make([]uint32, 4*dw), make([]uint32, 4*dw)}
	have := [2]int32{-1, -1}
	across := func(sy int32) []uint32 {
		for i := range 2 {
			if have[i] == sy {
				return rows[i]
			}
		}
		// replace the row of the lower index: rows only move down
		i := 0
		if have[1] < have[0] {
			i = 1
		}
		have[i] = sy
		out := rows[i]
		off := src.PixOffset(src.Rect.Min.X, src.Rect.Min.Y+int(sy))
		line := src.Pix[off : off+4*sw]
		for x, w1 := range xw {
			a := line[x0[x] : x0[x]+4 : x0[x]+4]
			b := line[x1[x] : x1[x]+4 : x1[x]+4]
			w0 := 256 - w1
			o := out[4*x : 4*x+4 : 4*x+4]
			o[0] = uint32(a[0])*w0 + uint32(b[0])*w1
			o[1] = uint32(a[1])*w0 + uint32(b[1])*w1
			o[2] = uint32(a[2])*w0 + uint32(b[2])*w1
			o[3] = uint32(a[3])*w0 + uint32(b[3])*w1
		}
		return out
	}
	for y := range dh {
		sy, w1 := tap(y, dh, sh)
		top := across(sy)
		bottom := top
		if int(sy)+1 < sh && w1 > 0 {
			bottom = across(sy + 1)
		}
		w0 := 256 - w1
		off := dst.PixOffset(dst.Rect.Min.X, dst.Rect.Min.Y+y)
		o := dst.Pix[off : off+4*dw]
		top, bottom = top[:len(o)], bottom[:len(o)]
		for i := range o {
			o[i] = uint8((top[i]*w0 + bottom[i]*w1 + 1<<15) >> 16)
		}
	}
}

// tap maps output pixel d of n onto a source of m pixels: the first of
// the two source pixels around its centre and the weight (0–256) of the
// second; clamped at the edges.
func tap(d, n, m int) (int32, uint32) {
	// the centre's position in the source, in 256ths of a pixel, less
	// half a pixel: ((d + 1/2) × m/n − 1/2) × 256
	p := (int64(2*d+1)*int64(m)*256 - int64(n)*256) / int64(2*n)
	if p < 0 {
		return 0, 0
	}
	s := int32(p >> 8)
	if int(s) >= m-1 {
		return int32(m - 1), 0
	}
	return s, uint32(p & 255)
}
