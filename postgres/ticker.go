package postgres

import (
	"context"
	"sync"
	"time"
)

// ticker runs a process's own upkeep of the database (the advance of the
// change horizon, the statistics of growing tables) every period until
// stopped.
type ticker struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// startTicker runs fn every period in a goroutine, with a context that
// ends when the ticker is stopped: a run under way when the DB closes is
// cut short rather than waited for.
func startTicker(period time.Duration, fn func(context.Context)) *ticker {
	h := &ticker{}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-h.ctx.Done():
				return
			case <-t.C:
				fn(h.ctx)
			}
		}
	}()
	return h
}

// stop ends the ticker, cancelling a run under way, and waits for it; a
// nil ticker (a DB that failed to open) does nothing.
func (h *ticker) stop() {
	if h == nil {
		return
	}
	h.cancel()
	h.wg.Wait()
}
