package ui

import (
	"testing"
	"time"
)

// TestAdminRates: the rates come from successive samples of the jobs
// finished, over the last minute.
func TestAdminRates(t *testing.T) {
	var a adminState
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	if r := a.observe(t0, map[string]float64{"ocr": 10}); r.Known {
		t.Fatal("a rate from one sample")
	}
	if r := a.observe(t0.Add(500*time.Millisecond), map[string]float64{"ocr": 11}); r.Known || len(a.samples) != 1 {
		t.Fatalf("a sample within a second of the last was kept: %+v", a.samples)
	}
	r := a.observe(t0.Add(10*time.Second), map[string]float64{"ocr": 30, "text": 5})
	if !r.Known || r.PerQueue["ocr"] != 2 || r.PerQueue["text"] != 0.5 || len(r.Series) != 1 || r.Series[0] != 2.5 {
		t.Fatalf("rates %+v", r)
	}
	// samples older than the window go, but for one to measure from
	for i := 1; i <= 100; i++ {
		r = a.observe(t0.Add(10*time.Second+time.Duration(i)*time.Second), map[string]float64{"ocr": 30 + float64(i)})
	}
	if r.PerQueue["ocr"] != 1 || r.Span < 60 || r.Span > 61 || len(a.samples) > 62 {
		t.Fatalf("after 100 s: %+v, %d samples", r, len(a.samples))
	}
}
