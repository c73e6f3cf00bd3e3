package setup

import (
	"bytes"
	"strings"
	"testing"
)

// TestProgressPlainLines: without a terminal, progress comes as whole
// lines (no carriage returns or escape codes), the last one at the end.
func TestProgressPlainLines(t *testing.T) {
	for _, total := range []int{1000, -1} {
		var out bytes.Buffer
		bar := newProgress(&out, false, 0, total, "works")
		for i := 0; i < 1000; i++ {
			bar.Add(1)
		}
		bar.Finish()
		s := out.String()
		if strings.ContainsAny(s, "\r\x1b") {
			t.Fatalf("total %d: carriage return or escape code in %q", total, s)
		}
		lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
		if len(lines) == 0 || !strings.Contains(lines[len(lines)-1], "1000") {
			t.Fatalf("total %d: last line %q does not show the final count", total, lines[len(lines)-1])
		}
		for _, l := range lines {
			if strings.TrimSpace(l) == "" {
				t.Fatalf("total %d: empty line in %q", total, s)
			}
		}
	}
	// a long interval prints nothing until the end, then one line
	var out bytes.Buffer
	bar := newProgress(&out, false, 1<<62, 10, "items")
	bar.Add(3)
	bar.Add(7)
	bar.Finish()
	if n := strings.Count(out.String(), "\n"); n != 1 {
		t.Fatalf("%d lines with a long interval: %q", n, out.String())
	}
}
