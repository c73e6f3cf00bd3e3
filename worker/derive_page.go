package worker

import (
	"context"
	"fmt"

	"github.com/shelfmark/shelfmark"
)

// pageDerivatives are what the derive job makes of one file: an access
// copy, a thumbnail and, for an image when vips is there, a tile
// pyramid.
type pageDerivatives struct {
	access, thumb *Derivative
	tiles         *Pyramid // nil without vips, and for a PDF
}

// Close removes the pyramid's archive, if any.
func (d *pageDerivatives) Close() {
	if d.tiles != nil {
		d.tiles.Close()
	}
}

// derivePage makes the access copy (AccessSize) and thumbnail
// (ThumbnailSize) of the file at path, and for an image, with vips, its
// tile pyramid. For a plain JPEG (tilesMakeAccess) all three come from
// one run of vips (TilesAccessThumbnail); otherwise the access copy is
// made from the original by vipsthumbnail (colour managed, turned as
// EXIF says) and the thumbnail from the pyramid. On a 2500×3500 colour
// page that is about 190 ms of CPU instead of 300 (BenchmarkDerivePage).
func (t Tools) derivePage(ctx context.Context, path, mt string) (*pageDerivatives, error) {
	d := &pageDerivatives{}
	var err error
	if isImage(mt) && t.Vips != "" && tilesMakeAccess(path) {
		if d.tiles, d.access, d.thumb, err = t.TilesAccessThumbnail(ctx, path, mt, ThumbnailSize, AccessSize); err != nil {
			return nil, fmt.Errorf("tiles: %w", err)
		}
		return d, nil
	}
	if d.access, err = t.Access(ctx, path, mt, AccessSize); err != nil {
		return nil, fmt.Errorf("access copy: %w", err)
	}
	if isImage(mt) && t.Vips != "" {
		// deep zoom; the thumbnail comes from the pyramid's tiles
		d.tiles, d.thumb, err = t.TilesThumbnail(ctx, path, mt, ThumbnailSize,
			shelfmark.TileSize{Width: d.access.Width, Height: d.access.Height, Use: shelfmark.UseAccess})
		if err != nil {
			return nil, fmt.Errorf("tiles: %w", err)
		}
		return d, nil
	}
	if d.thumb, err = t.Thumbnail(ctx, path, mt, ThumbnailSize); err != nil {
		return nil, fmt.Errorf("thumbnail: %w", err)
	}
	return d, nil
}

// tilesMakeAccess reports whether the access copy of the image at path
// may be made from its pyramid's tiles: the tiles must show what
// vipsthumbnail would, so the image has 8-bit grey or colour samples, no
// ICC profile (dzsave does no colour management, vipsthumbnail converts
// to sRGB), no EXIF orientation that turns it (dzsave does not turn,
// vipsthumbnail does) and no transparency. That holds for such a JPEG,
// such a PNG (grey or RGB, without tRNS, iCCP or eXIf chunks) and such a
// TIFF (its first page grey or RGB, without extra samples, an ICC profile
// or an orientation that turns it); other formats keep vipsthumbnail.
func tilesMakeAccess(path string) bool {
	format, err := toolImageFormat(path)
	if err != nil {
		return false
	}
	switch format {
	case "jpeg":
		fr, err := jpegHead(path)
		return err == nil && !fr.icc && fr.orientation <= 1 && fr.page.sampleBytes == 1 &&
			(fr.page.channels == 1 || fr.page.channels == 3)
	case "png":
		return pngPlain(path)
	case "tiff":
		return tiffPlain(path)
	}
	return false
}
