package worker

import (
	"archive/zip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// TileQuality is the JPEG quality of tiles.
const TileQuality = 85

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
// (Tools.MaxPixels), is a Permanent error. Without vips: ErrToolMissing.
func (t Tools) Tiles(ctx context.Context, path, mediaType string, sizes []shelfmark.TileSize) (*Pyramid, error) {
	if t.Vips == "" {
		return nil, fmt.Errorf("worker: tiles of %s: vips: %w", path, ErrToolMissing)
	}
	in, err := toolOpenInput(ctx, path, mediaType)
	if err != nil {
		return nil, err
	}
	format, err := toolImageFormat(in.path)
	switch {
	case err != nil:
	case format == "" || format == "bmp":
		err = Permanent(fmt.Errorf("not an image format vips tiles (%q)", in.mediaType))
	default:
		_, err = t.checkPixels(in.path, format)
	}
	if err != nil {
		return nil, fmt.Errorf("worker: tiles of %s: %w", path, err)
	}
	dir, err := t.toolMkdirTemp("shelfmark-tiles-*")
	if err != nil {
		return nil, err
	}
	p := &Pyramid{dir: dir, Path: filepath.Join(dir, "tiles.zip")}
	if err := t.dzsave(ctx, in.path, format, dir); err != nil {
		p.Close()
		return nil, fmt.Errorf("worker: tiles of %s: %w", path, err)
	}
	if err := p.pack(filepath.Join(dir, "p.zip"), sizes); err != nil {
		p.Close()
		return nil, fmt.Errorf("worker: tiles of %s: %w", path, err)
	}
	return p, nil
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
	_, err := RunTool(ctx, t.deriveLimits(), vipsEnv(dir, format), t.Vips,
		"dzsave", path, filepath.Join(dir, "p.zip"),
		"--layout", "iiif3", "--tile-size", "512", "--overlap", "0",
		"--suffix", ".jpg[Q="+strconv.Itoa(TileQuality)+",strip]")
	if err != nil {
		return toolClassify(err)
	}
	return nil
}

// dzInfo is the part of the info.json dzsave writes that the pack keeps.
type dzInfo struct {
	Width  int                 `json:"width"`
	Height int                 `json:"height"`
	Tiles  []shelfmark.TileSet `json:"tiles"`
}

// pack copies dzsave's archive into p.Path: entries without dzsave's
// top directory, stored (JPEG does not deflate), sorted by name, and
// TileInfoName rewritten as a shelfmark.TileInfo with sizes.
func (p *Pyramid) pack(src string, sizes []shelfmark.TileSize) error {
	zr, err := zip.OpenReader(src)
	if err != nil {
		return Permanent(fmt.Errorf("vips wrote no readable archive: %w", err))
	}
	defer zr.Close()
	files := make([]*zip.File, 0, len(zr.File))
	var info *dzInfo
	for _, f := range zr.File {
		_, name, ok := strings.Cut(f.Name, "/")
		if !ok || name == "" || strings.HasSuffix(name, "/") {
			continue
		}
		switch {
		case name == "info.json":
			rc, err := f.Open()
			if err != nil {
				return fmt.Errorf("read vips info: %w", err)
			}
			info = &dzInfo{}
			err = json.NewDecoder(io.LimitReader(rc, 1<<20)).Decode(info)
			rc.Close()
			if err != nil {
				return fmt.Errorf("read vips info: %w", err)
			}
		case strings.HasSuffix(name, "/default.jpg"):
			files = append(files, f)
		}
	}
	if info == nil || info.Width <= 0 || info.Height <= 0 || len(info.Tiles) == 0 || len(files) == 0 {
		return errors.New("vips wrote an archive without tiles or info.json")
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	// the scale factors are those of the tiles written: vips 8.14 leaves
	// the last level (the one of a single tile) out of its info.json
	scales := map[int]bool{}
	for _, f := range files {
		var x, y, w, h, sw, sh int
		if _, err := fmt.Sscanf(f.Name[strings.IndexByte(f.Name, '/')+1:], "%d,%d,%d,%d/%d,%d/", &x, &y, &w, &h, &sw, &sh); err != nil || sw <= 0 || sh <= 0 {
			return fmt.Errorf("vips wrote a tile named %q", f.Name)
		}
		scales[max((w+sw/2)/sw, (h+sh/2)/sh, 1)] = true
	}
	info.Tiles[0].ScaleFactors = info.Tiles[0].ScaleFactors[:0]
	for s := range scales {
		info.Tiles[0].ScaleFactors = append(info.Tiles[0].ScaleFactors, s)
	}
	sort.Ints(info.Tiles[0].ScaleFactors)
	out, err := os.Create(p.Path)
	if err != nil {
		return fmt.Errorf("create archive: %w", err)
	}
	defer out.Close()
	zw := zip.NewWriter(out)
	p.Info = shelfmark.TileInfo{Width: info.Width, Height: info.Height, Tiles: info.Tiles, Sizes: sizes}
	b, err := json.Marshal(p.Info)
	if err != nil {
		return err
	}
	if err := storeEntry(zw, shelfmark.TileInfoName, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
		return err
	}
	for _, f := range files {
		_, name, _ := strings.Cut(f.Name, "/")
		err := storeEntry(zw, name, func(w io.Writer) error {
			rc, err := f.Open()
			if err != nil {
				return err
			}
			defer rc.Close()
			_, err = io.Copy(w, rc)
			return err
		})
		if err != nil {
			return fmt.Errorf("pack %s: %w", name, err)
		}
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("write archive: %w", err)
	}
	return out.Close()
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
