package shelfmark

import (
	"context"
	"fmt"
	"time"
)

// Elector campaigns for named leaderships among the processes that share
// one database. At most one process leads a name at a time, as far as the
// database can tell; a process that dies (killed, machine lost) loses its
// leaderships, and another takes them over.
//
// The backends implement it with what their database offers: PostgreSQL
// with a session advisory lock per name on a connection of its own, whose
// liveness the holder checks every second or so; SQLite, where every
// process runs on one machine, with a lock file per name that the kernel
// unlocks when the process dies. Each documents two bounds: how long a
// dead holder keeps the leadership from the others (the takeover time),
// and how long a holder that lost it may still believe it leads (the
// overlap, during which two processes run the same task).
//
// The tasks run under leadership (the OAI-PMH projector, the search
// indexer, the access sweep, the blob collector) are safe to run twice at
// once, and leadership only saves the wasted work: each step of the
// projector and the indexer is a transaction that advances a checkpoint
// counter, and a step that finds the counter moved by another rolls back;
// the sweep writes a change only once (the second finds nothing due); the
// blob collector removes only bytes no file refers to. So a brief overlap
// costs a rolled-back step, never wrong data.
type Elector interface {
	// Campaign waits until this process leads name, and returns the
	// leadership; or returns ctx's error when ctx ends first, or another
	// error when the database cannot be reached (the caller tries again
	// later).
	Campaign(ctx context.Context, name string) (Leadership, error)
}

// Leadership is one leadership an Elector won.
type Leadership interface {
	// Lost is closed when the leadership is lost: its hold on the
	// database failed (the connection broke or stopped answering), the
	// elector was closed, or Resign was called.
	Lost() <-chan struct{}
	// Resign gives the leadership up; another process may take it at
	// once. It is safe to call more than once, and after a loss.
	Resign()
}

// LeadOptions configure Lead.
type LeadOptions struct {
	// Retry is how long Lead waits after a campaign failed (the database
	// could not be reached) before it campaigns again; default 2 s.
	Retry time.Duration
	// OnChange, when set, learns each time this process gains (true) or
	// loses (false) the leadership.
	OnChange func(name string, leading bool)
	// OnError, when set, learns of failed campaigns and of fn's errors.
	OnError func(name string, err error)
}

// Lead runs fn while this process leads name, and again each time it
// gains the leadership anew, until ctx ends; it then returns ctx's error.
// fn's context is cancelled when the leadership is lost, and Lead waits
// for fn to return before it campaigns again, so one process never runs
// two copies of fn. fn should return soon after its context ends (a
// background loop's Run does).
//
// When fn returns by itself while it still leads, Lead resigns: with fn's
// error when there is one, which Lead then returns (as a loop that stopped
// would), or with nil, after which Lead returns nil.
func Lead(ctx context.Context, e Elector, name string, fn func(ctx context.Context) error, opts LeadOptions) error {
	if opts.Retry <= 0 {
		opts.Retry = 2 * time.Second
	}
	for {
		l, err := e.Campaign(ctx, name)
		if ctx.Err() != nil {
			if l != nil {
				l.Resign()
			}
			return ctx.Err()
		}
		if err != nil {
			if opts.OnError != nil {
				opts.OnError(name, fmt.Errorf("campaign for %s: %w", name, err))
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(opts.Retry):
			}
			continue
		}
		if opts.OnChange != nil {
			opts.OnChange(name, true)
		}
		err, lost := runLeading(ctx, l, fn)
		l.Resign()
		if opts.OnChange != nil {
			opts.OnChange(name, false)
		}
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case lost:
			continue // campaign again: another process leads meanwhile
		case err != nil:
			if opts.OnError != nil {
				opts.OnError(name, err)
			}
			return err
		default:
			return nil
		}
	}
}

// runLeading runs fn until it returns, cancelling its context when l is
// lost or ctx ends; lost reports whether the leadership was lost.
func runLeading(ctx context.Context, l Leadership, fn func(context.Context) error) (err error, lost bool) {
	fctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- fn(fctx) }()
	select {
	case err = <-done:
	case <-l.Lost():
		cancel()
		err = <-done
		return err, true
	}
	select {
	case <-l.Lost():
		return err, true
	default:
		return err, false
	}
}
