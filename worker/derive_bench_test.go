package worker

import (
	"context"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench/gen"
)

// BenchmarkDerivePage is the work of one derive job on a typical page
// scan (a 2500×3500 colour JPEG), without storage: access copy,
// pyramid and thumbnail, as deriveFile makes them. cpu-ms/op is the CPU
// time of this process and its children per page.
func BenchmarkDerivePage(b *testing.B) {
	p := toolTestFile(b, "page.jpg", gen.JPEG(1, 1, 2500, 3500))
	tools := toolTestTools(b)
	toolTestNeed(b, tools.Vips, "vips")
	toolTestNeed(b, tools.Vipsthumbnail, "vipsthumbnail")
	ctx := context.Background()
	cpu := toolTestCPU()
	for b.Loop() {
		d, err := tools.derivePage(ctx, p, "image/jpeg")
		if err != nil {
			b.Fatal(err)
		}
		d.Close()
	}
	b.ReportMetric(float64(toolTestCPU()-cpu)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	_ = shelfmark.UseAccess
}
