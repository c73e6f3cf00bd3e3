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

// TestCatchUpSteps: a catch-up steps until a step reads nothing; in a run
// loop's trickle mode it steps again at once only after a step that read
// at least half a batch, and stops after the first that read less, even
// with more changes waiting (the loop's notification brings them). An
// error stops it with the total read before.
func TestCatchUpSteps(t *testing.T) {
	ctx := context.Background()
	script := func(reads ...int) (func(context.Context) (int, error), *int) {
		calls := 0
		return func(context.Context) (int, error) {
			calls++
			if calls > len(reads) {
				return 0, nil
			}
			if reads[calls-1] < 0 {
				return 0, errors.New("step failed")
			}
			return reads[calls-1], nil
		}, &calls
	}
	for _, c := range []struct {
		name         string
		reads        []int
		trickle      bool
		total, steps int
		fails        bool
	}{
		{"to the end", []int{8, 7, 1, 3}, false, 19, 5, false},
		{"trickle: a backlog, then the end", []int{8, 7, 4, 1, 3}, true, 20, 4, false},
		{"trickle: one small step", []int{1, 8, 8}, true, 1, 1, false},
		{"trickle: a commit larger than the batch", []int{20, 2}, true, 22, 2, false},
		{"nothing to read", nil, true, 0, 1, false},
		{"an error", []int{8, -1, 8}, false, 8, 2, true},
	} {
		step, calls := script(c.reads...)
		total, err := CatchUpSteps(ctx, 8, c.trickle, step, nil)
		if total != c.total || *calls != c.steps || (err != nil) != c.fails {
			t.Errorf("%s: read %d in %d steps (%v), want %d in %d", c.name, total, *calls, err, c.total, c.steps)
		}
	}
	if backlog(0, 1) || !backlog(1, 1) || !backlog(1, 0) || backlog(499, 1000) || !backlog(500, 1000) {
		t.Error("backlog: half a batch, at least 1")
	}
}
