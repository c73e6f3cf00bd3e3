package iiif

// This file caches the manifests served to anonymous callers (what
// viewers on other sites ask for), and keeps them from going stale by
// following the repository's change sequence: every committed change of a
// resource gives its row a new Seq, and ChangeReadTx.Changes lists the
// rows changed after a Seq, never one before every lower number's
// transaction has ended. Before a cached
// manifest is served the cache reads the changes committed since it last
// looked (one statement when there are none) and drops every manifest one
// of them touches: a change of the work, of one of its pages (the work is
// the page's parent) or of one of their files (a page is the file's
// parent), including new pages and files and deletions. A change of the
// work's row alone (visibility, metadata, order) also gives it a new
// Version, which the cache compares too. An embargo or lease that ends
// changes visibility without a commit, so an entry lives no longer than
// the earliest such date among the work and its pages. Signed-in callers
// see what their roles allow and are never served from the cache.

import (
	"bytes"
	"context"
	"sync"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/shelfmark/shelfmark"
)

const (
	// iiifCacheEntries caps the manifests kept; past it the cache is
	// emptied (a simple bound: entries are rebuilt as asked for).
	iiifCacheEntries = 256
	// iiifChangeBatch is how many changes one read of the change sequence
	// takes; iiifChangeBudget how many the cache follows at once before
	// it gives up following and starts afresh (empty, at the newest Seq).
	iiifChangeBatch  = 256
	iiifChangeBudget = 4 * iiifChangeBatch
)

// iiifCache holds built manifests by work id and base URL.
type iiifCache struct {
	mu sync.Mutex
	// mark is the Seq up to which changes were followed; known once the
	// first lookup found the newest Seq.
	mark  int64
	known bool
	// entries by work id + base URL; byKey indexes them by the keys of the
	// resources they were built from (work and pages).
	entries map[string]*iiifEntry
	byKey   map[int64]map[string]bool
}

// iiifEntry is one cached manifest. Only gz changes once it is kept, and
// only through gzipped.
type iiifEntry struct {
	version int64
	expires time.Time // zero: none
	body    []byte
	// etag is the body's ETag (kit.BodyETag), hashed once rather than at
	// every request (a book's manifest is near a megabyte)
	etag string
	keys []int64
	// built is when the manifest was built: as long as the entry is kept,
	// no change it depends on came after, so it is the manifest's
	// Last-Modified
	built time.Time
	// gz is the body gzipped, made at the first request that accepts it
	// and served as it is from then on
	gzOnce sync.Once
	gz     []byte
}

// gzipped returns the body gzipped (at the default level: it is made once
// per entry), or nil if it could not be.
func (e *iiifEntry) gzipped() []byte {
	e.gzOnce.Do(func() {
		var b bytes.Buffer
		zw, err := gzip.NewWriterLevel(&b, gzip.DefaultCompression)
		if err != nil {
			return
		}
		if _, err := zw.Write(e.body); err != nil || zw.Close() != nil {
			return
		}
		e.gz = b.Bytes()
	})
	return e.gz
}

// newestSeq finds the highest Seq the change sequence holds by halving
// (about 62 reads of one row each, once per server).
func newestSeq(ctx context.Context, store shelfmark.Storage) (int64, error) {
	lo, hi := int64(0), int64(1)<<62 // a Seq above lo exists; none above hi
	has := func(after int64) (bool, error) {
		var ok bool
		err := store.View(ctx, func(tx shelfmark.ReadTx) error {
			rows, err := tx.Changes(ctx, after, 1)
			ok = len(rows) > 0
			return err
		})
		return ok, err
	}
	if ok, err := has(0); err != nil || !ok {
		return 0, err
	}
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := has(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi, nil
}

// follow reads the changes after c.mark and drops the entries they touch
// (and, with watch, reports whether one touches watch's keys); past the
// budget it empties the cache and starts again at the newest Seq. It is
// called with c.mu held.
func (c *iiifCache) follow(ctx context.Context, store shelfmark.Storage, watch map[int64]bool) (touched bool, err error) {
	if !c.known {
		if c.mark, err = newestSeq(ctx, store); err != nil {
			return false, err
		}
		c.known = true
		return watch != nil, nil // what came before is unknown to watch
	}
	for n := 0; ; n += iiifChangeBatch {
		if n >= iiifChangeBudget {
			c.entries, c.byKey = nil, nil
			c.known = false
			return true, nil
		}
		var rows []*shelfmark.ResourceRow
		err := store.View(ctx, func(tx shelfmark.ReadTx) error {
			var err error
			rows, err = tx.Changes(ctx, c.mark, iiifChangeBatch)
			return err
		})
		if err != nil {
			return false, err
		}
		for _, row := range rows {
			for _, k := range []int64{row.Key, row.Parent} {
				if watch[k] {
					touched = true
				}
				for id := range c.byKey[k] {
					c.drop(id)
				}
			}
			c.mark = max(c.mark, row.Seq)
		}
		if len(rows) < iiifChangeBatch {
			return touched, nil
		}
	}
}

// drop removes an entry and its index. Called with c.mu held.
func (c *iiifCache) drop(id string) {
	e := c.entries[id]
	if e == nil {
		return
	}
	delete(c.entries, id)
	for _, k := range e.keys {
		delete(c.byKey[k], id)
		if len(c.byKey[k]) == 0 {
			delete(c.byKey, k)
		}
	}
}

// get returns the cached manifest of a work at its version (nil when
// none), after following the changes since the last look; the mark is
// where a manifest built now starts from.
func (c *iiifCache) get(ctx context.Context, store shelfmark.Storage, id string, version int64, now time.Time) (entry *iiifEntry, mark int64, known bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.follow(ctx, store, nil); err != nil {
		return nil, 0, false, err
	}
	if e := c.entries[id]; e != nil {
		if e.version == version && (e.expires.IsZero() || now.Before(e.expires)) {
			return e, c.mark, c.known, nil
		}
		c.drop(id)
	}
	return nil, c.mark, c.known, nil
}

// put keeps a manifest built from the state at mark, unless a change
// since mark touches one of keys (the manifest may have missed it); kept
// reports whether it did.
func (c *iiifCache) put(ctx context.Context, store shelfmark.Storage, id string, mark int64, e *iiifEntry) (kept bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.known || c.mark < mark {
		return false, nil
	}
	watch := make(map[int64]bool, len(e.keys))
	for _, k := range e.keys {
		watch[k] = true
	}
	// the changes after mark that others followed already, then the new
	// ones (which follow reads for every entry)
	ahead := c.mark
	after, n := mark, 0
scan:
	for after < ahead {
		if n >= iiifChangeBudget {
			return false, nil // too busy to tell: not kept
		}
		var rows []*shelfmark.ResourceRow
		err := store.View(ctx, func(tx shelfmark.ReadTx) error {
			var err error
			rows, err = tx.Changes(ctx, after, iiifChangeBatch)
			return err
		})
		if err != nil {
			return false, err
		}
		n += len(rows)
		for _, row := range rows {
			if row.Seq > ahead {
				break scan
			}
			if watch[row.Key] || watch[row.Parent] {
				return false, nil
			}
			after = row.Seq
		}
		if len(rows) < iiifChangeBatch {
			break
		}
	}
	touched, err := c.follow(ctx, store, watch)
	if err != nil || touched {
		return false, err
	}
	if len(c.entries) >= iiifCacheEntries {
		c.entries, c.byKey = nil, nil
	}
	if c.entries == nil {
		c.entries, c.byKey = map[string]*iiifEntry{}, map[int64]map[string]bool{}
	}
	c.drop(id)
	c.entries[id] = e
	for _, k := range e.keys {
		if c.byKey[k] == nil {
			c.byKey[k] = map[string]bool{}
		}
		c.byKey[k][id] = true
	}
	return true, nil
}
