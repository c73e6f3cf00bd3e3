package worker

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark/bench/gen"
)

// toolTestTools returns the tools found on PATH with a test time limit,
// OCR at nice 19 rather than idle priority (testOCRNice).
func toolTestTools(t testing.TB) Tools {
	tools := FindTools()
	tools.OCRNice = testOCRNice
	tools.Limits.Timeout = 2 * time.Minute
	tools.TempDir = t.TempDir()
	return tools
}

// testOCRNice is the nice value of OCR in the tests: at idle priority,
// OCR on a machine that other work keeps busy gets no CPU at all and the
// tests would time out (TestOCRIdleByDefault checks serve's setting).
const testOCRNice = 19

// toolTestNeed skips the test if the tool at path (named name) is absent,
// unless SHELFMARK_REQUIRE_TOOLS is set: then it fails.
func toolTestNeed(t testing.TB, path, name string) {
	t.Helper()
	if path != "" {
		return
	}
	if os.Getenv("SHELFMARK_REQUIRE_TOOLS") != "" {
		t.Fatalf("%s is not installed and SHELFMARK_REQUIRE_TOOLS is set", name)
	}
	t.Skipf("%s is not installed", name)
}

// toolTestFile writes data into a new file in a test temporary directory.
func toolTestFile(t testing.TB, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// toolTestDecode checks that d is a JPEG of the size it claims and
// returns its dimensions.
func toolTestDecode(t *testing.T, d *Derivative) (int, int) {
	t.Helper()
	img, format, err := image.Decode(bytes.NewReader(d.Data))
	if err != nil {
		t.Fatalf("derivative does not decode: %v", err)
	}
	w, h := img.Bounds().Dx(), img.Bounds().Dy()
	if format != "jpeg" || d.MediaType != "image/jpeg" {
		t.Errorf("format %s, media type %s; want JPEG", format, d.MediaType)
	}
	if d.Width != w || d.Height != h {
		t.Errorf("derivative claims %d×%d, decodes as %d×%d", d.Width, d.Height, w, h)
	}
	return w, h
}

// toolTestVariants are the tools found on PATH and the pure-Go fallback.
func toolTestVariants(t *testing.T) []struct {
	name  string
	tools Tools
} {
	found := toolTestTools(t)
	return []struct {
		name  string
		tools Tools
	}{
		{"tools", found},
		{"fallback", Tools{TempDir: t.TempDir()}},
	}
}

func TestThumbnail(t *testing.T) {
	ctx := context.Background()
	inputs := []struct {
		name, mediaType string
		data            []byte
		w, h            int
	}{
		{"page.jpg", "image/jpeg", gen.JPEG(1, 1, 1200, 900), 1200, 900},
		{"page.png", "image/png", gen.PNG(1, 2, 600, 800), 600, 800},
		{"page.tif", "image/tiff", gen.TIFF(1, 3, 500, 700), 500, 700},
		{"sniffed.tif", "", gen.TIFF(1, 4, 300, 200), 300, 200},
		{"small.jpg", "image/jpeg; charset=binary", gen.JPEG(1, 5, 150, 100), 150, 100},
	}
	for _, v := range toolTestVariants(t) {
		t.Run(v.name, func(t *testing.T) {
			if v.name == "tools" {
				toolTestNeed(t, v.tools.Vipsthumbnail, "vipsthumbnail")
			}
			for _, in := range inputs {
				p := toolTestFile(t, in.name, in.data)
				for _, size := range []int{64, 200} {
					d, err := v.tools.Thumbnail(ctx, p, in.mediaType, size)
					if err != nil {
						t.Fatalf("%s at %d: %v", in.name, size, err)
					}
					w, h := toolTestDecode(t, d)
					if max(w, h) != size {
						t.Errorf("%s at %d: thumbnail %d×%d, longer side not %d", in.name, size, w, h, size)
					}
					if (in.w > in.h) != (w > h) {
						t.Errorf("%s at %d: %d×%d from %d×%d: orientation changed", in.name, size, w, h, in.w, in.h)
					}
					if d.Name != "thumbnail.jpg" {
						t.Errorf("name %q", d.Name)
					}
				}
			}
			if ents, _ := os.ReadDir(v.tools.TempDir); len(ents) != 0 {
				t.Errorf("temporary files left in %s: %v", v.tools.TempDir, ents)
			}
		})
	}
}

func TestThumbnailPDF(t *testing.T) {
	ctx := context.Background()
	p := toolTestFile(t, "doc.pdf", gen.PDF(1, 1, "A first page of text for the thumbnail of a generated PDF."))
	tools := toolTestTools(t)
	toolTestNeed(t, tools.Pdftoppm, "pdftoppm")
	for _, size := range []int{100, 300} {
		d, err := tools.Thumbnail(ctx, p, "application/pdf", size)
		if err != nil {
			t.Fatal(err)
		}
		w, h := toolTestDecode(t, d)
		if h != size || w >= h {
			t.Errorf("US Letter page thumbnail %d×%d, want portrait with height %d", w, h, size)
		}
	}
	// Without vipsthumbnail the PDF path is the same.
	noVips := tools
	noVips.Vipsthumbnail = ""
	d, err := noVips.Access(ctx, p, "", 250)
	if err != nil {
		t.Fatal(err)
	}
	if w, h := toolTestDecode(t, d); max(w, h) != 250 {
		t.Errorf("access copy of PDF %d×%d, want longer side 250", w, h)
	}
}

func TestThumbnailPDFWithoutTool(t *testing.T) {
	p := toolTestFile(t, "doc.pdf", gen.PDF(1, 1, "text"))
	_, err := Tools{}.Thumbnail(context.Background(), p, "application/pdf", 100)
	if !errors.Is(err, ErrToolMissing) || IsPermanent(err) {
		t.Errorf("error %v, want ErrToolMissing, not permanent", err)
	}
}

func TestAccessNotUpscaled(t *testing.T) {
	ctx := context.Background()
	p := toolTestFile(t, "page.png", gen.PNG(1, 6, 600, 800))
	for _, v := range toolTestVariants(t) {
		t.Run(v.name, func(t *testing.T) {
			if v.name == "tools" {
				toolTestNeed(t, v.tools.Vipsthumbnail, "vipsthumbnail")
			}
			d, err := v.tools.Access(ctx, p, "image/png", 2000)
			if err != nil {
				t.Fatal(err)
			}
			if w, h := toolTestDecode(t, d); w != 600 || h != 800 {
				t.Errorf("access copy at 2000 of 600×800: %d×%d, want unchanged", w, h)
			}
			if d.Name != "access.jpg" {
				t.Errorf("name %q", d.Name)
			}
			d, err = v.tools.Access(ctx, p, "image/png", 400)
			if err != nil {
				t.Fatal(err)
			}
			if w, h := toolTestDecode(t, d); w != 300 || h != 400 {
				t.Errorf("access copy at 400 of 600×800: %d×%d, want 300×400", w, h)
			}
		})
	}
}

func TestThumbnailTransparentPNG(t *testing.T) {
	img := image.NewNRGBA(image.Rect(0, 0, 80, 40))
	for x := 0; x < 40; x++ {
		for y := 0; y < 40; y++ {
			img.SetNRGBA(x, y, color.NRGBA{0, 0, 0, 0xff})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	p := toolTestFile(t, "alpha.png", b.Bytes())
	for _, v := range toolTestVariants(t) {
		t.Run(v.name, func(t *testing.T) {
			if v.name == "tools" {
				toolTestNeed(t, v.tools.Vipsthumbnail, "vipsthumbnail")
			}
			d, err := v.tools.Thumbnail(context.Background(), p, "image/png", 160)
			if err != nil {
				t.Fatal(err)
			}
			if w, h := toolTestDecode(t, d); w != 160 || h != 80 {
				t.Errorf("%d×%d, want 160×80", w, h)
			}
		})
	}
}

func TestThumbnailBadInput(t *testing.T) {
	ctx := context.Background()
	jpg := gen.JPEG(1, 7, 400, 300)
	pdf := gen.PDF(1, 7, "A document that will be cut in half.")
	cases := []struct {
		name, mediaType string
		data            []byte
		permanent       bool // must fail permanently (otherwise may succeed)
	}{
		{"empty.jpg", "image/jpeg", nil, true},
		{"empty.pdf", "application/pdf", nil, true},
		{"garbage.png", "image/png", []byte("this is not a PNG image at all, just text"), true},
		{"truncated.pdf", "application/pdf", pdf[:len(pdf)/2], true},
		{"archive.zip", "application/zip", []byte("PK\x03\x04 not really"), true},
		// libjpeg renders what there is of a truncated JPEG; Go's decoder
		// refuses it.
		{"truncated.jpg", "image/jpeg", jpg[:len(jpg)/2], false},
	}
	for _, v := range toolTestVariants(t) {
		t.Run(v.name, func(t *testing.T) {
			for _, c := range cases {
				p := toolTestFile(t, c.name, c.data)
				for _, op := range []func(context.Context, string, string, int) (*Derivative, error){v.tools.Thumbnail, v.tools.Access} {
					d, err := op(ctx, p, c.mediaType, 100)
					switch {
					case err == nil && c.permanent:
						t.Errorf("%s: no error", c.name)
					case err == nil:
						toolTestDecode(t, d)
					case errors.Is(err, ErrToolMissing) && v.name == "fallback":
					case !IsPermanent(err):
						t.Errorf("%s: error %v is not permanent", c.name, err)
					default:
						t.Logf("%s: %v", c.name, err)
					}
				}
			}
		})
	}
	if _, err := (Tools{}).Thumbnail(ctx, filepath.Join(t.TempDir(), "missing.jpg"), "image/jpeg", 100); !errors.Is(err, os.ErrNotExist) || IsPermanent(err) {
		t.Errorf("missing file: error %v, want os.ErrNotExist, not permanent", err)
	}
	if _, err := (Tools{}).Thumbnail(ctx, toolTestFile(t, "x.jpg", jpg), "image/jpeg", 0); err == nil {
		t.Error("size 0: no error")
	}
}

func TestThumbnailBracketPath(t *testing.T) {
	tools := toolTestTools(t)
	toolTestNeed(t, tools.Vipsthumbnail, "vipsthumbnail")
	dir := filepath.Join(t.TempDir(), "odd [name]")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "page[1].jpg")
	if err := os.WriteFile(p, gen.JPEG(1, 8, 300, 200), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := tools.Thumbnail(context.Background(), p, "image/jpeg", 90)
	if err != nil {
		t.Fatal(err)
	}
	if w, h := toolTestDecode(t, d); w != 90 || h != 60 {
		t.Errorf("%d×%d, want 90×60", w, h)
	}
}

func TestToolFit(t *testing.T) {
	for _, c := range []struct {
		w, h, size int
		shrink     bool
		ww, wh     int
	}{
		{3000, 4000, 400, false, 300, 400},
		{4000, 3000, 400, true, 400, 300},
		{100, 50, 400, false, 400, 200},
		{100, 50, 400, true, 100, 50},
		{10000, 1, 100, false, 100, 1},
	} {
		if w, h := toolFit(c.w, c.h, c.size, c.shrink); w != c.ww || h != c.wh {
			t.Errorf("toolFit(%d, %d, %d, %v) = %d×%d, want %d×%d", c.w, c.h, c.size, c.shrink, w, h, c.ww, c.wh)
		}
	}
}

// toolTestCPU returns the CPU time used so far by this process and its
// waited-for children.
func toolTestCPU() time.Duration {
	var self, children syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	var d time.Duration
	for _, tv := range []syscall.Timeval{self.Utime, self.Stime, children.Utime, children.Stime} {
		d += time.Duration(tv.Nano())
	}
	return d
}

// BenchmarkThumbnail makes a 400 px thumbnail of a 3000×4000 JPEG with
// vipsthumbnail and with the pure-Go fallback.
func BenchmarkThumbnail(b *testing.B) {
	p := toolTestFile(b, "big.jpg", gen.JPEG(1, 1, 3000, 4000))
	found := toolTestTools(b)
	for _, v := range []struct {
		name  string
		tools Tools
	}{{"vipsthumbnail", found}, {"go", Tools{TempDir: b.TempDir()}}} {
		b.Run(v.name, func(b *testing.B) {
			if v.name == "vipsthumbnail" {
				toolTestNeed(b, v.tools.Vipsthumbnail, "vipsthumbnail")
			}
			cpu := toolTestCPU()
			for b.Loop() {
				if _, err := v.tools.Thumbnail(context.Background(), p, "image/jpeg", 400); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(toolTestCPU()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// TestToolBoxShrink compares the direct readers of toolBoxShrink with the
// generic one (At), on sub-images with odd sizes so that offsets and
// partial edge blocks count.
func TestToolBoxShrink(t *testing.T) {
	r := image.Rect(0, 0, 61, 47)
	var imgs []image.Image
	for _, ratio := range []image.YCbCrSubsampleRatio{
		image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420,
		image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410,
	} {
		m := image.NewYCbCr(r, ratio)
		for y := r.Min.Y; y < r.Max.Y; y++ {
			for x := r.Min.X; x < r.Max.X; x++ {
				m.Y[m.YOffset(x, y)] = uint8(40 + 2*x + y)
				m.Cb[m.COffset(x, y)] = uint8(100 + x/2)
				m.Cr[m.COffset(x, y)] = uint8(150 - y/2)
			}
		}
		imgs = append(imgs, m)
	}
	gray, rgba, nrgba := image.NewGray(r), image.NewRGBA(r), image.NewNRGBA(r)
	pal := image.NewPaletted(r, color.Palette{color.White, color.Black, color.RGBA{200, 10, 10, 255}, color.NRGBA{0, 0, 255, 128}})
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			v := uint8(x*7 + y*13)
			gray.SetGray(x, y, color.Gray{v})
			rgba.SetRGBA(x, y, color.RGBA{v / 2, v / 3, v / 4, 0xff - v/2})
			nrgba.SetNRGBA(x, y, color.NRGBA{v, 255 - v, v / 2, v})
			pal.SetColorIndex(x, y, uint8((x+y)%4))
		}
	}
	imgs = append(imgs, gray, rgba, nrgba, pal)
	type subImager interface {
		SubImage(image.Rectangle) image.Image
	}
	for _, img := range imgs {
		src := img.(subImager).SubImage(image.Rect(3, 5, 60, 44))
		for _, k := range []int{2, 3, 5} {
			got := toolBoxShrink(src, k)
			want := toolBoxShrink(struct{ image.Image }{src}, k) // hides the type: generic path
			if got.Rect != want.Rect || got.Rect.Dx() != (57+k-1)/k || got.Rect.Dy() != (39+k-1)/k {
				t.Fatalf("%T k=%d: bounds %v, generic %v", img, k, got.Rect, want.Rect)
			}
			tol := 2
			if _, ok := img.(*image.YCbCr); ok {
				tol = 4 // chroma is averaged over the samples covering the block
			}
			for i := range got.Pix {
				if d := int(got.Pix[i]) - int(want.Pix[i]); d > tol || d < -tol {
					t.Errorf("%T k=%d: byte %d is %d, generic %d", img, k, i, got.Pix[i], want.Pix[i])
					break
				}
			}
		}
	}
}
