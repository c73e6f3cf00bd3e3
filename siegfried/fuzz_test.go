package siegfried

import (
	"bytes"
	"context"
	"testing"

	"github.com/shelfmark/shelfmark/bench/gen"
)

// FuzzIdentify: any bytes under any name are identified (possibly as
// UNKNOWN) without a panic, and a known format has a PRONOM id.
func FuzzIdentify(f *testing.F) {
	f.Add(gen.PDF(1, 0, "a page"), "a.pdf")
	f.Add(gen.PNG(1, 0, 8, 8), "a.png")
	f.Add(gen.TIFF(1, 0, 4, 4), "a.tif")
	f.Add(gen.JPEG(1, 0, 8, 8), "a.jpg")
	f.Add([]byte("<?xml version=\"1.0\"?><a/>"), "a.xml")
	f.Add([]byte{}, "empty")
	id, err := New()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		fm, err := id.Identify(context.Background(), bytes.NewReader(data), name, int64(len(data)))
		if err != nil {
			return
		}
		if fm == nil || fm.PRONOM == "" {
			t.Fatalf("no result for %q (%d bytes)", name, len(data))
		}
		if fm.Width < 0 || fm.Height < 0 || fm.Pages < 0 {
			t.Fatalf("negative size %+v", fm)
		}
	})
}
