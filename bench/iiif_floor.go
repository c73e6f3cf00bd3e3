package bench

import (
	"crypto/sha256"
	"sync"
	"time"
)

// iiifFloor is fixed work as long as a manifest's build, timed between the
// build's requests: the machine's own spread for work of that length, in
// the same minutes. Two goroutines each hash a buffer of their own and are
// joined, as a build reads its two halves on two cores and waits for both.
// The work allocates nothing, touches no storage and waits for no lock, so
// what spreads its times is the machine: other processes, the scheduler,
// the processor's caches and clock. A build whose p99 over p50 is near the
// floor's is as steady as the machine lets work of its length be; its p99
// cannot be expected below the floor's.
type iiifFloor struct {
	bufs [2][]byte
}

// iiifFloorMax bounds each of the floor's buffers: 64 MiB is some 40 ms
// of hashing on one core, longer than any build the scenario times.
const iiifFloorMax = 64 << 20

// newIIIFFloor returns a floor whose work takes about target at its
// quickest: it times the work on 1 MiB buffers five times, scales the
// buffers by the quickest of those times, then times it three times at
// that size and scales once more (a short probe is quicker a byte than
// long work, whose buffers no longer fit in the processor's caches). A
// zero target gives no floor.
func newIIIFFloor(target time.Duration) *iiifFloor {
	if target <= 0 {
		return nil
	}
	f := &iiifFloor{}
	size := 1 << 20
	for _, tries := range []int{5, 3} {
		f.fill(size)
		quickest := time.Duration(1<<63 - 1)
		for range tries {
			quickest = min(quickest, f.run())
		}
		size = int(float64(size) * float64(target) / float64(max(quickest, time.Microsecond)))
		size = min(max(size, 4<<10), iiifFloorMax)
	}
	f.fill(size)
	return f
}

// fill gives the floor two buffers of size bytes.
func (f *iiifFloor) fill(size int) {
	for i := range f.bufs {
		b := make([]byte, size)
		for j := range b {
			b[j] = byte(j*131 + i)
		}
		f.bufs[i] = b
	}
}

// run does the floor's work once and returns how long it took.
func (f *iiifFloor) run() time.Duration {
	t0 := time.Now()
	var wg sync.WaitGroup
	for _, b := range f.bufs {
		wg.Go(func() { sha256.Sum256(b) })
	}
	wg.Wait()
	return time.Since(t0)
}
