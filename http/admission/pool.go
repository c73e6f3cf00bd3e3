package admission

import (
	"context"
	"sync"
	"time"
)

// pool is the concurrency budget of one class for one group of callers:
// at most limit requests run at once, and at most share of them for one
// client. A request that finds no room waits in the pool's queue, in
// which a freed slot goes to the waiter whose client runs the fewest
// requests of the pool, then to the lightest (the one whose rate share
// is fullest: a person who asks now and then goes ahead of a client that
// asks as fast as it may), then to the earliest: a client with many
// requests running, or one that has been asking without pause, waits
// behind a reader, however many requests it sends.
//
// Of the limit, reserve slots are kept for light clients (those whose
// rate share was nine tenths full or more and that have no other request
// running or waiting in the pool): clients that have been asking as fast
// as their rate allows share the others, so a reader who arrives finds a
// slot at once unless other light clients hold the reserve. A person
// waits for one answer before asking the next; a client that asks while
// its requests are still in the pool is not reading, however full its
// rate share (a storm from fresh addresses opens many connections per
// address at once: only the first request of each is light).
//
// Costs: admitting or releasing is O(1) under the pool's lock when no one
// waits, and O(waiting) when some do (the queue is scanned for the best
// waiter; it holds at most maxWaiting).
type pool struct {
	limit, share, maxWaiting int
	// reserve slots are for light clients only (lightAt or lighter): a
	// reader finds one free however heavy the others are
	reserve int

	mu       sync.Mutex
	running  int
	clients  map[string]*poolClient // clients with a request running or waiting
	waiters  []*waiter
	granted  uint64 // slots granted since the start (queue positions count these)
	admitted uint64 // requests admitted without waiting
	queued   uint64 // requests admitted after waiting
}

// poolClient is what the pool knows of one client.
type poolClient struct {
	running, waiting int
}

// waiter is one request waiting for a slot.
type waiter struct {
	key     string
	client  *poolClient
	ready   chan struct{} // closed when granted
	granted bool
	seq     uint64  // pool.granted when it began to wait
	pos     int     // slots granted to others while it waited
	light   float64 // how light its client is (0 to 1: the share of its rate bucket left)
}

// lightAt is how full a client's rate share must be for it to take a
// reserved slot: nearly full, as a person's is who searches now and then
// (a search a second refills it); a client drops below it at its first
// request in a burst.
const lightAt = 0.9

func newPool(limit, share, maxWaiting, reserve int) *pool {
	limit = max(limit, 1)
	return &pool{limit: limit, share: min(max(share, 1), limit), maxWaiting: max(maxWaiting, 1),
		reserve: min(max(reserve, 0), limit-1), clients: map[string]*poolClient{}}
}

// room reports whether a client as light as light may take a slot now.
// Called with p.mu held.
func (p *pool) room(light float64) bool {
	if light >= lightAt {
		return p.running < p.limit
	}
	return p.running < p.limit-p.reserve
}

// refusal reasons of acquire.
type reason int

const (
	reasonNone      reason = iota
	reasonShare            // the client held its share for the whole wait
	reasonSaturated        // every slot stayed taken for the whole wait, or the queue was full
)

// acquire takes a slot for key, waiting at most shareWait when the client
// already runs its share and at most queueWait when the pool is full;
// light (0 to 1) ranks it among those waiting with as many running. It
// returns how many slots went to others while it waited (its queue
// positions), or the reason it was refused; ctx ending also refuses it
// (reasonSaturated, with ctx's error).
func (p *pool) acquire(ctx context.Context, key string, light float64, shareWait, queueWait time.Duration) (int, reason, error) {
	p.mu.Lock()
	c := p.clients[key]
	if c == nil {
		c = &poolClient{}
		p.clients[key] = c
	}
	if c.running+c.waiting > 0 {
		light = 0 // not reading: it asks again before its answers came
	}
	if c.running < p.share && p.room(light) && len(p.waiters) == 0 {
		c.running++
		p.running++
		p.granted++
		p.admitted++
		p.mu.Unlock()
		return 0, reasonNone, nil
	}
	// No slot now; when the pool is full, a waiter that would rank
	// ahead of every one waiting still waits (for the next slot freed),
	// but the queue is never longer than maxWaiting.
	if len(p.waiters) >= p.maxWaiting {
		p.forget(key, c)
		p.mu.Unlock()
		return 0, reasonSaturated, nil
	}
	overShare := c.running >= p.share
	w := &waiter{key: key, client: c, ready: make(chan struct{}), seq: p.granted, light: light}
	c.waiting++
	p.waiters = append(p.waiters, w)
	p.dispatch()   // a slot may be free for it (those waiting were over their share)
	if w.granted { // at once: admitted, not queued
		p.queued--
		p.admitted++
		p.mu.Unlock()
		return w.pos, reasonNone, nil
	}
	p.mu.Unlock()

	wait := queueWait
	if overShare {
		wait = shareWait
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	var err error
	select {
	case <-w.ready:
		return w.pos, reasonNone, nil
	case <-timer.C:
	case <-ctx.Done():
		err = ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if w.granted { // granted as the wait ended: keep the slot
		return w.pos, reasonNone, nil
	}
	p.remove(w)
	c.waiting--
	p.forget(key, c)
	if err == nil && c.running >= p.share {
		return w.pos, reasonShare, nil
	}
	return w.pos, reasonSaturated, err
}

// release gives back a slot of key's and hands it on.
func (p *pool) release(key string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.clients[key]
	if c == nil || c.running == 0 {
		return // not held: nothing to give back
	}
	c.running--
	p.running--
	p.forget(key, c)
	p.dispatch()
}

// dispatch grants free slots to the best eligible waiters: those whose
// client runs fewer than its share (and, for a reserved slot, is light),
// the client running the fewest first, then the lightest, then the
// earliest. Called with p.mu held.
func (p *pool) dispatch() {
	for p.running < p.limit && len(p.waiters) > 0 {
		best := -1
		for i, w := range p.waiters {
			if w.client.running >= p.share || !p.room(w.light) {
				continue
			}
			if best < 0 {
				best = i
				continue
			}
			b := p.waiters[best]
			if w.client.running < b.client.running || w.client.running == b.client.running && w.light > b.light {
				best = i
			}
		}
		if best < 0 {
			return
		}
		w := p.waiters[best]
		p.waiters = append(p.waiters[:best], p.waiters[best+1:]...)
		w.client.waiting--
		w.client.running++
		p.running++
		w.pos = int(p.granted - w.seq)
		p.granted++
		p.queued++
		w.granted = true
		close(w.ready)
	}
}

// remove takes w out of the queue. Called with p.mu held.
func (p *pool) remove(w *waiter) {
	for i, x := range p.waiters {
		if x == w {
			p.waiters = append(p.waiters[:i], p.waiters[i+1:]...)
			return
		}
	}
}

// forget drops a client that runs and waits for nothing, so the map holds
// only clients present in the pool. Called with p.mu held.
func (p *pool) forget(key string, c *poolClient) {
	if c.running == 0 && c.waiting == 0 {
		delete(p.clients, key)
	}
}

// poolStats is a pool's state at one moment.
type poolStats struct {
	limit, share, running, waiting int
	admitted, queued               uint64
}

func (p *pool) stats() poolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return poolStats{limit: p.limit, share: p.share, running: p.running, waiting: len(p.waiters), admitted: p.admitted, queued: p.queued}
}
