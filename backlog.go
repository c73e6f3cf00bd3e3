package shelfmark

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"
)

// DefaultBacklogPerCore is the default backlog limit of each queue per
// processor of the machine (BacklogGate): about a minute of derivatives
// and a few minutes of OCR on a busy two-core machine. A small buffer
// keeps what readers see (thumbnails, tiles, text) minutes behind ingest
// rather than hours, and lets a machine settle at its sustained rate
// within minutes of a bulk load's start; an ingest meant to outrun OCR
// defers it (pauses the queue, which then never counts) instead.
const DefaultBacklogPerCore = 100

// BacklogGate is back-pressure on new files: while a job queue holds more
// jobs than its limit (queued and running, of every server of the
// database), the network's uploads are refused with EUNAVAILABLE and a
// retry_after, so that the background keeps up with the rate ingest can be
// sustained at instead of falling further behind for as long as it lasts.
// A paused queue does not count (its work was deferred on purpose, rule
// R5), nor does a queue without a limit. Counting costs one read of the
// jobs table's counts, taken at most once per Every (a caller that finds
// the count too old reads it, and callers beside it wait for that read);
// a failed count admits (the gate protects the background, it must not
// stop ingest when the count cannot be read).
type BacklogGate struct {
	// Limits is the most jobs each queue may hold before uploads wait (a
	// queue not named, or named with 0, has none).
	Limits map[string]int64
	// Count reads the queues' counts (Repository.QueueCounts as the system).
	Count func(ctx context.Context) ([]QueueCount, error)
	// Now is the clock (default time.Now); Every how old a count may be
	// (default 1 s).
	Now   func() time.Time
	Every time.Duration

	mu      sync.Mutex
	at      time.Time
	counts  map[string]int64
	refused map[string]int64
}

// Admit returns nil when every limited queue is within its limit, and
// otherwise an EUNAVAILABLE error naming the queue, its backlog and limit,
// with retry_after in seconds: longer the further the queue is over.
func (g *BacklogGate) Admit(ctx context.Context) error {
	if g == nil || len(g.Limits) == 0 {
		return nil
	}
	counts := g.read(ctx)
	for _, q := range Queues {
		limit, n := g.Limits[q], counts[q]
		if limit <= 0 || n <= limit {
			continue
		}
		g.mu.Lock()
		if g.refused == nil {
			g.refused = map[string]int64{}
		}
		g.refused[q]++
		g.mu.Unlock()
		// one second, plus one for each whole tenth of the limit it is
		// over, at most 30: the queue's own pace decides when room
		// comes, and a queue just over its limit (the usual state of a
		// paced ingest) has room again within the second
		wait := min(30, 1+int64(math.Floor(10*float64(n-limit)/float64(limit))))
		return &Error{Code: EUNAVAILABLE,
			Message: fmt.Sprintf("The server is %d %s jobs behind (it takes new files while it is at most %d behind); send the file again in %d seconds.", n, q, limit, wait),
			Details: map[string]any{"retry_after": wait, "queue": q, "backlog": n, "limit": limit}}
	}
	return nil
}

// Over reports whether queue holds more jobs than its limit (by a count
// at most Every old): the job runner then lets a job of it past the CPU
// gate, so that the uploads the queue holds back get room again.
func (g *BacklogGate) Over(queue string) bool {
	if g == nil || g.Limits[queue] <= 0 {
		return false
	}
	return g.read(context.Background())[queue] > g.Limits[queue]
}

// Limit returns queue's backlog limit (0: none).
func (g *BacklogGate) Limit(queue string) int64 {
	if g == nil {
		return 0
	}
	return max(g.Limits[queue], 0)
}

// Refused returns how many uploads the gate refused, by the queue that was
// over its limit.
func (g *BacklogGate) Refused() map[string]int64 {
	if g == nil {
		return nil
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make(map[string]int64, len(g.refused))
	for q, n := range g.refused {
		out[q] = n
	}
	return out
}

// read returns the backlog of each unpaused queue, counted at most Every
// ago.
func (g *BacklogGate) read(ctx context.Context) map[string]int64 {
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	every := g.Every
	if every <= 0 {
		every = time.Second
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	t := now()
	if g.counts != nil && t.Sub(g.at) < every && !t.Before(g.at) {
		return g.counts
	}
	cs, err := g.Count(ctx)
	g.at = t
	if err != nil {
		g.counts = map[string]int64{}
		return g.counts
	}
	g.counts = make(map[string]int64, len(cs))
	for _, c := range cs {
		if !c.Paused {
			g.counts[c.Queue] = c.Queued + c.Running
		}
	}
	return g.counts
}
