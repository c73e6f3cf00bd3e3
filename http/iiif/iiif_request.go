package iiif

// This file parses IIIF Image API 3.0 image requests
// ({region}/{size}/{rotation}/{quality}.{format}) against a page's tile
// pyramid (shelfmark.TileInfo), at level 2: regions full, square, x,y,w,h
// and pct:x,y,w,h; sizes max, w,, ,h, pct:n, w,h and !w,h (with ^ only
// where no upscaling is needed); rotations by multiples of 90 degrees,
// mirrored or not; qualities default, color, gray and bitonal; formats jpg
// and png. What the spec calls an error is answered as it says: bad
// syntax, a region outside the image, a zero size, a size larger than the
// region without ^, a size past the service's limits, an arbitrary
// rotation and an unsupported quality or format are 400; a ^ size that
// needs upscaling, which this service does not do, is 501.

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// imageRect is a region in full-image pixels.
type imageRect struct{ x, y, w, h int }

// imageLimits are the largest image a service composes, as its info.json
// states them (maxWidth, maxHeight, maxArea).
type imageLimits struct{ maxWidth, maxHeight, maxArea int }

// fits reports whether a w × h image is within the limits.
func (l imageLimits) fits(w, h int) bool {
	return w <= l.maxWidth && h <= l.maxHeight && int64(w)*int64(h) <= int64(l.maxArea)
}

// fit scales a w × h region down, keeping its aspect ratio, to the largest
// size within the limits (itself if it fits).
func (l imageLimits) fit(w, h int) (int, int) {
	if l.fits(w, h) {
		return w, h
	}
	s := min(float64(l.maxWidth)/float64(w), float64(l.maxHeight)/float64(h), math.Sqrt(float64(l.maxArea)/(float64(w)*float64(h))))
	fw, fh := max(1, int(math.Round(float64(w)*s))), max(1, int(math.Round(float64(h)*s)))
	for !l.fits(fw, fh) { // rounding up past a limit: one pixel less
		if fw*h > fh*w {
			fw--
		} else {
			fh--
		}
		fw, fh = max(fw, 1), max(fh, 1)
		if fw == 1 && fh == 1 {
			break
		}
	}
	return fw, fh
}

// imageRequest is an image request resolved against a pyramid: the
// region, the output size before rotation, the rotation, quality and
// format.
type imageRequest struct {
	region imageRect
	// sizes are the output sizes the request may mean, the first the one
	// composed; the others are the other rounding of a computed side, by
	// which a request still finds a stored tile.
	sizes [][2]int
	// max: the size is the largest the region is served at
	max    bool
	mirror bool
	// degrees of clockwise rotation: 0, 90, 180, 270 or 360
	degrees int
	// quality as asked ("default", "color", "gray", "bitonal") and format
	// ("jpg", "png")
	quality, format string
}

// whole reports whether the region is the full image.
func (q *imageRequest) whole(info *shelfmark.TileInfo) bool {
	return q.region == imageRect{0, 0, info.Width, info.Height}
}

// canonical is the request in the spec's canonical form (region full or
// x,y,w,h; size max or w,h; rotation an integer after "!" when mirrored;
// the quality as asked), relative to the service's id.
func (q *imageRequest) canonical(info *shelfmark.TileInfo) string {
	region := "full"
	if !q.whole(info) {
		region = fmt.Sprintf("%d,%d,%d,%d", q.region.x, q.region.y, q.region.w, q.region.h)
	}
	size := "max"
	if !q.max {
		size = fmt.Sprintf("%d,%d", q.sizes[0][0], q.sizes[0][1])
	}
	rot := strconv.Itoa(q.degrees)
	if q.mirror {
		rot = "!" + rot
	}
	return region + "/" + size + "/" + rot + "/" + q.quality + "." + q.format
}

// badImage is a 400 answer to an image request.
func badImage(format string, args ...any) error {
	return shelfmark.Errorf(shelfmark.EINVALID, format, args...)
}

// noUpscaling is the 501 answer to a size with ^ that needs upscaling.
func noUpscaling(size string) error {
	return shelfmark.Errorf(kit.ENOTIMPLEMENTED, "Size %q needs upscaling, which this service does not offer (its info.json lists no sizeUpscaling).", size)
}

// limitsOf are the limits a service states for a pyramid: the server's,
// narrowed to the largest listed size when it is smaller than the full
// image (that size is what max of the full image serves, from its file),
// and widened to cover every listed size and tile, which the spec requires
// to be within them.
func limitsOf(info *shelfmark.TileInfo, server imageLimits) imageLimits {
	l := server
	if big := largestSize(info); big != nil && (big.Width < info.Width || big.Height < info.Height) {
		l.maxWidth, l.maxHeight = min(l.maxWidth, big.Width), min(l.maxHeight, big.Height)
	}
	for _, s := range info.Sizes {
		l.maxWidth, l.maxHeight = max(l.maxWidth, s.Width), max(l.maxHeight, s.Height)
		l.maxArea = max(l.maxArea, s.Width*s.Height)
	}
	for _, t := range info.Tiles {
		th := t.Height
		if th == 0 {
			th = t.Width
		}
		l.maxWidth, l.maxHeight = max(l.maxWidth, t.Width), max(l.maxHeight, th)
		l.maxArea = max(l.maxArea, t.Width*th)
	}
	return l
}

// parseImage resolves an image request against a pyramid and the limits
// limitsOf states for it.
func parseImage(info *shelfmark.TileInfo, lim imageLimits, region, size, rotation, file string) (*imageRequest, error) {
	q := &imageRequest{}
	var err error
	if q.quality, q.format, err = parseQualityFormat(file); err != nil {
		return nil, err
	}
	if q.mirror, q.degrees, err = parseRotation(rotation); err != nil {
		return nil, err
	}
	if q.region, err = parseRegion(info, region); err != nil {
		return nil, err
	}
	if err := parseSize(info, lim, q, size); err != nil {
		return nil, err
	}
	return q, nil
}

// parseQualityFormat reads "{quality}.{format}".
func parseQualityFormat(file string) (string, string, error) {
	quality, format, ok := strings.Cut(file, ".")
	if !ok || quality == "" || format == "" {
		return "", "", badImage("%q is not {quality}.{format}, such as default.jpg.", file)
	}
	switch quality {
	case "default", "color", "gray", "bitonal":
	default:
		return "", "", badImage("Quality %q is not one of default, color, gray or bitonal.", quality)
	}
	switch format {
	case "jpg", "png":
	case "tif", "gif", "jp2", "pdf", "webp":
		return "", "", badImage("Format %q is not offered: this service serves jpg and png.", format)
	default:
		return "", "", badImage("Format %q is not an Image API format (jpg, tif, png, gif, jp2, pdf, webp).", format)
	}
	return quality, format, nil
}

// decimal parses a non-negative decimal number as the spec writes them:
// digits, optionally a point and more digits (at most 12 characters).
func decimal(s string) (float64, bool) {
	whole, frac, dot := strings.Cut(s, ".")
	if s == "" || len(s) > 12 || whole == "" || (dot && frac == "") ||
		strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil
}

// parseRotation reads the rotation: a number of degrees from 0 to 360,
// optionally after "!" (mirroring). Multiples of 90 are served; other
// angles are valid but not offered.
func parseRotation(rotation string) (mirror bool, degrees int, err error) {
	r := strings.TrimPrefix(rotation, "!")
	deg, ok := decimal(r)
	if !ok || deg > 360 {
		return false, 0, badImage("Rotation %q is not a number of degrees from 0 to 360, optionally after \"!\" (mirroring).", rotation)
	}
	if deg != math.Trunc(deg) || int(deg)%90 != 0 {
		return false, 0, badImage("Rotation %q is not offered: this service rotates by 0, 90, 180 or 270 degrees only (no rotationArbitrary).", rotation)
	}
	return rotation != r, int(deg), nil
}

// parseRegion reads the region: full, square (centred on the longer
// side), x,y,w,h in pixels or pct:x,y,w,h in percent of the full image,
// clipped to the image.
func parseRegion(info *shelfmark.TileInfo, region string) (imageRect, error) {
	W, H := info.Width, info.Height
	var r imageRect
	switch {
	case region == "full":
		return imageRect{0, 0, W, H}, nil
	case region == "square":
		side := min(W, H)
		return imageRect{(W - side) / 2, (H - side) / 2, side, side}, nil
	case strings.HasPrefix(region, "pct:"):
		parts := strings.Split(strings.TrimPrefix(region, "pct:"), ",")
		if len(parts) != 4 {
			return imageRect{}, badImage("Region %q is not full, square, x,y,w,h or pct:x,y,w,h.", region)
		}
		var v [4]float64
		for i, p := range parts {
			f, ok := decimal(p)
			if !ok {
				return imageRect{}, badImage("Region %q is not full, square, x,y,w,h or pct:x,y,w,h.", region)
			}
			v[i] = f
		}
		px := func(pct float64, side int) int { return int(math.Round(pct * float64(side) / 100)) }
		// the far edge is rounded, not the width, so that adjacent regions meet
		x, y := px(v[0], W), px(v[1], H)
		r = imageRect{x, y, px(v[0]+v[2], W) - x, px(v[1]+v[3], H) - y}
		if v[2] > 0 && r.w == 0 && x < W {
			r.w = 1 // a sliver narrower than a pixel is one pixel
		}
		if v[3] > 0 && r.h == 0 && y < H {
			r.h = 1
		}
	default:
		v, ok := ints(region, 4)
		if !ok {
			return imageRect{}, badImage("Region %q is not full, square, x,y,w,h or pct:x,y,w,h.", region)
		}
		r = imageRect{v[0], v[1], v[2], v[3]}
	}
	if r.w <= 0 || r.h <= 0 {
		return imageRect{}, badImage("Region %q has no width or height.", region)
	}
	if r.x >= W || r.y >= H {
		return imageRect{}, badImage("Region %q lies outside the image, which is %d × %d pixels.", region, W, H)
	}
	r.w = min(r.w, W-r.x)
	r.h = min(r.h, H-r.y)
	return r, nil
}

// scaled is side×num/den rounded, and the other rounding when it differs
// (at least 1).
func scaled(num, den, side int) []int {
	exact := int64(side) * int64(num)
	lo := int(exact / int64(den))
	if int64(lo)*int64(den) == exact {
		return []int{max(lo, 1)}
	}
	if 2*(exact-int64(lo)*int64(den)) >= int64(den) { // rounds up
		return []int{lo + 1, max(lo, 1)}
	}
	return []int{max(lo, 1), lo + 1}
}

// maxSize is the size max serves a region at: the region, within the
// limits; for the full image, the largest listed size when the limits
// make it so (rounding aside), so that it is served from its file.
func maxSize(info *shelfmark.TileInfo, lim imageLimits, r imageRect) (int, int) {
	w, h := lim.fit(r.w, r.h)
	if big := largestSize(info); big != nil && r == (imageRect{0, 0, info.Width, info.Height}) &&
		abs(big.Width-w) <= 1 && abs(big.Height-h) <= 1 && lim.fits(big.Width, big.Height) {
		return big.Width, big.Height
	}
	return w, h
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// parseSize reads the size of q's region into q.sizes and q.max.
func parseSize(info *shelfmark.TileInfo, lim imageLimits, q *imageRequest, size string) error {
	r := q.region
	up := strings.HasPrefix(size, "^")
	body := strings.TrimPrefix(size, "^")
	mw, mh := maxSize(info, lim, r)
	bad := func() error {
		return badImage("Size %q is not max, w,, ,h, pct:n, w,h or !w,h (optionally after ^).", size)
	}
	switch {
	case body == "max":
		if up && (mw > r.w || mh > r.h || (r.w < lim.maxWidth && r.h < lim.maxHeight && r.w*r.h < lim.maxArea)) {
			// ^max scales the region up to the limits
			return noUpscaling(size)
		}
		q.sizes, q.max = [][2]int{{mw, mh}}, true
		return nil
	case strings.HasPrefix(body, "pct:"):
		n, ok := decimal(strings.TrimPrefix(body, "pct:"))
		switch {
		case !ok:
			return bad()
		case n > 100 && !up:
			return badImage("Size %q is larger than the region (%d × %d pixels): only a size after ^ may be, and this service does not upscale.", size, r.w, r.h)
		case n > 100:
			return noUpscaling(size)
		}
		w, h := int(math.Round(float64(r.w)*n/100)), int(math.Round(float64(r.h)*n/100))
		q.sizes = [][2]int{{w, h}}
	default:
		fit := strings.HasPrefix(body, "!")
		ws, hs, ok := strings.Cut(strings.TrimPrefix(body, "!"), ",")
		if !ok {
			return bad()
		}
		w, werr := dimension(ws)
		h, herr := dimension(hs)
		switch {
		case werr != nil || herr != nil || (ws == "" && hs == "") || (fit && (ws == "" || hs == "")):
			return bad()
		case (ws != "" && w == 0) || (hs != "" && h == 0):
			return badImage("Size %q asks for an image without width or height.", size)
		}
		switch {
		case fit:
			// as large as possible within w × h and the limits, keeping
			// the aspect ratio
			var c [][2]int
			if int64(w)*int64(r.h) <= int64(h)*int64(r.w) { // width binds
				for _, y := range scaled(w, r.w, r.h) {
					c = append(c, [2]int{w, y})
				}
			} else {
				for _, x := range scaled(h, r.h, r.w) {
					c = append(c, [2]int{x, h})
				}
			}
			if c[0][0] > r.w || c[0][1] > r.h {
				if !up {
					return badImage("Size %q is larger than the region (%d × %d pixels): only a size after ^ may be, and this service does not upscale.", size, r.w, r.h)
				}
				return noUpscaling(size)
			}
			if !lim.fits(c[0][0], c[0][1]) {
				fw, fh := lim.fit(r.w, r.h)
				c = [][2]int{{fw, fh}}
			}
			q.sizes = c
		case hs == "":
			for _, y := range scaled(w, r.w, r.h) {
				q.sizes = append(q.sizes, [2]int{w, y})
			}
		case ws == "":
			for _, x := range scaled(h, r.h, r.w) {
				q.sizes = append(q.sizes, [2]int{x, h})
			}
		default:
			q.sizes = [][2]int{{w, h}}
		}
	}
	w, h := q.sizes[0][0], q.sizes[0][1]
	switch {
	case w == 0 || h == 0:
		return badImage("Size %q asks for an image without width or height.", size)
	case (w > r.w || h > r.h) && !up:
		return badImage("Size %q is larger than the region (%d × %d pixels): only a size after ^ may be, and this service does not upscale.", size, r.w, r.h)
	case w > r.w || h > r.h:
		return noUpscaling(size)
	case !lim.fits(w, h):
		return badImage("Size %q is %d × %d pixels, larger than this service serves (maxWidth %d, maxHeight %d, maxArea %d in its info.json).",
			size, w, h, lim.maxWidth, lim.maxHeight, lim.maxArea)
	}
	q.max = w == mw && h == mh
	return nil
}

// largestSize is the largest whole-image size listed, or nil.
func largestSize(info *shelfmark.TileInfo) *shelfmark.TileSize {
	var big *shelfmark.TileSize
	for i := range info.Sizes {
		if big == nil || info.Sizes[i].Width > big.Width {
			big = &info.Sizes[i]
		}
	}
	return big
}

// dimension parses a size's side: "" is 0 (absent); otherwise decimal
// digits of a value that fits in 8 digits.
func dimension(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	if len(s) > 8 || strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("not a pixel count: %q", s)
	}
	return strconv.Atoi(s)
}

// ints parses n comma-separated non-negative integers (at most 8 digits
// each).
func ints(s string, n int) ([]int, bool) {
	parts := strings.Split(s, ",")
	if len(parts) != n {
		return nil, false
	}
	out := make([]int, n)
	for i, p := range parts {
		if p == "" {
			return nil, false
		}
		v, err := dimension(p)
		if err != nil {
			return nil, false
		}
		out[i] = v
	}
	return out, true
}
