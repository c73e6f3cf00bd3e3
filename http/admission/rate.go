package admission

import (
	"math"
	"sync"
	"time"
)

// rates is the rate share of one class for one group: each client may
// start rate requests a second, and burst at once after a pause (a token
// bucket per client). The buckets live in a map of at most maxClients;
// when it is full, buckets that have filled up again (their clients
// paused long enough to be forgotten without loss) are swept, and if
// none has, a new client shares one overflow bucket with the others
// that arrived while the map was full, so memory stays bounded however
// many addresses ask.
//
// Costs: O(1) per request under the lock; a sweep is O(maxClients) and
// runs at most once a second (sweepEvery), when a new client finds the
// map full.
type rates struct {
	rate, burst float64
	maxClients  int

	mu      sync.Mutex
	buckets map[string]*bucket
	swept   time.Time // the last sweep
}

// sweepEvery is the least time between two sweeps of a full map.
const sweepEvery = time.Second

type bucket struct {
	tokens float64
	at     time.Time
}

// overflowKey is the bucket of clients that found the map full.
const overflowKey = "\x00overflow"

func newRates(rate, burst float64, maxClients int) *rates {
	return &rates{rate: rate, burst: max(burst, 1), maxClients: max(maxClients, 16), buckets: map[string]*bucket{}}
}

// take takes a token of key's at now. When the bucket is empty it says
// how long until a token comes: a caller that will wait that long
// (at most within) has it reserved (the bucket goes below zero, so those
// waiting are served in turn); a longer wait is refused and takes
// nothing. A rate of 0 or less is no limit.
//
// light is how full the client's bucket was before the take (0 to 1; 1
// without a rate share), which ranks it in a queue: a person who asks
// now and then finds it full, a client that has just asked for several
// does not. A client the map did not hold (new, or forgotten after a
// pause) is light enough for a reserved slot (lightAt) but ranks behind
// a full bucket the server knows: in a storm's first moment fifty new
// addresses do not go ahead of a reader who has been reading.
func (r *rates) take(key string, now time.Time, within time.Duration) (wait time.Duration, light float64, ok bool) {
	if r == nil || r.rate <= 0 {
		return 0, 1, true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	b := r.buckets[key]
	fresh := b == nil
	if b == nil {
		// one place is kept for the overflow bucket
		if len(r.buckets) >= r.maxClients-1 {
			r.sweep(now)
		}
		if len(r.buckets) >= r.maxClients-1 {
			key = overflowKey
			b = r.buckets[key]
		}
		if b == nil {
			b = &bucket{tokens: r.burst, at: now}
			r.buckets[key] = b
		}
	}
	if d := now.Sub(b.at); d > 0 {
		b.tokens = math.Min(r.burst, b.tokens+d.Seconds()*r.rate)
		b.at = now
	}
	light = max(0, b.tokens) / r.burst
	if fresh {
		light = min(light, lightAt)
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0, light, true
	}
	wait = time.Duration((1 - b.tokens) / r.rate * float64(time.Second))
	if wait > within {
		return wait, 0, false
	}
	b.tokens--
	return wait, 0, true
}

// sweep forgets the buckets that are full again at now. Called with r.mu
// held; does nothing within sweepEvery of the last sweep.
func (r *rates) sweep(now time.Time) {
	if now.Sub(r.swept) < sweepEvery {
		return
	}
	r.swept = now
	for k, b := range r.buckets {
		if b.tokens+now.Sub(b.at).Seconds()*r.rate >= r.burst {
			delete(r.buckets, k)
		}
	}
}

// size is the number of clients tracked.
func (r *rates) size() int {
	if r == nil {
		return 0
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.buckets)
}
