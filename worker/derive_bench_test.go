package worker

import (
	"context"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench/gen"
)

// BenchmarkDerivePage is the work of one derive job on a typical page
// scan (a 2500×3500 colour JPEG), without storage: "job" as derivePage
// does it (access copy, thumbnail and pyramid from one run of vips),
// "two-runs" as it is done for a JPEG with an ICC profile or an EXIF
// orientation (vipsthumbnail for the access copy, then the pyramid and
// the thumbnail). cpu-ms/op is the CPU time of this process and its
// children per page.
func BenchmarkDerivePage(b *testing.B) {
	p := toolTestFile(b, "page.jpg", gen.JPEG(1, 1, 2500, 3500))
	tools := toolTestTools(b)
	toolTestNeed(b, tools.Vips, "vips")
	toolTestNeed(b, tools.Vipsthumbnail, "vipsthumbnail")
	ctx := context.Background()
	for _, v := range []struct {
		name string
		run  func() (*Pyramid, error)
	}{
		{"job", func() (*Pyramid, error) {
			d, err := tools.derivePage(ctx, p, "image/jpeg")
			if err != nil {
				return nil, err
			}
			return d.tiles, nil
		}},
		{"two-runs", func() (*Pyramid, error) {
			access, err := tools.Access(ctx, p, "image/jpeg", AccessSize)
			if err != nil {
				return nil, err
			}
			pyr, _, err := tools.TilesThumbnail(ctx, p, "image/jpeg", ThumbnailSize,
				shelfmark.TileSize{Width: access.Width, Height: access.Height, Use: shelfmark.UseAccess})
			return pyr, err
		}},
	} {
		b.Run(v.name, func(b *testing.B) {
			cpu := toolTestCPU()
			for b.Loop() {
				pyr, err := v.run()
				if err != nil {
					b.Fatal(err)
				}
				pyr.Close()
			}
			b.ReportMetric(float64(toolTestCPU()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkTilesAccess is the in-process part of the access copy made
// from the pyramid of a 2500×3500 colour JPEG: 12 tiles decoded, shrunk
// from 1250×1750 to 1143×1600 and encoded.
func BenchmarkTilesAccess(b *testing.B) {
	p := toolTestFile(b, "page.jpg", gen.JPEG(1, 1, 2500, 3500))
	tools := toolTestTools(b)
	toolTestNeed(b, tools.Vips, "vips")
	dir := b.TempDir()
	if err := tools.dzsave(context.Background(), p, "jpeg", dir); err != nil {
		b.Fatal(err)
	}
	a, err := readDZ(dir + "/p.zip")
	if err != nil {
		b.Fatal(err)
	}
	defer a.zr.Close()
	cpu := toolTestCPU()
	for b.Loop() {
		if _, err := a.access(AccessSize); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(toolTestCPU()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}
