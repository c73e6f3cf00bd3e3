package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/shelfmark/shelfmark"
)

// Locks are a backend's exclusive locks by name, which Elector campaigns
// for: H is the handle that holds one (an open lock file, a database
// session of its own).
type Locks[H comparable] interface {
	// Open returns a new handle to campaign for name with.
	Open(ctx context.Context, name string) (H, error)
	// TryLock takes name's lock on h without waiting: false when
	// another handle holds it.
	TryLock(ctx context.Context, h H, name string) (bool, error)
	// Check reports an error when h no longer holds its lock (its
	// session ended), nil while it does. It is only called when the
	// Elector was made with a check interval.
	Check(h H) error
	// Close releases h, and the lock it holds; h is not in use.
	Close(h H)
	// Abort breaks h from another goroutine while it may be in use: the
	// lock is released and every later call on h fails.
	Abort(h H)
}

// Elector implements shelfmark.Elector once over a backend's Locks. It
// keeps every handle it opened, so that Close can end every campaign and
// leadership as the death of the process would.
type Elector[H comparable] struct {
	locks  Locks[H]
	prefix string        // starts its errors ("sqlite: ")
	poll   time.Duration // how often a campaign tries a lock another holds
	check  time.Duration // how often a leader checks its lock; 0: never

	mu      sync.Mutex
	handles map[H]*leadership[H] // nil value: a campaign's handle
	closed  bool
}

// errElectorClosed is the error of a campaign on a closed elector.
var errElectorClosed = errors.New("elector closed")

// NewElector returns the elector of locks. A campaign tries a lock
// another process holds every poll (0: 1 s); with check > 0, a leader
// asks Locks.Check every check and takes its leadership as lost at the
// first error. prefix starts its errors.
func NewElector[H comparable](locks Locks[H], prefix string, poll, check time.Duration) *Elector[H] {
	if poll <= 0 {
		poll = time.Second
	}
	return &Elector[H]{locks: locks, prefix: prefix, poll: poll, check: check, handles: map[H]*leadership[H]{}}
}

// Campaign implements shelfmark.Elector: it tries name's lock every poll,
// on a handle of its own, until it holds it or ctx ends.
func (e *Elector[H]) Campaign(ctx context.Context, name string) (shelfmark.Leadership, error) {
	h, err := e.locks.Open(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("%sleadership %s: %w", e.prefix, name, err)
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		e.locks.Close(h)
		return nil, fmt.Errorf("%s%w", e.prefix, errElectorClosed)
	}
	e.handles[h] = nil
	e.mu.Unlock()
	t := time.NewTicker(e.poll)
	defer t.Stop()
	for {
		got, err := e.locks.TryLock(ctx, h, name)
		if err != nil {
			e.forget(h)
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%sleadership %s: %w", e.prefix, name, err)
		}
		if got {
			return e.lead(h)
		}
		select {
		case <-ctx.Done():
			e.forget(h)
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// lead makes the leadership of h, whose lock was just taken (unless the
// elector was closed meanwhile).
func (e *Elector[H]) lead(h H) (shelfmark.Leadership, error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		e.forget(h)
		return nil, fmt.Errorf("%s%w", e.prefix, errElectorClosed)
	}
	l := &leadership[H]{e: e, h: h, lost: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	e.handles[h] = l
	e.mu.Unlock()
	if e.check > 0 {
		go l.watch()
	}
	return l, nil
}

// forget closes a handle and forgets it, once.
func (e *Elector[H]) forget(h H) {
	e.mu.Lock()
	_, ok := e.handles[h]
	delete(e.handles, h)
	e.mu.Unlock()
	if ok {
		e.locks.Close(h)
	}
}

// Close ends every campaign and leadership of the elector, as the death
// of the process would: it breaks their handles (Locks.Abort), which
// releases the locks, and every leadership is lost at once.
func (e *Elector[H]) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	for h, l := range e.handles {
		e.locks.Abort(h)
		if l != nil {
			l.loseOnce.Do(func() { close(l.lost) })
		}
	}
	return nil
}

// Handles returns the handles the elector holds now, campaigning or
// leading: for tests that end a backend's sessions behind its back.
func (e *Elector[H]) Handles() []H {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]H, 0, len(e.handles))
	for h := range e.handles {
		out = append(out, h)
	}
	return out
}

// leadership is a held lock.
type leadership[H comparable] struct {
	e        *Elector[H]
	h        H
	lost     chan struct{} // closed as soon as the leadership is lost
	loseOnce sync.Once
	stop     chan struct{} // closed by Resign
	stopOnce sync.Once
	done     chan struct{} // closed once the handle is closed (with a watch)
}

// Lost implements shelfmark.Leadership.
func (l *leadership[H]) Lost() <-chan struct{} { return l.lost }

// Resign implements shelfmark.Leadership: it closes the handle, which
// releases the lock, and returns once it is closed.
func (l *leadership[H]) Resign() {
	if l.e.check > 0 {
		l.stopOnce.Do(func() { close(l.stop) })
		<-l.done
		return
	}
	l.end()
}

// end loses the leadership and closes its handle.
func (l *leadership[H]) end() {
	l.loseOnce.Do(func() { close(l.lost) })
	l.e.forget(l.h)
}

// watch checks the lock every check until Resign or the first failed
// check, then ends the leadership. It alone uses the handle meanwhile.
func (l *leadership[H]) watch() {
	defer close(l.done)
	defer l.end()
	t := time.NewTicker(l.e.check)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		if l.e.locks.Check(l.h) != nil {
			return
		}
	}
}
