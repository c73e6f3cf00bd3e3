package setup

import (
	"math"
	"runtime/debug"
	"testing"
)

// keepGC restores the collector's settings when the test ends.
func keepGC(t *testing.T) {
	s := CurrentGC(env(nil))
	pct, limit := s.Percent, s.Limit
	t.Cleanup(func() {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	})
}

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// TestTuneGC: without GOGC and GOMEMLIMIT the pace is GCPercent and the
// limit half of memory; either variable set leaves its setting as it was;
// unknown memory leaves the limit alone.
func TestTuneGC(t *testing.T) {
	keepGC(t)
	const mem = 24 << 30
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	s := TuneGC(env(nil), func() (uint64, bool) { return mem, true })
	if s.Percent != GCPercent || s.Limit != mem/2 || s.PercentFromEnv || s.LimitFromEnv {
		t.Fatalf("without the variables: %+v", s)
	}
	if got := debug.SetGCPercent(100); got != GCPercent {
		t.Errorf("the runtime's pace is %d", got)
	}
	if got := debug.SetMemoryLimit(-1); got != mem/2 {
		t.Errorf("the runtime's limit is %d", got)
	}
	if s.String() != "GOGC 400, GOMEMLIMIT 12288 MiB" {
		t.Errorf("String: %q", s)
	}

	debug.SetGCPercent(150)
	debug.SetMemoryLimit(1 << 30)
	s = TuneGC(env(map[string]string{"GOGC": "150", "GOMEMLIMIT": "1GiB"}), func() (uint64, bool) { return mem, true })
	if s.Percent != 150 || s.Limit != 1<<30 || !s.PercentFromEnv || !s.LimitFromEnv {
		t.Fatalf("with the variables: %+v", s)
	}
	if got := debug.SetGCPercent(100); got != 150 {
		t.Errorf("GOGC set: the runtime's pace became %d", got)
	}

	debug.SetGCPercent(-1) // GOGC=off
	debug.SetMemoryLimit(math.MaxInt64)
	s = TuneGC(env(map[string]string{"GOGC": "off"}), func() (uint64, bool) { return 0, false })
	if s.Percent != -1 || s.Limit != math.MaxInt64 || s.String() != "GOGC off (from the environment), GOMEMLIMIT none" {
		t.Fatalf("GOGC=off, memory unknown: %+v %q", s, s)
	}
}

func TestParseMemory(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"MemTotal:       24576000 kB\nMemFree:  1 kB\n", 24576000 * 1024, true},
		{"MemFree:  1 kB\nMemTotal: 2048 kB\n", 2048 * 1024, true},
		{"MemTotal: 2048\n", 0, false},
		{"MemTotal: x kB\n", 0, false},
		{"MemTotal: 0 kB\n", 0, false},
		{"MemTotal: 99999999999999999999 kB\n", 0, false},
		{"", 0, false},
	} {
		if got, ok := parseMemTotal([]byte(c.in)); got != c.want || ok != c.ok {
			t.Errorf("parseMemTotal(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	for _, c := range []struct {
		in   string
		want uint64
		ok   bool
	}{{"max\n", 0, false}, {"8589934592\n", 8 << 30, true}, {"0\n", 0, false}, {"", 0, false}} {
		if got, ok := parseCgroupMax([]byte(c.in)); got != c.want || ok != c.ok {
			t.Errorf("parseCgroupMax(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	if n, ok := MachineMemory(); ok && n < 1<<20 {
		t.Errorf("MachineMemory: %d bytes", n)
	}
}
