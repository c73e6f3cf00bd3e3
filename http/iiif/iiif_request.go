package iiif

// This file parses IIIF Image API 3.0 image requests
// ({region}/{size}/{rotation}/{quality}.{format}) against a page's tile
// pyramid (shelfmark.TileInfo). The service is level 0: it serves the
// tiles the pyramid holds and the whole-image sizes its info.json lists,
// in the default quality as JPEG, unrotated. A request for anything else
// is answered 400 with what is wrong: bad syntax, a region outside the
// image, a zero or oversized size, or a feature level 0 does not offer.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// imageTarget is what an image request resolves to: an archive entry (a
// tile) or the derivative file of a use (a listed size).
type imageTarget struct {
	entry string
	use   string
}

// imageRect is a region in full-image pixels.
type imageRect struct{ x, y, w, h int }

// badImage is a 400 answer to an image request.
func badImage(format string, args ...any) error {
	return shelfmark.Errorf(shelfmark.EINVALID, format, args...)
}

// resolveImage resolves an image request against a pyramid whose archive
// holds the entries has reports.
func resolveImage(info *shelfmark.TileInfo, has func(entry string) bool, region, size, rotation, file string) (imageTarget, error) {
	if err := checkQualityFormat(file); err != nil {
		return imageTarget{}, err
	}
	if err := checkRotation(rotation); err != nil {
		return imageTarget{}, err
	}
	rect, err := parseRegion(info, region)
	if err != nil {
		return imageTarget{}, err
	}
	cands, err := parseSize(info, rect, size)
	if err != nil {
		return imageTarget{}, err
	}
	whole := rect == imageRect{0, 0, info.Width, info.Height}
	for _, c := range cands {
		if whole {
			for _, s := range info.Sizes {
				if s.Width == c[0] && s.Height == c[1] {
					return imageTarget{use: s.Use}, nil
				}
			}
		}
		entry := fmt.Sprintf("%d,%d,%d,%d/%d,%d/0/default.jpg", rect.x, rect.y, rect.w, rect.h, c[0], c[1])
		if has(entry) {
			return imageTarget{entry: entry}, nil
		}
	}
	return imageTarget{}, badImage("This image service is level 0: it serves only the tiles and sizes its info.json lists, and region %q at size %q is neither.", region, size)
}

// checkQualityFormat checks "{quality}.{format}": default JPEG only.
func checkQualityFormat(file string) error {
	quality, format, ok := strings.Cut(file, ".")
	if !ok || quality == "" || format == "" {
		return badImage("%q is not {quality}.{format}, such as default.jpg.", file)
	}
	switch quality {
	case "default":
	case "color", "gray", "bitonal":
		return badImage("Quality %q is not offered: this level 0 service serves the default quality only.", quality)
	default:
		return badImage("Quality %q is not one of default, color, gray or bitonal.", quality)
	}
	switch format {
	case "jpg":
	case "tif", "png", "gif", "jp2", "pdf", "webp":
		return badImage("Format %q is not offered: this level 0 service serves jpg only.", format)
	default:
		return badImage("Format %q is not an Image API format (jpg, tif, png, gif, jp2, pdf, webp).", format)
	}
	return nil
}

// checkRotation checks the rotation: "0" only; other valid values are
// not offered, and anything else is malformed.
func checkRotation(rotation string) error {
	r := strings.TrimPrefix(rotation, "!")
	deg, err := strconv.ParseFloat(r, 64)
	if err != nil || r == "" || strings.ContainsAny(r, "eE+-xXnN") || deg < 0 || deg > 360 {
		return badImage("Rotation %q is not a number of degrees from 0 to 360, optionally after \"!\" (mirroring).", rotation)
	}
	if rotation != "0" {
		return badImage("Rotation %q is not offered: this level 0 service serves images unrotated and unmirrored (rotation 0).", rotation)
	}
	return nil
}

// parseRegion reads the region: "full" or "x,y,w,h" in pixels, clipped to
// the image. "square" and "pct:" are valid but not offered.
func parseRegion(info *shelfmark.TileInfo, region string) (imageRect, error) {
	switch {
	case region == "full":
		return imageRect{0, 0, info.Width, info.Height}, nil
	case region == "square", strings.HasPrefix(region, "pct:"):
		return imageRect{}, badImage("Region %q is not offered: this level 0 service takes full or the x,y,w,h of a tile listed in its info.json.", region)
	}
	v, ok := ints(region, 4)
	if !ok {
		return imageRect{}, badImage("Region %q is not full, square, x,y,w,h or pct:x,y,w,h.", region)
	}
	r := imageRect{v[0], v[1], v[2], v[3]}
	if r.w == 0 || r.h == 0 {
		return imageRect{}, badImage("Region %q has no width or height.", region)
	}
	if r.x >= info.Width || r.y >= info.Height {
		return imageRect{}, badImage("Region %q lies outside the image, which is %d × %d pixels.", region, info.Width, info.Height)
	}
	r.w = min(r.w, info.Width-r.x)
	r.h = min(r.h, info.Height-r.y)
	return r, nil
}

// parseSize reads the size of a region: the candidate (width, height)
// pairs it may mean (a computed side may round either way). Upscaling
// ("^"), "pct:", zero and sizes larger than the region are refused.
func parseSize(info *shelfmark.TileInfo, r imageRect, size string) ([][2]int, error) {
	if strings.HasPrefix(size, "^") {
		return nil, badImage("Size %q asks for upscaling, which this level 0 service does not offer.", size)
	}
	if strings.HasPrefix(size, "pct:") {
		return nil, badImage("Size %q is not offered: this level 0 service takes max, w,h, w, ,h or !w,h.", size)
	}
	if size == "max" {
		w, h := r.w, r.h
		if big := largestSize(info); r == (imageRect{0, 0, info.Width, info.Height}) && big != nil {
			w, h = big.Width, big.Height
		}
		return [][2]int{{w, h}}, nil
	}
	fit := strings.HasPrefix(size, "!")
	ws, hs, ok := strings.Cut(strings.TrimPrefix(size, "!"), ",")
	if !ok {
		return nil, badImage("Size %q is not max, w,h, w, ,h, !w,h or pct:n.", size)
	}
	w, werr := dimension(ws)
	h, herr := dimension(hs)
	switch {
	case werr != nil || herr != nil || (ws == "" && hs == "") || (fit && (ws == "" || hs == "")):
		return nil, badImage("Size %q is not max, w,h, w, ,h, !w,h or pct:n.", size)
	case (ws != "" && w == 0) || (hs != "" && h == 0):
		return nil, badImage("Size %q asks for an image without width or height.", size)
	case w > r.w || h > r.h:
		return nil, badImage("Size %q is larger than the region (%d × %d pixels), and this service does not upscale.", size, r.w, r.h)
	}
	scaled := func(num, den, side int) []int { // side×num/den, rounded down and up
		lo := side * num / den
		if lo*den == side*num {
			return []int{max(lo, 1)}
		}
		return []int{max(lo, 1), lo + 1}
	}
	var out [][2]int
	switch {
	case fit:
		if w*r.h <= h*r.w { // width binds
			for _, y := range scaled(w, r.w, r.h) {
				out = append(out, [2]int{w, y})
			}
		} else {
			for _, x := range scaled(h, r.h, r.w) {
				out = append(out, [2]int{x, h})
			}
		}
	case hs == "":
		for _, y := range scaled(w, r.w, r.h) {
			out = append(out, [2]int{w, y})
		}
	case ws == "":
		for _, x := range scaled(h, r.h, r.w) {
			out = append(out, [2]int{x, h})
		}
	default:
		out = [][2]int{{w, h}}
	}
	return out, nil
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
