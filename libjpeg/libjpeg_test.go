package libjpeg

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// scan is a w × h image of gradients and noise, as a page's scan
// compresses; gray makes it one channel.
func scan(w, h int, gray bool) image.Image {
	r := rand.New(rand.NewPCG(uint64(w), uint64(h)))
	if gray {
		m := image.NewGray(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				m.SetGray(x, y, color.Gray{uint8(x*200/w) + uint8(r.IntN(40))})
			}
		}
		return m
	}
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			n := uint8(r.IntN(30))
			m.SetRGBA(x, y, color.RGBA{uint8(x*200/w) + n, uint8(y*200/h) + n, 120 + n, 255})
		}
	}
	return m
}

// goJPEG encodes m with image/jpeg, the independent implementation.
func goJPEG(t testing.TB, m image.Image, q int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: q}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// diff is the mean and the largest absolute difference of the red,
// green and blue of two images of the same bounds.
func diff(a, b image.Image) (mean float64, most int) {
	r := a.Bounds()
	var sum, n int
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			ar, ag, ab, _ := a.At(x, y).RGBA()
			br, bg, bb, _ := b.At(x, y).RGBA()
			for _, d := range []int{int(ar>>8) - int(br>>8), int(ag>>8) - int(bg>>8), int(ab>>8) - int(bb>>8)} {
				d = max(d, -d)
				sum += d
				most = max(most, d)
				n++
			}
		}
	}
	return float64(sum) / float64(n), most
}

// psnr is the peak signal-to-noise ratio of b against a, in dB.
func psnr(a, b image.Image) float64 {
	r := a.Bounds()
	var se float64
	var n int
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			ar, ag, ab, _ := a.At(x, y).RGBA()
			br, bg, bb, _ := b.At(x, y).RGBA()
			for _, d := range []float64{float64(ar>>8) - float64(br>>8), float64(ag>>8) - float64(bg>>8), float64(ab>>8) - float64(bb>>8)} {
				se += d * d
				n++
			}
		}
	}
	return 10 * math.Log10(255*255/(se/float64(n)))
}

// TestDecodeAsImageJPEG decodes JPEGs written by image/jpeg and compares
// the pixels with image/jpeg's own decoding: the same size and kind of
// image, and the same pixels but for the rounding of two IDCTs and (in
// colour) two ways of upsampling the chroma.
func TestDecodeAsImageJPEG(t *testing.T) {
	for _, c := range []struct {
		w, h int
		gray bool
	}{{1, 1, false}, {1, 1, true}, {17, 33, false}, {512, 512, false}, {513, 300, true}, {250, 351, false}, {1000, 7, true}} {
		src := scan(c.w, c.h, c.gray)
		data := goJPEG(t, src, 90)
		got, err := Decode(data, 0)
		if err != nil {
			t.Fatalf("%d × %d gray %v: %v", c.w, c.h, c.gray, err)
		}
		want, err := jpeg.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if got.Bounds() != want.Bounds() {
			t.Fatalf("%d × %d: bounds %v, want %v", c.w, c.h, got.Bounds(), want.Bounds())
		}
		switch g := got.(type) {
		case *image.Gray:
			if !c.gray {
				t.Fatalf("%d × %d colour decoded as gray", c.w, c.h)
			}
		case *image.RGBA:
			if c.gray {
				t.Fatalf("%d × %d gray decoded as colour", c.w, c.h)
			}
			for i := 3; i < len(g.Pix); i += 4 {
				if g.Pix[i] != 255 {
					t.Fatalf("alpha %d at %d, want opaque", g.Pix[i], i)
				}
			}
		default:
			t.Fatalf("decoded as %T", got)
		}
		mean, most := diff(got, want)
		limit := 1
		if !c.gray {
			limit = 4 // the rounding of the colour conversion, too
		}
		if mean > 0.5 || most > limit {
			t.Errorf("%d × %d gray %v: differs from image/jpeg by %.2f on average, %d at most", c.w, c.h, c.gray, mean, most)
		}
	}
}

// TestEncodeReadByImageJPEG encodes images, subimages among them, and
// reads the JPEGs back with image/jpeg: the same size, gray kept gray,
// and the pixels of the source within what quality 90 loses.
func TestEncodeReadByImageJPEG(t *testing.T) {
	big := scan(300, 200, false).(*image.RGBA)
	bigGray := scan(300, 200, true).(*image.Gray)
	ycc, err := jpeg.Decode(bytes.NewReader(goJPEG(t, big, 95)))
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]image.Image{
		"rgba":         scan(640, 480, false),
		"gray":         scan(33, 17, true),
		"one pixel":    scan(1, 1, false),
		"rgba sub":     big.SubImage(image.Rect(37, 21, 251, 190)),
		"gray sub":     bigGray.SubImage(image.Rect(1, 2, 99, 150)),
		"ycbcr (copy)": ycc,
	} {
		data, err := Encode(src, 90)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: image/jpeg reads no header: %v", name, err)
		}
		_, isGray := src.(*image.Gray)
		if (cfg.ColorModel == color.GrayModel) != isGray {
			t.Errorf("%s: colour model %v", name, cfg.ColorModel)
		}
		back, err := jpeg.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("%s: image/jpeg cannot decode it: %v", name, err)
		}
		r := src.Bounds()
		if back.Bounds().Size() != r.Size() {
			t.Fatalf("%s: %v, want the size of %v", name, back.Bounds(), r)
		}
		// compare with the source moved to (0, 0)
		moved := image.NewRGBA(image.Rect(0, 0, r.Dx(), r.Dy()))
		for y := 0; y < r.Dy(); y++ {
			for x := 0; x < r.Dx(); x++ {
				moved.Set(x, y, src.At(r.Min.X+x, r.Min.Y+y))
			}
		}
		if p := psnr(moved, back); p < 30 {
			t.Errorf("%s: PSNR %.1f dB against the source, want ≥ 30", name, p)
		}
	}
	if _, err := Encode(image.NewRGBA(image.Rect(0, 0, 0, 5)), 90); err == nil {
		t.Error("an empty image encoded")
	}
}

// TestDecodeRect decodes parts of JPEGs (colour with 4:2:0 chroma, grey,
// odd sizes, progressive): each image covers the part asked for, within
// the image, with exactly the pixels the whole image's decoding has
// there.
func TestDecodeRect(t *testing.T) {
	prog, err := os.ReadFile("testdata/progressive.jpg")
	if err != nil {
		t.Fatal(err)
	}
	images := map[string][]byte{
		"colour":      goJPEG(t, scan(517, 300, false), 85),
		"grey":        goJPEG(t, scan(300, 517, true), 85),
		"progressive": prog,
	}
	r := rand.New(rand.NewPCG(3, 4))
	for name, data := range images {
		whole, err := Decode(data, 0)
		if err != nil {
			t.Fatal(err)
		}
		b := whole.Bounds()
		narrower := 0
		for range 40 {
			x0, y0 := r.IntN(b.Dx()), r.IntN(b.Dy())
			want := image.Rect(x0, y0, x0+1+r.IntN(b.Dx()-x0), y0+1+r.IntN(b.Dy()-y0))
			part, err := DecodeRect(data, want, 0)
			if err != nil {
				t.Fatalf("%s %v: %v", name, want, err)
			}
			got := part.Bounds()
			if !want.In(got) || !got.In(b) {
				t.Fatalf("%s %v: decoded %v", name, want, got)
			}
			if Turbo && (got.Min.Y != want.Min.Y || got.Max.Y != want.Max.Y) {
				t.Errorf("%s %v: decoded rows %d to %d", name, want, got.Min.Y, got.Max.Y)
			}
			if got.Dx() < b.Dx() {
				narrower++
			}
			for y := got.Min.Y; y < got.Max.Y; y++ {
				for x := got.Min.X; x < got.Max.X; x++ {
					if part.At(x, y) != whole.At(x, y) {
						t.Fatalf("%s %v: pixel (%d, %d) is %v, the whole image's %v", name, want, x, y, part.At(x, y), whole.At(x, y))
					}
				}
			}
		}
		if Turbo && narrower == 0 {
			t.Errorf("%s: no part was decoded narrower than the image", name)
		}
	}
	if m, err := DecodeRect(images["colour"], image.Rect(600, 0, 700, 10), 0); err != nil || m.Bounds() != image.Rect(0, 0, 517, 300) {
		t.Errorf("a part outside the image: %v %v, want the whole image", m, err)
	}
	if _, err := DecodeRect(images["colour"][:len(images["colour"])/2], image.Rect(0, 250, 10, 300), 0); err == nil {
		t.Error("the rows of the missing half decoded")
	}
}

// TestDecodeRefuses gives Decode what is not a whole JPEG: each is an
// error, none a crash or an image with parts missing.
func TestDecodeRefuses(t *testing.T) {
	good := goJPEG(t, scan(64, 64, false), 90)
	cases := map[string][]byte{
		"empty":         nil,
		"not a jpeg":    []byte("GIF89a, not a JPEG at all"),
		"header only":   good[:20],
		"half the data": good[:len(good)/2],
		"no end marker": good[:len(good)-2],
	}
	// a flipped byte in the middle of the entropy-coded data
	corrupt := append([]byte(nil), good...)
	for i := len(corrupt) / 2; i < len(corrupt)/2+40; i++ {
		corrupt[i] = 0xFF
	}
	cases["corrupt"] = corrupt
	for name, data := range cases {
		if m, err := Decode(data, 0); err == nil {
			t.Errorf("%s: decoded a %v image, want an error", name, m.Bounds())
		}
	}
	// a frame header claiming 60,000 × 60,000 pixels is refused before
	// anything is allocated
	huge := append([]byte(nil), good...)
	sof := bytes.Index(huge, []byte{0xFF, 0xC0})
	if sof < 0 {
		t.Fatal("no SOF0 marker")
	}
	binary.BigEndian.PutUint16(huge[sof+5:], 60000)
	binary.BigEndian.PutUint16(huge[sof+7:], 60000)
	if _, err := Decode(huge, 0); !errors.Is(err, ErrTooLarge) {
		t.Errorf("60,000 × 60,000: %v, want ErrTooLarge", err)
	}
	if _, err := Decode(good, 64*63); !errors.Is(err, ErrTooLarge) {
		t.Errorf("64 × 64 under a limit of 64 × 63: %v, want ErrTooLarge", err)
	}
	if _, err := Decode(good, 64*64); err != nil {
		t.Errorf("64 × 64 under a limit of 64 × 64: %v", err)
	}
}

// TestDecodeCMYK decodes a CMYK JPEG (written by vips, kept in
// testdata): what image/jpeg makes of it, which libjpeg-turbo does not
// convert.
func TestDecodeCMYK(t *testing.T) {
	data, err := os.ReadFile("testdata/cmyk.jpg")
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, err := jpeg.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := got.(*image.CMYK)
	if !ok || c.Rect != image.Rect(0, 0, 24, 16) {
		t.Fatalf("decoded %T %v, want a 24 × 16 *image.CMYK", got, got.Bounds())
	}
	if !bytes.Equal(c.Pix, want.(*image.CMYK).Pix) {
		t.Error("the pixels differ from image/jpeg's")
	}
}

// FuzzDecode decodes any bytes, whole and in part: an error or an image
// the size its header states, never a crash.
func FuzzDecode(f *testing.F) {
	f.Add(goJPEG(f, scan(16, 16, false), 80))
	f.Add(goJPEG(f, scan(9, 20, true), 50))
	f.Add([]byte{0xFF, 0xD8, 0xFF, 0xC0, 0, 11, 8, 0xFF, 0xFF, 0xFF, 0xFF, 1, 1, 0x11, 0})
	if cmyk, err := os.ReadFile("testdata/cmyk.jpg"); err == nil {
		f.Add(cmyk)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		// a part too, chosen by the data's last bytes: an error or an
		// image, never a crash
		if len(data) >= 4 {
			x, y := int(data[len(data)-1]), int(data[len(data)-2])
			part := image.Rect(x, y, x+1+int(data[len(data)-3]), y+1+int(data[len(data)-4]))
			if m, err := DecodeRect(data, part, 1<<20); err == nil && (m.Bounds().Empty() || m.Bounds().Min.X < 0 || m.Bounds().Min.Y < 0) {
				t.Fatalf("asked %v, decoded %v", part, m.Bounds())
			}
		}
		m, err := Decode(data, 1<<20)
		if err != nil {
			return
		}
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(data))
		if err == nil && (m.Bounds().Dx() != cfg.Width || m.Bounds().Dy() != cfg.Height) {
			t.Fatalf("decoded %v, the header says %d × %d", m.Bounds(), cfg.Width, cfg.Height)
		}
	})
}

// BenchmarkDecode decodes a 512 × 512 tile of a scan; BenchmarkEncode
// encodes an 800 × 1,100 region.
func BenchmarkDecode(b *testing.B) {
	data := goJPEG(b, scan(512, 512, false), 85)
	b.SetBytes(512 * 512)
	for b.Loop() {
		if _, err := Decode(data, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	m := scan(800, 1100, false)
	b.SetBytes(800 * 1100)
	for b.Loop() {
		if _, err := Encode(m, 85); err != nil {
			b.Fatal(err)
		}
	}
}
