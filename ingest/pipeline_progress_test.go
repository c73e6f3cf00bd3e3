package ingest

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"testing"
)

// badSource yields n bad items.
type badSource struct{ n, i int }

func (s *badSource) Next(context.Context) (*Item, error) {
	if s.i == s.n {
		return nil, io.EOF
	}
	s.i++
	return nil, &ItemError{Key: fmt.Sprintf("bad:%d", s.i), Reason: "bad on purpose"}
}

func (s *badSource) Close() error { return nil }

// TestPipelineProgressFailures: reporting progress costs the same at the
// thousandth failure as at the first (each call copied every failure so
// far, so a run of n bad items copied n²/2 of them: a 40,000-row manifest
// whose works were all refused took minutes), and Progress sees every
// failure so far.
func TestPipelineProgressFailures(t *testing.T) {
	e := newPipelineEnv(t)
	perFailure := func(n int) float64 {
		calls, seen := 0, 0
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		st, err := Run(context.Background(), e.repo, e.blobs, &badSource{n: n}, Options{Workers: 1, Progress: func(s Stats) {
			calls++
			seen = len(s.Failures)
		}})
		runtime.ReadMemStats(&after)
		if err != nil || st.Failed != int64(n) || len(st.Failures) != n || calls != n || seen != n {
			t.Fatalf("%d bad items: %+v, %v; %d progress calls, the last saw %d failures", n, st.Failed, err, calls, seen)
		}
		return float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
	}
	small, large := perFailure(500), perFailure(8000)
	t.Logf("bytes allocated per failure: %.0f with 500, %.0f with 8000", small, large)
	if large > 2*small+1024 {
		t.Errorf("a failure costs %.0f bytes among 8000 but %.0f among 500: progress grows with the failures so far", large, small)
	}
}
