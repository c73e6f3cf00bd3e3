package http

// This file links the brute-force limiter (auth.go) to the failures the
// servers of one database share (shelfmark.AuthFailures).

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/shelfmark/shelfmark"
)

// authSyncEvery is how often at most a server reads the keys that must
// wait from the shared failures, and authSyncMax how many at most (those
// that wait longest); authPruneEvery how often it removes the forgotten
// ones; authSharedTimeout bounds each call to the database.
const (
	authSyncEvery     = 2 * time.Second
	authSyncMax       = 10_000
	authPruneEvery    = 5 * time.Minute
	authSharedTimeout = 5 * time.Second
)

// sharedFailures is the limiter's link to the shared failures; without
// them (af nil) its methods do nothing. A failed call to the database is
// logged and the limiter goes on with what it knows.
type sharedFailures struct {
	af  shelfmark.AuthFailures
	log *slog.Logger
	// next is when (Unix ns, on the limiter's clock) the next read of
	// the waiting keys is due; pruned when the last prune ran.
	next, pruned atomic.Int64
	busy         atomic.Bool
	// reads counts the reads of the waiting keys (for tests).
	reads atomic.Int64
}

// newSharedLimiter returns a limiter that shares its failures through af
// (nil: this server's memory only), reading time from now.
func newSharedLimiter(max int, af shelfmark.AuthFailures, log *slog.Logger, now func() time.Time) *limiter {
	l := newLimiter(max, now)
	l.shared.af, l.shared.log = af, log
	if log == nil {
		l.shared.log = slog.Default()
	}
	return l
}

// sync starts a read of the waiting keys in the background when one is
// due; a request never waits for it.
func (l *limiter) sync() {
	sh := &l.shared
	if sh.af == nil {
		return
	}
	now := l.now()
	if now.UnixNano() < sh.next.Load() || !sh.busy.CompareAndSwap(false, true) {
		return
	}
	sh.next.Store(now.Add(authSyncEvery).UnixNano())
	go func() {
		defer sh.busy.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), authSharedTimeout)
		defer cancel()
		fs, err := sh.af.BlockedAuthKeys(ctx, now, min(authSyncMax, l.tracked/2))
		if err != nil {
			sh.log.Warn("brute-force limiter: reading the blocked keys of the other servers failed", "err", err)
			return
		}
		sh.reads.Add(1)
		l.merge(fs, now)
		if last := sh.pruned.Load(); now.UnixNano()-last >= int64(authPruneEvery) && sh.pruned.CompareAndSwap(last, now.UnixNano()) {
			if _, err := sh.af.PruneAuthFailures(ctx, now.Add(-authForget), now); err != nil {
				sh.log.Warn("brute-force limiter: pruning forgotten keys failed", "err", err)
			}
		}
	}()
}

// merge takes in the waiting keys read from the shared failures.
func (l *limiter) merge(fs []shelfmark.AuthFailure, now time.Time) {
	if len(fs) == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	defer func() { l.size.Store(int64(len(l.m))) }()
	for _, sf := range fs {
		f := l.m[sf.Key]
		if f == nil {
			if len(l.m) >= l.tracked {
				l.sweep(now)
			}
			f = &failures{}
			l.m[sf.Key] = f
		}
		f.n = max(f.n, sf.Count)
		if sf.Last.After(f.last) {
			f.last = sf.Last
		}
		if sf.Until.After(f.until) {
			f.until = sf.Until
		}
	}
}

// add counts a failure of each key in the shared failures and returns
// the keys' counts there (nil without shared failures).
func (sh *sharedFailures) add(keys []string, now time.Time) map[string]int {
	if sh.af == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), authSharedTimeout)
	defer cancel()
	counts := make(map[string]int, len(keys))
	for _, k := range keys {
		n, err := sh.af.AddAuthFailure(ctx, k, now, authForget)
		if err != nil {
			sh.log.Warn("brute-force limiter: recording a failure for the other servers failed", "err", err)
			continue
		}
		counts[k] = n
	}
	return counts
}

// block records the waits of keys in the shared failures.
func (sh *sharedFailures) block(blocks map[string]time.Time) {
	if sh.af == nil || len(blocks) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), authSharedTimeout)
	defer cancel()
	for k, until := range blocks {
		if err := sh.af.BlockAuthKey(ctx, k, until); err != nil {
			sh.log.Warn("brute-force limiter: recording a wait for the other servers failed", "err", err)
		}
	}
}

// clear forgets the shared failures of keys that authenticated.
func (sh *sharedFailures) clear(keys []string, now time.Time) {
	if sh.af == nil || len(keys) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), authSharedTimeout)
	defer cancel()
	for _, k := range keys {
		if err := sh.af.ClearAuthFailures(ctx, k, now); err != nil {
			sh.log.Warn("brute-force limiter: forgetting failures for the other servers failed", "err", err)
		}
	}
}
