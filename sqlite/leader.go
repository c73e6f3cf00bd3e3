package sqlite

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// Elector elects leaders among the processes that open one SQLite
// database (it implements shelfmark.Elector): serve, and the worker or
// command-line processes beside it, all on one machine. A leadership is
// an exclusive flock(2) on a lock file beside the database
// (shelfmark.db-leader-NAME), held by an open file of the leader.
//
// Takeover: the kernel releases the lock when the holder's file is closed,
// which its death (even kill -9) does; a campaign tries the lock every
// Poll (1 s), so another process leads within a second or so. Overlap:
// none. A lock is held by the process as long as it lives and is released
// only by its death or by Resign, so two processes never both hold it
// (and a leader never needs to check its lock).
type Elector = sqlstore.Elector[*os.File]

// Elector returns an elector on db's file; poll is how often a campaign
// tries a lock another process holds (0: 1 s). Close it to give up every
// leadership it holds.
func (db *DB) Elector(poll time.Duration) *Elector {
	return sqlstore.NewElector[*os.File](fileLocks(db.path), "sqlite: ", poll, 0)
}

// fileLocks are the leaders' lock files of the database at the path.
type fileLocks string

// lockPath is the lock file of a name: a name of letters, digits, '-' and
// '_' is used as it is, any other is hex-encoded.
func (p fileLocks) lockPath(name string) string {
	plain := name != ""
	for _, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			plain = false
		}
	}
	if !plain {
		name = "x" + hex.EncodeToString([]byte(name))
	}
	return string(p) + "-leader-" + name
}

// Open implements sqlstore.Locks: it opens (creating) name's lock file.
func (p fileLocks) Open(_ context.Context, name string) (*os.File, error) {
	return os.OpenFile(p.lockPath(name), os.O_RDWR|os.O_CREATE, 0o644)
}

// TryLock implements sqlstore.Locks with flock(LOCK_EX|LOCK_NB).
func (fileLocks) TryLock(_ context.Context, f *os.File, _ string) (bool, error) {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EINTR) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return true, nil
}

// Check implements sqlstore.Locks: a lock is held while its file is open.
func (fileLocks) Check(*os.File) error { return nil }

// Close implements sqlstore.Locks: closing the file releases the lock.
func (fileLocks) Close(f *os.File) { f.Close() }

// Abort implements sqlstore.Locks as Close does.
func (fileLocks) Abort(f *os.File) { f.Close() }
