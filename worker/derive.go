package worker

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	_ "image/gif" // registers the GIF decoder for the fallback
	"image/jpeg"
	_ "image/png" // registers the PNG decoder for the fallback
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark/libjpeg"
	_ "golang.org/x/image/bmp" // registers the BMP decoder for the fallback
	"golang.org/x/image/draw"
	_ "golang.org/x/image/tiff" // registers the TIFF decoder for the fallback
	_ "golang.org/x/image/webp" // registers the WebP decoder for the fallback
)

// Derivative encoding.
const (
	// DerivativeQuality is the JPEG quality of thumbnails and access
	// copies.
	DerivativeQuality = 85
)

// Derivative is one derived file's bytes.
type Derivative struct {
	Data      []byte // the encoded file
	MediaType string // its MIME type ("image/jpeg")
	Name      string // a suggested file name ("thumbnail.jpg", "access.jpg")
	Width     int    // pixel width
	Height    int    // pixel height
}

// Thumbnail returns an image whose longer side is size px (JPEG), from an
// image (JPEG/PNG/TIFF/GIF...) or the first page of a PDF (pdftoppm), at
// path with mediaType (a MIME type, e.g. from identification; empty means
// sniff the file). vipsthumbnail when present; the pure-Go fallback
// (image.Decode + golang.org/x/image/draw CatmullRom, x/image/tiff) when
// not. Smaller images are enlarged. Unsupported input → Permanent error;
// a PDF without pdftoppm → an error wrapping ErrToolMissing.
func (t Tools) Thumbnail(ctx context.Context, path, mediaType string, size int) (*Derivative, error) {
	return t.toolDerive(ctx, path, mediaType, size, false, "thumbnail", "thumbnail.jpg")
}

// Access returns an access copy: a JPEG whose longer side is at most size
// px (not upscaled), otherwise as Thumbnail. A PDF has no pixel size of
// its own, so its first page is rendered with its longer side at size.
func (t Tools) Access(ctx context.Context, path, mediaType string, size int) (*Derivative, error) {
	return t.toolDerive(ctx, path, mediaType, size, true, "access copy", "access.jpg")
}

func (t Tools) toolDerive(ctx context.Context, path, mediaType string, size int, shrinkOnly bool, op, name string) (*Derivative, error) {
	if size <= 0 {
		return nil, fmt.Errorf("worker: %s of %s: size %d is not positive", op, path, size)
	}
	in, err := toolOpenInput(ctx, path, mediaType)
	if err != nil {
		return nil, err
	}
	if in.size == 0 {
		return nil, Permanent(fmt.Errorf("worker: %s of %s: empty file", op, path))
	}
	var data []byte
	switch {
	case in.mediaType == "application/pdf":
		if t.Pdftoppm == "" {
			return nil, fmt.Errorf("worker: %s of PDF %s: pdftoppm: %w", op, path, ErrToolMissing)
		}
		data, err = t.toolRenderPDF(ctx, in.path, size)
	case strings.HasPrefix(in.mediaType, "image/"):
		var format string
		format, err = toolImageFormat(in.path)
		switch {
		case err != nil:
		case format == "":
			err = Permanent(errors.New("not a recognised image format"))
		default:
			// Refuse a decompression bomb from its header, on every path.
			err = t.checkPixels(in.path, format)
		}
		switch {
		case err != nil:
		case t.Vipsthumbnail != "" && format != "bmp":
			// libvips reads BMP only through ImageMagick, which is
			// left out; Go reads it. (Go reads no JPEG 2000, HEIF or
			// PNM: without vipsthumbnail those are Permanent errors.)
			data, err = t.toolVipsThumbnail(ctx, in.path, format, size, shrinkOnly)
		default:
			data, err = toolGoThumbnail(ctx, in.path, size, shrinkOnly)
		}
	default:
		err = Permanent(fmt.Errorf("unsupported media type %q", in.mediaType))
	}
	if err != nil {
		return nil, fmt.Errorf("worker: %s of %s: %w", op, path, err)
	}
	cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("worker: %s of %s: output is not a JPEG: %w", op, path, err)
	}
	return &Derivative{Data: data, MediaType: "image/jpeg", Name: name, Width: cfg.Width, Height: cfg.Height}, nil
}

// toolVipsThumbnail runs vipsthumbnail into a temporary directory, in the
// environment of vipsEnv.
func (t Tools) toolVipsThumbnail(ctx context.Context, path, format string, size int, shrinkOnly bool) ([]byte, error) {
	dir, err := t.toolMkdirTemp("shelfmark-thumb-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if strings.ContainsAny(path, "[]") {
		// libvips reads "name[options]" as load options: link the
		// input under a plain name.
		link := filepath.Join(dir, "input")
		if err := os.Symlink(path, link); err != nil {
			return nil, fmt.Errorf("link input: %w", err)
		}
		path = link
	}
	spec := fmt.Sprintf("%dx%d", size, size)
	if shrinkOnly {
		spec += ">"
	}
	out := filepath.Join(dir, "out.jpg")
	l := t.deriveLimits()
	_, err = RunTool(ctx, l, vipsEnv(dir, format), t.Vipsthumbnail,
		path, "--size", spec, "-o", out+"[Q="+strconv.Itoa(DerivativeQuality)+",strip]")
	if err != nil {
		return nil, toolClassify(err)
	}
	return toolReadOutput(out, l)
}

// vipsEnv is the environment of a libvips tool run in the private
// directory dir on an image of format: single-threaded (the pipeline runs
// jobs in parallel and ingest shares the CPU) and, except for HEIF, which
// only a module reads, with VIPSHOME pointing at dir, so that libvips
// loads none of its dynamic modules (HEIF, JPEG XL, ImageMagick,
// OpenSlide, poppler). That halves the start-up of each run (about 45 ms
// to 25 ms), which is most of the cost of a page's derivatives, and keeps
// the ImageMagick loader, which reads almost anything, out of reach.
func vipsEnv(dir, format string) []string {
	env := []string{"VIPS_CONCURRENCY=1"}
	if format != "heif" {
		env = append(env, "VIPSHOME="+dir)
	}
	return env
}

// toolRenderPDF renders the first page of a PDF as a JPEG whose longer
// side is size px.
func (t Tools) toolRenderPDF(ctx context.Context, path string, size int) ([]byte, error) {
	dir, err := t.toolMkdirTemp("shelfmark-pdfpage-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	base := filepath.Join(dir, "page")
	l := t.deriveLimits()
	_, err = RunTool(ctx, l, nil, t.Pdftoppm,
		"-f", "1", "-l", "1", "-singlefile", "-jpeg",
		"-jpegopt", "quality="+strconv.Itoa(DerivativeQuality),
		"-scale-to", strconv.Itoa(size), path, base)
	if err != nil {
		return nil, toolClassify(err)
	}
	data, err := toolReadOutput(base+".jpg", l)
	if errors.Is(err, os.ErrNotExist) {
		return nil, Permanent(fmt.Errorf("pdftoppm rendered no page: %w", err))
	}
	return data, err
}

// toolReadOutput reads a file a child wrote, bounded by l.MaxOutput.
func toolReadOutput(path string, l Limits) ([]byte, error) {
	maxOut := l.MaxOutput
	if maxOut <= 0 {
		maxOut = DefaultMaxOutput
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read output: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxOut+1))
	if err != nil {
		return nil, fmt.Errorf("read output: %w", err)
	}
	if int64(len(data)) > maxOut {
		return nil, fmt.Errorf("output %s: %w (%d bytes)", filepath.Base(path), ErrOutputLimit, maxOut)
	}
	return data, nil
}

// toolClassify marks the failure of a child that exited with a non-zero
// status as Permanent: the converters fail that way on corrupt or
// unsupported input. Failures that name a resource shortage, kills by a
// signal, time limits and poppler's exit status 2 (cannot write output)
// stay retryable.
func toolClassify(err error) error {
	var te *ToolError
	if !errors.As(err, &te) || te.ExitCode <= 0 {
		return err
	}
	if (te.Name == "pdftoppm" || te.Name == "pdftotext") && te.ExitCode == 2 {
		return err
	}
	low := strings.ToLower(te.Stderr)
	for _, s := range []string{"no space left", "cannot allocate memory", "out of memory", "too many open files", "permission denied", "read-only file system"} {
		if strings.Contains(low, s) {
			return err
		}
	}
	return Permanent(err)
}

// toolGoThumbnail is the pure-Go fallback: decode, scale with
// Catmull-Rom onto white (flattening any transparency) and encode as
// JPEG. It ignores EXIF orientation.
func toolGoThumbnail(ctx context.Context, path string, size int, shrinkOnly bool) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open input: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	cfg, format, err := image.DecodeConfig(br)
	if err != nil {
		return nil, Permanent(fmt.Errorf("decode image header: %w", err))
	}
	if err := checkDecodeMemory(cfg, format, format == "jpeg" && jpegProgressive(path)); err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("rewind input: %w", err)
	}
	br.Reset(f)
	src, _, err := image.Decode(br)
	if err != nil {
		return nil, Permanent(fmt.Errorf("decode %s image: %w", format, err))
	}
	if err := toolCtxErr(ctx); err != nil {
		return nil, err
	}
	sb := src.Bounds()
	w, h := toolFit(sb.Dx(), sb.Dy(), size, shrinkOnly)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(dst, dst.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	if w == sb.Dx() && h == sb.Dy() {
		draw.Draw(dst, dst.Bounds(), src, sb.Min, draw.Over)
	} else {
		// Catmull-Rom's cost grows with the shrink factor: first average
		// k×k blocks down to at least twice the target size.
		if k := min(sb.Dx()/(2*w), sb.Dy()/(2*h)); k >= 2 {
			src = toolBoxShrink(src, k)
			sb = src.Bounds()
		}
		draw.CatmullRom.Scale(dst, dst.Bounds(), src, sb, draw.Over, nil)
	}
	data, err := libjpeg.Encode(dst, DerivativeQuality)
	if err != nil {
		return nil, fmt.Errorf("encode JPEG: %w", err)
	}
	return data, nil
}

// toolFit returns w×h scaled so that the longer side is size (at most
// size, never enlarged, with shrinkOnly), keeping the aspect ratio and
// at least one pixel a side.
func toolFit(w, h, size int, shrinkOnly bool) (int, int) {
	long := max(w, h)
	if shrinkOnly && long <= size {
		return w, h
	}
	scale := func(v int) int { return max(1, int((int64(v)*int64(size)+int64(long)/2)/int64(long))) }
	return scale(w), scale(h)
}

// toolBoxShrink returns src shrunk by the integer factor k, each pixel the
// average of a k×k block (partial blocks at the right and bottom edges
// average what they cover), as premultiplied RGBA. The common decoded
// types are read directly; others through At.
func toolBoxShrink(src image.Image, k int) *image.RGBA {
	sb := src.Bounds()
	dw, dh := (sb.Dx()+k-1)/k, (sb.Dy()+k-1)/k
	dst := image.NewRGBA(image.Rect(0, 0, dw, dh))
	var pal [][4]uint32
	if p, ok := src.(*image.Paletted); ok {
		pal = make([][4]uint32, len(p.Palette))
		for i, c := range p.Palette {
			r, g, b, a := c.RGBA()
			pal[i] = [4]uint32{r >> 8, g >> 8, b >> 8, a >> 8}
		}
	}
	for dy := range dh {
		y0 := sb.Min.Y + dy*k
		y1 := min(y0+k, sb.Max.Y)
		for dx := range dw {
			x0 := sb.Min.X + dx*k
			x1 := min(x0+k, sb.Max.X)
			n := uint32((x1 - x0) * (y1 - y0))
			var s0, s1, s2, s3 uint32 // channel sums
			switch img := src.(type) {
			case *image.YCbCr:
				for y := y0; y < y1; y++ {
					for _, v := range img.Y[img.YOffset(x0, y) : img.YOffset(x1-1, y)+1] {
						s0 += uint32(v)
					}
				}
				// The chroma samples covering the block, at their own
				// resolution.
				hd, vd := toolChromaDivisors(img.SubsampleRatio)
				cx0, cx1 := x0/hd, (x1-1)/hd+1
				cy0, cy1 := y0/vd, (y1-1)/vd+1
				var cn uint32
				for cy := cy0; cy < cy1; cy++ {
					ci := (cy-img.Rect.Min.Y/vd)*img.CStride + (cx0 - img.Rect.Min.X/hd)
					for i := ci; i < ci+cx1-cx0; i++ {
						s1 += uint32(img.Cb[i])
						s2 += uint32(img.Cr[i])
					}
					cn += uint32(cx1 - cx0)
				}
				// YCbCr is an affine function of RGB, so averaging
				// commutes with the conversion (up to clamping).
				r, g, b := color.YCbCrToRGB(uint8((s0+n/2)/n), uint8((s1+cn/2)/cn), uint8((s2+cn/2)/cn))
				s0, s1, s2, s3 = uint32(r)*n, uint32(g)*n, uint32(b)*n, 255*n
			case *image.Gray:
				for y := y0; y < y1; y++ {
					row := img.Pix[img.PixOffset(x0, y):img.PixOffset(x1, y)]
					for _, v := range row {
						s0 += uint32(v)
					}
				}
				s1, s2, s3 = s0, s0, 255*n
			case *image.RGBA:
				for y := y0; y < y1; y++ {
					row := img.Pix[img.PixOffset(x0, y):img.PixOffset(x1, y)]
					for i := 0; i < len(row); i += 4 {
						s0, s1, s2, s3 = s0+uint32(row[i]), s1+uint32(row[i+1]), s2+uint32(row[i+2]), s3+uint32(row[i+3])
					}
				}
			case *image.NRGBA:
				for y := y0; y < y1; y++ {
					row := img.Pix[img.PixOffset(x0, y):img.PixOffset(x1, y)]
					for i := 0; i < len(row); i += 4 {
						a := uint32(row[i+3])
						s0 += (uint32(row[i])*a + 127) / 255
						s1 += (uint32(row[i+1])*a + 127) / 255
						s2 += (uint32(row[i+2])*a + 127) / 255
						s3 += a
					}
				}
			case *image.Paletted:
				for y := y0; y < y1; y++ {
					for _, ix := range img.Pix[img.PixOffset(x0, y):img.PixOffset(x1, y)] {
						if int(ix) < len(pal) {
							c := pal[ix]
							s0, s1, s2, s3 = s0+c[0], s1+c[1], s2+c[2], s3+c[3]
						}
					}
				}
			default:
				for y := y0; y < y1; y++ {
					for x := x0; x < x1; x++ {
						r, g, b, a := src.At(x, y).RGBA()
						s0, s1, s2, s3 = s0+r>>8, s1+g>>8, s2+b>>8, s3+a>>8
					}
				}
			}
			i := dst.PixOffset(dx, dy)
			dst.Pix[i] = uint8((s0 + n/2) / n)
			dst.Pix[i+1] = uint8((s1 + n/2) / n)
			dst.Pix[i+2] = uint8((s2 + n/2) / n)
			dst.Pix[i+3] = uint8((s3 + n/2) / n)
		}
	}
	return dst
}

// toolChromaDivisors returns the horizontal and vertical chroma
// subsampling factors of a YCbCr image.
func toolChromaDivisors(r image.YCbCrSubsampleRatio) (h, v int) {
	switch r {
	case image.YCbCrSubsampleRatio422:
		return 2, 1
	case image.YCbCrSubsampleRatio420:
		return 2, 2
	case image.YCbCrSubsampleRatio440:
		return 1, 2
	case image.YCbCrSubsampleRatio411:
		return 4, 1
	case image.YCbCrSubsampleRatio410:
		return 4, 2
	}
	return 1, 1
}
