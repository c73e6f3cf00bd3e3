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
// file, chosen by a hash of dir (two objects may share a byte, and then
// wait for each other; that is all). The lock belongs to the open file, so
// it excludes other processes and other opens in this one.
func (d *DirFS) LockObject(ctx context.Context, dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(d.root, lockFile), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("ocfl: lock %s: %w", dir, err)
	}
	h := fnv.New32a()
	h.Write([]byte(dir))
	off := int64(h.Sum32())
	wait := time.Millisecond
	for {
		ok, err := tryLockRange(f, off)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("ocfl: lock %s: %w", dir, err)
		}
		if ok {
			return func() { f.Close() }, nil
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, fmt.Errorf("ocfl: lock %s: %w", dir, ctx.Err())
		case <-t.C:
		}
		if wait < 50*time.Millisecond {
			wait *= 2
		}
	}
}
