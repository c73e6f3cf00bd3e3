package worker

import (
	"context"
	"sync/atomic"
	"syscall"
	"time"
)

// CPUGate tells deferrable queues (OCR) when to hold back: it samples the
// CPU time this process used (API, ingest, identification; not the child
// processes) and reports busy while the recent average is above a
// threshold. Child processes run at idle CPU priority already, but on a
// small machine they still slow the foreground through shared caches and
// hyperthreads, so new OCR jobs wait until the process is quiet.
type CPUGate struct {
	threshold float64 // cores
	busy      atomic.Bool
}

// DefaultBusyCores is the CPU use (in cores) of the process above which
// deferrable queues hold back.
const DefaultBusyCores = 0.5

// NewCPUGate returns a gate that reports busy while this process uses more
// than threshold cores on average over the last second or so. Run samples.
func NewCPUGate(threshold float64) *CPUGate {
	return &CPUGate{threshold: threshold}
}

// Busy reports whether the foreground needs the CPU.
func (g *CPUGate) Busy() bool { return g.busy.Load() }

// Run samples every 100 ms until ctx ends.
func (g *CPUGate) Run(ctx context.Context) error {
	const every = 100 * time.Millisecond
	last, at := cpuTime(), time.Now()
	avg := 0.0
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			cur := cpuTime()
			cores := (cur - last).Seconds() / now.Sub(at).Seconds()
			last, at = cur, now
			// an average over about a second; quick to close, slow to open
			avg = 0.9*avg + 0.1*cores
			if cores > g.threshold {
				avg = max(avg, cores)
			}
			g.busy.Store(avg > g.threshold)
		}
	}
}

// cpuTime is the user and system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
