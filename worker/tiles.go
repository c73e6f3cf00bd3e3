package worker

import (
	"archive/zip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/libjpeg"
	"golang.org/x/image/draw"
)

// TileQuality is the JPEG quality of tiles.
const TileQuality = 85

const (
	// maxTileBytes and maxTilePixels bound what one tile of dzsave's
	// archive may hold to be decoded (its tiles are 512 pixels a
	// side; the bounds leave room and refuse only a broken archive).
	maxTileBytes  = 16 << 20
	maxTilePixels = 4096 * 4096
)

// Pyramid is a page image's tiles, made by Tools.Tiles: a ZIP archive at
// Path (see shelfmark.TileInfo for its layout) in a temporary directory
// that Close removes.
type Pyramid struct {
	Path string
	Info shelfmark.TileInfo
	dir  string
}

// Close removes the archive.
func (p *Pyramid) Close() error { return os.RemoveAll(p.dir) }

// Tiles cuts the image at path into a tile pyramid with `vips dzsave
// --layout iiif3` (512-pixel tiles, halving down to the level that fits
// one tile) and packs it as one archive of stored entries, named as the
// IIIF level 0 requests that fetch them, with an info entry that also
// lists sizes (the page's thumbnail and access copy, served from their
// own files). Images only; a file that is not one, or too many pixels
// (Tools.MaxPixels) or bytes decoded (Tools.MaxImageBytes) in any of the
// images the file holds, is a Permanent error. Without vips: ErrToolMissing.
func (t Tools) Tiles(ctx context.Context, path, mediaType string, sizes []shelfmark.TileSize) (*Pyramid, error) {
	p, _, err := t.tiles(ctx, path, mediaType, func(*dzArchive) ([]*Derivative, []shelfmark.TileSize, error) { return nil, sizes, nil })
	return p, err
}

// TilesThumbnail is Tiles, and also makes the page's thumbnail (its longer
// side thumbSize pixels, as Thumbnail makes it) from the smallest level
// of the pyramid that is at least that large: a few tiles decoded in
// process instead of one more run of vips over the whole image. The
// archive lists the thumbnail's size and access, the access copy's.
func (t Tools) TilesThumbnail(ctx context.Context, path, mediaType string, thumbSize int, access shelfmark.TileSize) (*Pyramid, *Derivative, error) {
	p, d, err := t.tiles(ctx, path, mediaType, func(a *dzArchive) ([]*Derivative, []shelfmark.TileSize, error) {
		th, err := a.thumbnail(thumbSize)
		if err != nil {
			return nil, nil, err
		}
		return []*Derivative{th}, tileSizes(th, access), nil
	})
	if err != nil {
		return nil, nil, err
	}
	return p, d[0], nil
}

// TilesAccessThumbnail is Tiles, and also makes the page's access copy
// (its longer side at most accessSize pixels) and thumbnail (thumbSize)
// from the levels of the pyramid just above their sizes, as
// TilesThumbnail makes the thumbnail: one run of vips for the three
// instead of two, each decoding the whole image. The copies are made
// from the tiles as vips wrote them (JPEG of TileQuality), with neither
// colour management nor EXIF orientation applied: derivePage uses it
// only for images that need neither.
func (t Tools) TilesAccessThumbnail(ctx context.Context, path, mediaType string, thumbSize, accessSize int) (p *Pyramid, access, thumb *Derivative, err error) {
	p, d, err := t.tiles(ctx, path, mediaType, func(a *dzArchive) ([]*Derivative, []shelfmark.TileSize, error) {
		ac, err := a.access(accessSize)
		if err != nil {
			return nil, nil, err
		}
		th, err := a.thumbnail(thumbSize)
		if err != nil {
			return nil, nil, err
		}
		return []*Derivative{ac, th}, tileSizes(th, shelfmark.TileSize{Width: ac.Width, Height: ac.Height, Use: shelfmark.UseAccess}), nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return p, d[0], d[1], nil
}

// tileSizes lists the sizes of the thumbnail th and the access copy,
// smaller first.
func tileSizes(th *Derivative, access shelfmark.TileSize) []shelfmark.TileSize {
	sizes := []shelfmark.TileSize{{Width: th.Width, Height: th.Height, Use: shelfmark.UseThumbnail}, access}
	if sizes[0].Width > sizes[1].Width {
		sizes[0], sizes[1] = sizes[1], sizes[0]
	}
	return sizes
}

// tiles runs dzsave, reads its archive, asks extra for what else to make
// of it and the sizes to list, and packs the pyramid.
func (t Tools) tiles(ctx context.Context, path, mediaType string, extra func(*dzArchive) ([]*Derivative, []shelfmark.TileSize, error)) (*Pyramid, []*Derivative, error) {
	if t.Vips == "" {
		return nil, nil, fmt.Errorf("worker: tiles of %s: vips: %w", path, ErrToolMissing)
	}
	in, err := toolOpenInput(ctx, path, mediaType)
	if err != nil {
		return nil, nil, err
	}
	format, err := toolImageFormat(in.path)
	switch {
	case err != nil:
	case format == "" || format == "bmp":
		err = Permanent(fmt.Errorf("not an image format vips tiles (%q)", in.mediaType))
	default:
		err = t.checkPixels(in.path, format)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("worker: tiles of %s: %w", path, err)
	}
	dir, err := t.toolMkdirTemp("shelfmark-tiles-*")
	if err != nil {
		return nil, nil, err
	}
	p := &Pyramid{dir: dir, Path: filepath.Join(dir, "tiles.zip")}
	d, err := func() ([]*Derivative, error) {
		if err := t.dzsave(ctx, in.path, format, dir); err != nil {
			return nil, err
		}
		a, err := readDZ(filepath.Join(dir, "p.zip"))
		if err != nil {
			return nil, err
		}
		defer a.zr.Close()
		d, sizes, err := extra(a)
		if err != nil {
			return nil, err
		}
		return d, p.pack(a, sizes)
	}()
	if err != nil {
		p.Close()
		return nil, nil, fmt.Errorf("worker: tiles of %s: %w", path, err)
	}
	return p, d, nil
}

// dzsave runs vips into dir/p.zip, in the environment of vipsEnv.
func (t Tools) dzsave(ctx context.Context, path, format, dir string) error {
	if strings.ContainsAny(path, "[]") {
		link := filepath.Join(dir, "input")
		if err := os.Symlink(path, link); err != nil {
			return fmt.Errorf("link input: %w", err)
		}
		path = link
	}
	args, env := DzsaveCommand(path, filepath.Join(dir, "p.zip"), format, dir)
	_, err := RunTool(ctx, t.deriveLimits(), env, t.Vips, args...)
	if err != nil {
		return toolClassify(err)
	}
	return nil
}

// DzsaveCommand returns the arguments of vips and the environment with
// which the derive job cuts the image at in (whose format is named as
// toolImageFormat names it: "jpeg", "png", "heif"…) into the archive
// out, dir being a private directory of the run (see vipsEnv). Benchmarks
// run vips alone with them.
func DzsaveCommand(in, out, format, dir string) (args, env []string) {
	return []string{"dzsave", in, out, "--layout", "iiif3", "--tile-size", "512", "--overlap", "0",
		"--suffix", ".jpg[Q=" + strconv.Itoa(TileQuality) + ",strip]"}, vipsEnv(dir, format)
}

// dzInfo is the part of the info.json dzsave writes that the pack keeps.
type dzInfo struct {
	Width  int                 `json:"width"`
	Height int                 `json:"height"`
	Tiles  []shelfmark.TileSet `json:"tiles"`
}

// dzTile is a tile of dzsave's archive: its region of the full image,
// its size and its scale factor.
type dzTile struct {
	f                  *zip.File
	name               string // without dzsave's top directory
	x, y, w, h, sw, sh int
	scale              int
}

// dzArchive is dzsave's archive, read: its info and its tiles, sorted by
// name.
// decode reads and decodes the tile (a JPEG).
func (t dzTile) decode() (image.Image, error) {
	rc, err := t.f.Open()
	if err != nil {
		return nil, fmt.Errorf("read tile %s: %w", t.name, err)
	}
	defer rc.Close()
	if t.f.UncompressedSize64 > maxTileBytes {
		return nil, fmt.Errorf("read tile %s: %d bytes, more than a tile's %d", t.name, t.f.UncompressedSize64, maxTileBytes)
	}
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("read tile %s: %w", t.name, err)
	}
	img, err := libjpeg.Decode(data, maxTilePixels)
	if err != nil {
		return nil, fmt.Errorf("decode tile %s: %w", t.name, err)
	}
	return img, nil
}

type dzArchive struct {
	zr    *zip.ReadCloser
	info  dzInfo
	tiles []dzTile
}

// readDZ reads the archive dzsave wrote. The scale factors are those of
// the tiles written: vips 8.14 leaves the last level (the one of a single
// tile) out of its info.json.
func readDZ(src string) (*dzArchive, error) {
	zr, err := zip.OpenReader(src)
	if err != nil {
		return nil, Permanent(fmt.Errorf("vips wrote no readable archive: %w", err))
	}
	a := &dzArchive{zr: zr}
	found := false
	for _, f := range zr.File {
		_, name, ok := strings.Cut(f.Name, "/")
		if !ok || name == "" || strings.HasSuffix(name, "/") {
			continue
		}
		switch {
		case name == "info.json":
			rc, err := f.Open()
			if err != nil {
				zr.Close()
				return nil, fmt.Errorf("read vips info: %w", err)
			}
			err = json.NewDecoder(io.LimitReader(rc, 1<<20)).Decode(&a.info)
			rc.Close()
			if err != nil {
				zr.Close()
				return nil, fmt.Errorf("read vips info: %w", err)
			}
			found = true
		case strings.HasSuffix(name, "/default.jpg"):
			t := dzTile{f: f, name: name}
			if _, err := fmt.Sscanf(name, "%d,%d,%d,%d/%d,%d/", &t.x, &t.y, &t.w, &t.h, &t.sw, &t.sh); err != nil || t.sw <= 0 || t.sh <= 0 {
				zr.Close()
				return nil, fmt.Errorf("vips wrote a tile named %q", f.Name)
			}
			t.scale = max((t.w+t.sw/2)/t.sw, (t.h+t.sh/2)/t.sh, 1)
			a.tiles = append(a.tiles, t)
		}
	}
	if !found || a.info.Width <= 0 || a.info.Height <= 0 || len(a.info.Tiles) == 0 || len(a.tiles) == 0 {
		zr.Close()
		return nil, errors.New("vips wrote an archive without tiles or info.json")
	}
	sort.Slice(a.tiles, func(i, j int) bool { return a.tiles[i].name < a.tiles[j].name })
	scales := map[int]bool{}
	for _, t := range a.tiles {
		scales[t.scale] = true
	}
	a.info.Tiles = a.info.Tiles[:1]
	a.info.Tiles[0].ScaleFactors = a.info.Tiles[0].ScaleFactors[:0]
	for s := range scales {
		a.info.Tiles[0].ScaleFactors = append(a.info.Tiles[0].ScaleFactors, s)
	}
	sort.Ints(a.info.Tiles[0].ScaleFactors)
	return a, nil
}

// levelFor returns the scale factor of the smallest level of the
// pyramid that is at least w×h.
func (a *dzArchive) levelFor(w, h int) int {
	scale := 1
	for _, s := range a.info.Tiles[0].ScaleFactors {
		if (a.info.Width+s-1)/s >= w && (a.info.Height+s-1)/s >= h {
			scale = max(scale, s)
		}
	}
	return scale
}

// level decodes the tiles of the pyramid's level at scale into one
// image: grey (*image.Gray) when its first tile is, else *image.RGBA,
// on white where no tile covers it.
func (a *dzArchive) level(scale int) (draw.Image, error) {
	lw, lh := (a.info.Width+scale-1)/scale, (a.info.Height+scale-1)/scale
	r := image.Rect(0, 0, lw, lh)
	var level draw.Image
	for _, t := range a.tiles {
		if t.scale != scale {
			continue
		}
		img, err := t.decode()
		if err != nil {
			return nil, err
		}
		if level == nil {
			// white (and opaque) where no tile covers it
			var pix []byte
			if _, grey := img.(*image.Gray); grey {
				g := image.NewGray(r)
				level, pix = g, g.Pix
			} else {
				c := image.NewRGBA(r)
				level, pix = c, c.Pix
			}
			for i := range pix {
				pix[i] = 0xff
			}
		}
		at := image.Pt(t.x/scale, t.y/scale)
		dst := image.Rectangle{Min: at, Max: at.Add(img.Bounds().Size())}
		if g, ok := level.(*image.Gray); ok {
			if tg, ok := img.(*image.Gray); ok {
				// row by row: image/draw has no fast path for grey
				dst = dst.Intersect(g.Rect)
				for y := dst.Min.Y; y < dst.Max.Y; y++ {
					copy(g.Pix[g.PixOffset(dst.Min.X, y):g.PixOffset(dst.Max.X, y)], tg.Pix[tg.PixOffset(tg.Rect.Min.X, tg.Rect.Min.Y+y-at.Y):])
				}
				continue
			}
		}
		draw.Draw(level, dst, img, img.Bounds().Min, draw.Src)
	}
	if level == nil {
		return nil, fmt.Errorf("the pyramid has no tiles at scale %d", scale)
	}
	return level, nil
}

// thumbnail makes the page's thumbnail (longer side size pixels, as
// Thumbnail makes it) from the smallest level at least that large,
// shrunk by less than half with areaShrink: a tile or a few decoded.
func (a *dzArchive) thumbnail(size int) (*Derivative, error) {
	w, h := toolFit(a.info.Width, a.info.Height, size, false)
	level, err := a.level(a.levelFor(w, h))
	if err != nil {
		return nil, err
	}
	var dst image.Image = level
	if b := level.Bounds(); b.Dx() != w || b.Dy() != h {
		dst, _ = areaShrinkImage(level, w, h)
	}
	return encodeDerivative(dst, "thumbnail.jpg")
}

// access makes the page's access copy (longer side at most size pixels,
// as Access makes it) from the smallest level at least that large: that
// level's tiles decoded and shrunk by less than half with areaShrink,
// instead of one more run of a tool that decodes the whole image. For a
// 2500×3500 page that is 12 tiles.
func (a *dzArchive) access(size int) (*Derivative, error) {
	w, h := toolFit(a.info.Width, a.info.Height, size, true)
	level, err := a.level(a.levelFor(w, h))
	if err != nil {
		return nil, err
	}
	var dst image.Image = level
	if b := level.Bounds(); b.Dx() != w || b.Dy() != h {
		dst, _ = areaShrinkImage(level, w, h)
	}
	return encodeDerivative(dst, "access.jpg")
}

// encodeDerivative encodes m as a JPEG of DerivativeQuality.
func encodeDerivative(m image.Image, name string) (*Derivative, error) {
	data, err := libjpeg.Encode(m, DerivativeQuality)
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", name, err)
	}
	b := m.Bounds()
	return &Derivative{Data: data, MediaType: "image/jpeg", Name: name, Width: b.Dx(), Height: b.Dy()}, nil
}

// pack writes the pyramid's archive at p.Path: dzsave's tiles, stored
// (JPEG does not deflate), sorted by name, and TileInfoName, a
// shelfmark.TileInfo with sizes.
func (p *Pyramid) pack(a *dzArchive, sizes []shelfmark.TileSize) error {
	out, err := os.Create(p.Path)
	if err != nil {
		return fmt.Errorf("create archive: %w", err)
	}
	defer out.Close()
	zw := zip.NewWriter(out)
	p.Info = shelfmark.TileInfo{Width: a.info.Width, Height: a.info.Height, Tiles: a.info.Tiles, Sizes: sizes}
	b, err := json.Marshal(p.Info)
	if err != nil {
		return err
	}
	if err := storeEntry(zw, shelfmark.TileInfoName, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
		return err
	}
	if err := a.copyTiles(zw, ""); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("write archive: %w", err)
	}
	return out.Close()
}

// copyTiles stores the archive's tiles in zw, their names after prefix.
func (a *dzArchive) copyTiles(zw *zip.Writer, prefix string) error {
	for _, t := range a.tiles {
		err := storeEntry(zw, prefix+t.name, func(w io.Writer) error {
			rc, err := t.f.Open()
			if err != nil {
				return err
			}
			defer rc.Close()
			_, err = io.Copy(w, rc)
			return err
		})
		if err != nil {
			return fmt.Errorf("pack %s: %w", t.name, err)
		}
	}
	return nil
}

// storeEntry adds an uncompressed entry, so that a reader serves it from
// its offset.
func storeEntry(zw *zip.Writer, name string, write func(io.Writer) error) error {
	w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
	if err != nil {
		return err
	}
	return write(w)
}

// PDF page pyramids.
const (
	// PDFPageSize is the longer side, in pixels, of a PDF page rendered
	// for deep zoom (as large as an access copy).
	PDFPageSize = AccessSize
	// PDFTilePages caps the pages of one PDF given an image service; the
	// others are left without one.
	PDFTilePages = 500
)

// PDFTiles renders the pages of the PDF at path (at most PDFTilePages,
// and fewer when the context's deadline comes near) as JPEGs whose longer
// side is PDFPageSize, in one run of pdftoppm, cuts each into a pyramid
// as Tiles does, and packs them all in one archive: page n's tiles and
// the rendered page (TilePageName) under "n/", and an info entry whose
// Pages describe each. A PDF without pages rendered is a Permanent error.
func (t Tools) PDFTiles(ctx context.Context, path string) (*Pyramid, error) {
	switch {
	case t.Vips == "":
		return nil, fmt.Errorf("worker: tiles of %s: vips: %w", path, ErrToolMissing)
	case t.Pdftoppm == "":
		return nil, fmt.Errorf("worker: tiles of %s: pdftoppm: %w", path, ErrToolMissing)
	}
	dir, err := t.toolMkdirTemp("shelfmark-pdftiles-*")
	if err != nil {
		return nil, err
	}
	p := &Pyramid{dir: dir, Path: filepath.Join(dir, "tiles.zip")}
	if err := t.pdfTiles(ctx, path, p); err != nil {
		p.Close()
		return nil, fmt.Errorf("worker: tiles of %s: %w", path, err)
	}
	return p, nil
}

func (t Tools) pdfTiles(ctx context.Context, path string, p *Pyramid) error {
	out, err := os.Create(p.Path)
	if err != nil {
		return fmt.Errorf("create archive: %w", err)
	}
	defer out.Close()
	zw := zip.NewWriter(out)
	// pages are rendered pdfChunk at a time, so that a long PDF stops
	// before the job's time limit with the pages cut so far
	var slowest time.Duration // of a chunk
	for first := 1; first <= PDFTilePages; first += pdfChunk {
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < 2*slowest+5*time.Second {
			break
		}
		start := time.Now()
		n, err := t.pdfChunk(ctx, path, p, zw, first, min(first+pdfChunk-1, PDFTilePages))
		switch {
		case err != nil && first > 1 && !errors.Is(err, context.DeadlineExceeded):
			n = 0 // a range past the last page: the PDF has no more
		case err != nil:
			return err
		}
		slowest = max(slowest, time.Since(start))
		if n < pdfChunk {
			break
		}
	}
	if len(p.Info.Pages) == 0 {
		return Permanent(errors.New("pdftoppm rendered no page"))
	}
	first := p.Info.Pages[0]
	p.Info.Width, p.Info.Height, p.Info.Tiles, p.Info.Sizes = first.Width, first.Height, first.Tiles, first.Sizes
	b, err := json.Marshal(p.Info)
	if err != nil {
		return err
	}
	if err := storeEntry(zw, shelfmark.TileInfoName, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("write archive: %w", err)
	}
	return out.Close()
}

// pdfChunk is how many pages PDFTiles renders at once.
const pdfChunk = 20

// pdfChunk renders pages first to last with pdftoppm and cuts each into
// zw; it returns how many it rendered (fewer than asked at the end of the
// PDF).
func (t Tools) pdfChunk(ctx context.Context, path string, p *Pyramid, zw *zip.Writer, first, last int) (int, error) {
	dir := filepath.Join(p.dir, strconv.Itoa(first))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	_, err := RunTool(ctx, t.deriveLimits(), nil, t.Pdftoppm, "-f", strconv.Itoa(first), "-l", strconv.Itoa(last), "-jpeg",
		"-jpegopt", "quality="+strconv.Itoa(TileQuality), "-scale-to", strconv.Itoa(PDFPageSize), path, filepath.Join(dir, "p"))
	if err != nil {
		return 0, toolClassify(err)
	}
	names, err := filepath.Glob(filepath.Join(dir, "p-*.jpg"))
	if err != nil {
		return 0, err
	}
	pages := map[int]string{}
	for _, name := range names {
		base := strings.TrimSuffix(filepath.Base(name), ".jpg")
		if n, err := strconv.Atoi(base[strings.LastIndexByte(base, '-')+1:]); err == nil && n >= first && n <= last {
			pages[n] = name
		}
	}
	for n := first; pages[n] != ""; n++ {
		info, err := t.pdfPage(ctx, pages[n], zw, strconv.Itoa(n)+"/")
		if err != nil {
			return 0, fmt.Errorf("page %d: %w", n, err)
		}
		p.Info.Pages = append(p.Info.Pages, *info)
	}
	return len(pages), nil
}

// pdfPage cuts one rendered page into zw under prefix: its tiles and the
// page itself.
func (t Tools) pdfPage(ctx context.Context, page string, zw *zip.Writer, prefix string) (*shelfmark.TileInfo, error) {
	dir := filepath.Dir(page)
	if err := os.Remove(filepath.Join(dir, "p.zip")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := t.dzsave(ctx, page, "jpeg", dir); err != nil {
		return nil, err
	}
	a, err := readDZ(filepath.Join(dir, "p.zip"))
	if err != nil {
		return nil, err
	}
	defer a.zr.Close()
	info := &shelfmark.TileInfo{Width: a.info.Width, Height: a.info.Height, Tiles: a.info.Tiles,
		Sizes: []shelfmark.TileSize{{Width: a.info.Width, Height: a.info.Height, Use: shelfmark.UsePage}}}
	if err := a.copyTiles(zw, prefix); err != nil {
		return nil, err
	}
	err = storeEntry(zw, prefix+shelfmark.TilePageName, func(w io.Writer) error {
		f, err := os.Open(page)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(w, f)
		return err
	})
	return info, err
}
