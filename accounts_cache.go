package shelfmark

import (
	"crypto/sha256"
	"slices"
	"time"
)

// cachedCaller is a successful Authenticate remembered for CacheTTL.
type cachedCaller struct {
	c       Caller
	until   time.Time // end of the cache entry
	expires time.Time // the token's own expiry (zero: none)
}

// cached returns a copy of a remembered caller.
func (a *Accounts) cached(h [sha256.Size]byte, now time.Time) (*Caller, bool) {
	if a.opts.CacheTTL < 0 {
		return nil, false
	}
	a.mu.Lock()
	e, ok := a.cache[h]
	a.mu.Unlock()
	if !ok || !now.Before(e.until) || (!e.expires.IsZero() && !now.Before(e.expires)) {
		return nil, false
	}
	c := e.c
	c.Groups = slices.Clone(c.Groups)
	return &c, true
}

// remember keeps a successful lookup for CacheTTL. When the cache is full,
// stale entries go, and if none were stale, all of them.
func (a *Accounts) remember(h [sha256.Size]byte, c *Caller, now, expires time.Time) {
	if a.opts.CacheTTL < 0 {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.cache) >= a.opts.CacheSize {
		for k, e := range a.cache {
			if !now.Before(e.until) {
				delete(a.cache, k)
			}
		}
		if len(a.cache) >= a.opts.CacheSize {
			clear(a.cache)
		}
	}
	cc := *c
	cc.Groups = slices.Clone(c.Groups)
	a.cache[h] = cachedCaller{c: cc, until: now.Add(a.opts.CacheTTL), expires: expires}
}

// evict forgets the remembered callers that match.
func (a *Accounts) evict(match func(*Caller) bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, e := range a.cache {
		if match(&e.c) {
			delete(a.cache, k)
		}
	}
}
