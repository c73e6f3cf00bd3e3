package shelfmark

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestBacklogGate: a queue over its limit refuses with a wait that grows
// with how far it is over (at most 30 s); a paused queue, a queue without
// a limit and a count that failed admit; a count is read at most once per
// Every.
func TestBacklogGate(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	counts := []QueueCount{{Queue: QueueDerive, Queued: 90, Running: 20}, {Queue: QueueOCR, Queued: 5000, Paused: true}, {Queue: QueueText, Queued: 1 << 20}}
	var reads int
	var fail error
	g := &BacklogGate{Limits: map[string]int64{QueueDerive: 100, QueueOCR: 10}, Now: func() time.Time { return now },
		Count: func(context.Context) ([]QueueCount, error) { reads++; return counts, fail }}
	err := g.Admit(ctx)
	var e *Error
	if !errors.As(err, &e) || e.Code != EUNAVAILABLE || e.Details["queue"] != QueueDerive || e.Details["backlog"] != int64(110) || e.Details["retry_after"] != int64(2) {
		t.Fatalf("110 derive jobs over a limit of 100: %v %v", err, e)
	}
	// the same count within a second
	counts[0].Queued = 10
	if err := g.Admit(ctx); err == nil || reads != 1 {
		t.Errorf("within Every: %v after %d reads", err, reads)
	}
	now = now.Add(time.Second)
	if err := g.Admit(ctx); err != nil || reads != 2 {
		t.Errorf("30 derive jobs: %v after %d reads", err, reads)
	}
	// just over: room comes within the second
	counts[0].Queued = 85
	now = now.Add(time.Second)
	if err := g.Admit(ctx); !errors.As(err, &e) || e.Details["backlog"] != int64(105) || e.Details["retry_after"] != int64(1) {
		t.Errorf("105 derive jobs over a limit of 100: %v", err)
	}
	counts[0].Queued = 100000
	now = now.Add(time.Second)
	if err := g.Admit(ctx); !errors.As(err, &e) || e.Details["retry_after"] != int64(30) {
		t.Errorf("far over: %v", err)
	}
	fail = errors.New("database away")
	now = now.Add(time.Second)
	if err := g.Admit(ctx); err != nil {
		t.Errorf("a count that failed: %v", err)
	}
	if r := g.Refused(); r[QueueDerive] != 4 || len(r) != 1 {
		t.Errorf("refused %v", r)
	}
	if err := (*BacklogGate)(nil).Admit(ctx); err != nil {
		t.Errorf("no gate: %v", err)
	}
}
