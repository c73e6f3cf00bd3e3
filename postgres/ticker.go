package postgres

import (
	"sync"
	"time"
)

// ticker runs a process's own upkeep of the database (the advance of the
// change horizon, the statistics of growing tables) every period until
// stopped.
type ticker struct {
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// startTicker runs fn every period in a goroutine.
func startTicker(period time.Duration, fn func()) *ticker {
	h := &ticker{done: make(chan struct{})}
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-h.done:
				return
			case <-t.C:
				fn()
			}
		}
	}()
	return h
}

// stop ends the ticker and waits for its last run; a nil ticker (a DB
// that failed to open) does nothing.
func (h *ticker) stop() {
	if h == nil {
		return
	}
	h.once.Do(func() { close(h.done) })
	h.wg.Wait()
}
