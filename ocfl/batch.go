package ocfl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// BatchFS is an FS that can make many writes durable at once. A Batch uses
// it to commit versions of many objects with two synchronisations in all,
// instead of one per file and directory (DirFS implements it; an S3 store,
// whose every PUT is durable, need not).
type BatchFS interface {
	FS
	// WriteLater is Write without the durability: when it returns the file
	// is in place whole (or absent, on error) for readers, but it may be
	// lost or torn by a crash until the next Sync returns.
	WriteLater(ctx context.Context, name string, r io.Reader, exclusive bool) error
	// Sync makes every WriteLater that returned before it durable, with the
	// directories they made.
	Sync(ctx context.Context) error
}

// Batch commits new versions of many objects together: Add writes each
// version up to its commit point, and Commit makes them all durable, then
// writes every root inventory (the commit points), then makes those
// durable. On a BatchFS that costs two synchronisations per batch instead
// of several per version; on another FS a Batch is Commit called for each
// version in turn.
//
// A crash before Commit's first synchronisation leaves each object at its
// old head (a version directory beyond the root inventory's head is
// removed by the next recover). A crash after it leaves each object at its
// old head or at its new version: the version's content and inventory are
// durable by then, and a root inventory torn by the crash is restored by
// recover from the newest version inventory that is whole.
//
// Each object's lock is held from its Add until Commit or Abort returns,
// so a Batch must not hold the same object twice, and must be ended with
// Commit or Abort. A Batch is safe for concurrent Add.
type Batch struct {
	root  *Root
	mu    sync.Mutex
	items []*prepared
	ended bool
}

// NewBatch starts a batch of versions of this root.
func (r *Root) NewBatch() *Batch { return &Batch{root: r} }

// write is the write the batch's versions use up to their commit points.
func (b *Batch) write() writeFunc {
	if bfs, ok := b.root.fsys.(BatchFS); ok {
		return bfs.WriteLater
	}
	return b.root.fsys.Write
}

// Add writes version expectedHead+1 of the object id up to its commit
// point, with the checks and cost of Root.Commit. On error nothing of the
// version is left and the batch goes on without it.
func (b *Batch) Add(ctx context.Context, id string, expectedHead int, v NewVersion) error {
	b.mu.Lock()
	for _, pv := range b.items {
		if pv.id == id {
			b.mu.Unlock()
			return fmt.Errorf("ocfl: batch: object %q is in the batch already", id)
		}
	}
	ended := b.ended
	b.mu.Unlock()
	if ended {
		return errors.New("ocfl: batch: already committed or aborted")
	}
	pv, err := b.root.prepare(ctx, id, expectedHead, v, b.write())
	if err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		b.root.discard(ctx, pv.cur, pv.dir, pv.name)
		pv.unlock()
		return errors.New("ocfl: batch: already committed or aborted")
	}
	b.items = append(b.items, pv)
	return nil
}

// Len is the number of versions added.
func (b *Batch) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.items)
}

// sync makes the batch's writes so far durable.
func (b *Batch) sync(ctx context.Context) error {
	if bfs, ok := b.root.fsys.(BatchFS); ok {
		return bfs.Sync(ctx)
	}
	return nil
}

// end takes the batch's versions and marks it ended.
func (b *Batch) end() ([]*prepared, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.ended {
		return nil, errors.New("ocfl: batch: already committed or aborted")
	}
	b.ended = true
	items := b.items
	b.items = nil
	return items, nil
}

// Abort removes every version added and releases their objects.
func (b *Batch) Abort(ctx context.Context) {
	items, _ := b.end()
	for _, pv := range items {
		b.root.discard(ctx, pv.cur, pv.dir, pv.name)
		pv.unlock()
	}
}

// Commit makes every added version the head of its object and durable,
// and returns how many it committed. If the first synchronisation fails,
// no version is committed (each is removed). After it, each version is
// committed unless its root inventory cannot be written; the first such
// error is returned, and whether that object's version took place is
// settled by the next recover (see finish). An error of the last
// synchronisation is returned too: the versions are then in place but may
// not survive a crash, and the caller must not count on them.
func (b *Batch) Commit(ctx context.Context) (int, error) {
	items, err := b.end()
	if err != nil {
		return 0, err
	}
	defer func() {
		for _, pv := range items {
			pv.unlock()
		}
	}()
	if len(items) == 0 {
		return 0, nil
	}
	if err := b.sync(ctx); err != nil {
		for _, pv := range items {
			b.root.discard(ctx, pv.cur, pv.dir, pv.name)
		}
		return 0, fmt.Errorf("ocfl: batch: sync the new versions: %w", err)
	}
	write, link := b.write(), b.root.link(true)
	n := 0
	var first error
	for _, pv := range items {
		obj, err := b.root.finish(ctx, pv, write, link)
		if obj != nil {
			n++ // committed (a root sidecar not written is rewritten by recover)
		} else if first == nil {
			first = err
		}
	}
	if err := b.sync(context.WithoutCancel(ctx)); err != nil && first == nil {
		first = fmt.Errorf("ocfl: batch: sync the root inventories: %w", err)
	}
	return n, first
}
