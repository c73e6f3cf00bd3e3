package setup

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/shelfmark/shelfmark/worker"
)

// TestImageLimitFlags: --max-image-pixels and --max-image-bytes reach the
// tools of the pipeline; left out, the bytes limit follows the pixel
// limit; a negative limit is refused.
func TestImageLimitFlags(t *testing.T) {
	parse := func(args ...string) (worker.Tools, error) {
		var c WorkerConfig
		f := pflag.NewFlagSet("worker", pflag.ContinueOnError)
		c.Register(f)
		if err := f.Parse(args); err != nil {
			t.Fatal(err)
		}
		return c.imageLimits(worker.Tools{})
	}
	tools, err := parse()
	if err != nil || tools.MaxPixels != worker.DefaultMaxPixels || tools.MaxImageBytes != 0 {
		t.Errorf("defaults: %d pixels, %d bytes, %v; want %d and 0 (4 bytes a pixel)", tools.MaxPixels, tools.MaxImageBytes, err, worker.DefaultMaxPixels)
	}
	tools, err = parse("--max-image-pixels", "5000000", "--max-image-bytes", "12345678")
	if err != nil || tools.MaxPixels != 5_000_000 || tools.MaxImageBytes != 12_345_678 {
		t.Errorf("set: %d pixels, %d bytes, %v", tools.MaxPixels, tools.MaxImageBytes, err)
	}
	for _, flag := range []string{"--max-image-pixels", "--max-image-bytes"} {
		if _, err := parse(flag, "-1"); err == nil || !strings.Contains(err.Error(), flag+" -1") {
			t.Errorf("%s -1: %v, want an error naming the flag", flag, err)
		}
	}
}
