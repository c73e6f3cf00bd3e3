package ocfl

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"time"
)

// Locker is implemented by an FS that can lock one object against writers
// in other processes (and other Roots over the same storage). A Root takes
// it, when its FS has it, around every commit, recovery and purge of an
// object, besides its own in-process lock. An FS without it (an S3 store)
// relies on there being one writing process per storage root.
type Locker interface {
	// LockObject waits until it holds the lock of the object root dir, or
	// ctx ends; unlock releases it.
	LockObject(ctx context.Context, dir string) (unlock func(), err error)
}

// lockFile is the file in the storage root whose byte ranges lock objects
// (a file at the top of a storage root is ignored by validators, E087).
const lockFile = ".ocfl-lock"

// LockObject implements Locker with a write lock on one byte of the lock
// file, chosen by a hash of dir. The lock belongs to the open file, so it
// excludes other processes and other DirFS values in this one. Two objects
// whose directories hash to the same byte share it within this DirFS (each
// is still excluded from its own directory's other holders): a Batch
// holding one of them must not wait for itself to let go of the other.
func (d *DirFS) LockObject(ctx context.Context, dir string) (func(), error) {
	h := fnv.New32a()
	h.Write([]byte(dir))
	off := int64(h.Sum32())
	wait := time.Millisecond
	for {
		if unlock, ok := d.share(off, dir); ok {
			return unlock, nil
		}
		if !d.sameDirHeld(off, dir) {
			f, err := os.OpenFile(filepath.Join(d.root, lockFile), os.O_RDWR|os.O_CREATE, 0o644)
			if err != nil {
				return nil, fmt.Errorf("ocfl: lock %s: %w", dir, err)
			}
			ok, err := tryLockRange(f, off)
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("ocfl: lock %s: %w", dir, err)
			}
			if ok {
				return d.hold(off, dir, f), nil
			}
			f.Close()
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("ocfl: lock %s: %w", dir, ctx.Err())
		case <-t.C:
		}
		if wait < 50*time.Millisecond {
			wait *= 2
		}
	}
}

// heldByte is a byte of the lock file this DirFS holds, and the object
// directories holding it.
type heldByte struct {
	f    *os.File
	dirs map[string]bool
}

// share takes the byte off for dir when this DirFS holds it already for
// other directories only.
func (d *DirFS) share(off int64, dir string) (func(), bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	hb := d.held[off]
	if hb == nil || hb.dirs[dir] {
		return nil, false
	}
	hb.dirs[dir] = true
	return d.releaser(off, dir), true
}

// sameDirHeld reports whether this DirFS holds the byte off for dir.
func (d *DirFS) sameDirHeld(off int64, dir string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	hb := d.held[off]
	return hb != nil && hb.dirs[dir]
}

// hold records the byte off, just locked through f, as held for dir.
func (d *DirFS) hold(off int64, dir string, f *os.File) func() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.held == nil {
		d.held = map[int64]*heldByte{}
	}
	d.held[off] = &heldByte{f: f, dirs: map[string]bool{dir: true}}
	return d.releaser(off, dir)
}

// releaser returns the release of dir's hold on the byte off: the byte is
// unlocked (its file closed) when no directory holds it any more.
func (d *DirFS) releaser(off int64, dir string) func() {
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		hb := d.held[off]
		if hb == nil || !hb.dirs[dir] {
			return
		}
		delete(hb.dirs, dir)
		if len(hb.dirs) == 0 {
			delete(d.held, off)
			hb.f.Close()
		}
	}
}
