package sqlite

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/shelfmark/shelfmark"
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
// only by its death or by Resign, so two processes never both hold it.
type Elector struct {
	path   string
	poll   time.Duration
	mu     sync.Mutex
	files  map[*os.File]*leadership // nil value: a campaign's file
	closed bool
}

var _ shelfmark.Elector = (*Elector)(nil)

// Elector returns an elector on db's file; poll is how often a campaign
// tries a lock another process holds (0: 1 s). Close it to give up every
// leadership it holds.
func (db *DB) Elector(poll time.Duration) *Elector {
	if poll <= 0 {
		poll = time.Second
	}
	return &Elector{path: db.path, poll: poll, files: map[*os.File]*leadership{}}
}

// errElectorClosed is the error of a campaign on a closed elector.
var errElectorClosed = errors.New("sqlite: elector closed")

// lockPath is the lock file of a name: a name of letters, digits, '-' and
// '_' is used as it is, any other is hex-encoded.
func (e *Elector) lockPath(name string) string {
	plain := name != ""
	for _, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			plain = false
		}
	}
	if !plain {
		name = "x" + hex.EncodeToString([]byte(name))
	}
	return e.path + "-leader-" + name
}

// Campaign implements shelfmark.Elector: it tries the name's lock every
// poll until it holds it or ctx ends.
func (e *Elector) Campaign(ctx context.Context, name string) (shelfmark.Leadership, error) {
	f, err := os.OpenFile(e.lockPath(name), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("sqlite: leadership %s: %w", name, err)
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		f.Close()
		return nil, errElectorClosed
	}
	e.files[f] = nil
	e.mu.Unlock()
	t := time.NewTicker(e.poll)
	defer t.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			e.mu.Lock()
			defer e.mu.Unlock()
			if e.closed {
				f.Close()
				return nil, errElectorClosed
			}
			l := &leadership{e: e, f: f, lost: make(chan struct{})}
			e.files[f] = l
			return l, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			e.forget(f)
			return nil, fmt.Errorf("sqlite: leadership %s: lock %s: %w", name, f.Name(), err)
		}
		select {
		case <-ctx.Done():
			e.forget(f)
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// forget closes a campaign's file and forgets it.
func (e *Elector) forget(f *os.File) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.files[f]; ok {
		delete(e.files, f)
		f.Close()
	}
}

// Close ends every campaign and leadership of the elector, as the death
// of the process would: it closes their files, which releases the locks.
func (e *Elector) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	for f, l := range e.files {
		f.Close()
		if l != nil {
			close(l.lost)
		}
		delete(e.files, f)
	}
	return nil
}

// leadership is a held lock.
type leadership struct {
	e    *Elector
	f    *os.File
	lost chan struct{}
}

// Lost implements shelfmark.Leadership.
func (l *leadership) Lost() <-chan struct{} { return l.lost }

// Resign implements shelfmark.Leadership: closing the file releases the
// lock.
func (l *leadership) Resign() {
	l.e.mu.Lock()
	defer l.e.mu.Unlock()
	if _, ok := l.e.files[l.f]; ok {
		delete(l.e.files, l.f)
		l.f.Close()
		close(l.lost)
	}
}
