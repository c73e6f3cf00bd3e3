package bench

import (
	"testing"
	"time"
)

// TestIIIFFloor: no target, no floor; the floor's buffers are scaled to
// its target within their bounds (4 KiB for a target shorter than any
// hashing, iiifFloorMax for one longer than the scenario's builds), the
// two the same size, and its work takes some time.
func TestIIIFFloor(t *testing.T) {
	if f := newIIIFFloor(0); f != nil {
		t.Fatalf("a floor of no length: %v", f)
	}
	for _, c := range []struct {
		target time.Duration
		size   int
	}{{time.Nanosecond, 4 << 10}, {time.Hour, iiifFloorMax}} {
		f := newIIIFFloor(c.target)
		if len(f.bufs[0]) != c.size || len(f.bufs[1]) != c.size {
			t.Errorf("target %v: buffers of %d and %d bytes, want %d", c.target, len(f.bufs[0]), len(f.bufs[1]), c.size)
		}
		if d := f.run(); d <= 0 {
			t.Errorf("target %v: the work took %v", c.target, d)
		}
	}
}
