package shelfmark

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestCoalesce: Coalesce waits at least its delay, not at all without
// one, and gives up with the context's error when the context ends.
func TestCoalesce(t *testing.T) {
	ctx := context.Background()
	start := time.Now()
	if err := Coalesce(ctx, 30*time.Millisecond); err != nil || time.Since(start) < 30*time.Millisecond {
		t.Fatalf("Coalesce(30 ms) = %v after %v", err, time.Since(start))
	}
	if err := Coalesce(ctx, 0); err != nil {
		t.Fatalf("Coalesce(0) = %v", err)
	}
	done, cancel := context.WithCancel(ctx)
	cancel()
	if err := Coalesce(done, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Coalesce of an ended context = %v", err)
	}
	if err := Coalesce(done, -1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Coalesce(-1) of an ended context = %v", err)
	}
}
