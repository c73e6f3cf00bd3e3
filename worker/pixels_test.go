package worker

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"hash/crc32"
	"runtime"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark/bench/gen"
)

// bombPNG returns a small PNG whose header claims w×h RGB pixels; its
// image data holds a few rows of zeros and then ends.
func bombPNG(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		crc := crc32.NewIEEE()
		crc.Write([]byte(typ))
		crc.Write(data)
		b.WriteString(typ)
		b.Write(data)
		binary.Write(&b, binary.BigEndian, crc.Sum32())
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr, w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 2 // 8-bit RGB
	chunk("IHDR", ihdr)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write(make([]byte, 4*(1+3*int(w))))
	zw.Close()
	chunk("IDAT", z.Bytes())
	chunk("IEND", nil)
	return b.Bytes()
}

// TestDecompressionBomb checks that a small file claiming a huge image is
// refused from its header, before any decoder allocates its pixels.
func TestDecompressionBomb(t *testing.T) {
	ctx := context.Background()
	// 10,000 × 10,000 RGB: within 100 megapixels, but 400 MiB decoded,
	// beyond what the pure-Go fallback may hold.
	p := toolTestFile(t, "bomb.png", bombPNG(10_000, 10_000))
	fallback := Tools{TempDir: t.TempDir()}
	for _, op := range []func(context.Context, string, string, int) (*Derivative, error){fallback.Thumbnail, fallback.Access} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := op(ctx, p, "image/png", 400)
		runtime.ReadMemStats(&after)
		if !IsPermanent(err) || !strings.Contains(err.Error(), "vipsthumbnail") {
			t.Errorf("fallback: error %v, want a permanent refusal naming vipsthumbnail", err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
			t.Errorf("fallback: refusing the bomb allocated %d MiB", alloc>>20)
		}
	}

	// 20,000 × 20,000: beyond 100 megapixels, refused on every path
	// before a tool runs.
	huge := toolTestFile(t, "huge.png", bombPNG(20_000, 20_000))
	tools := toolTestTools(t)
	for _, c := range []struct {
		name string
		run  func() error
	}{
		{"fallback", func() error { _, err := fallback.Thumbnail(ctx, huge, "image/png", 400); return err }},
		{"vipsthumbnail", func() error {
			toolTestNeed(t, tools.Vipsthumbnail, "vipsthumbnail")
			_, err := tools.Thumbnail(ctx, huge, "image/png", 400)
			return err
		}},
		{"tesseract", func() error {
			toolTestNeed(t, tools.Tesseract, "tesseract")
			_, _, err := tools.OCR(ctx, huge)
			return err
		}},
	} {
		err := c.run()
		if !IsPermanent(err) || !strings.Contains(err.Error(), "20000×20000 pixels (400 megapixels), beyond the limit of 100 megapixels") {
			t.Errorf("%s: error %v, want a permanent refusal that gives the size and the limit", c.name, err)
		}
	}

	// The limit is configurable.
	small := toolTestFile(t, "small.png", gen.PNG(1, 2, 200, 100))
	if _, err := (Tools{TempDir: t.TempDir(), MaxPixels: 10_000}).Thumbnail(ctx, small, "image/png", 64); !IsPermanent(err) || !strings.Contains(err.Error(), "limit of 0.01 megapixels") {
		t.Errorf("MaxPixels 10,000: error %v", err)
	}
	if _, err := (Tools{TempDir: t.TempDir(), MaxPixels: 20_000}).Thumbnail(ctx, small, "image/png", 64); err != nil {
		t.Errorf("MaxPixels 20,000: %v", err)
	}
}
