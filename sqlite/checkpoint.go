package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shelfmark/shelfmark"
)

// DefaultWALLimit is the write-ahead log size above which the database
// waits for the readers of old frames so that the log can be rewound.
const DefaultWALLimit = 64 << 20

const (
	// walFirstWait is how long the first attempt waits for readers: the
	// transactions of a GET, a listing or a harvest page last milliseconds.
	walFirstWait = 50 * time.Millisecond
	// walMaxWait caps the wait after attempts that found readers still
	// busy (it doubles each time); the writers' own busy timeout is 10 s.
	walMaxWait = 5 * time.Second
	// passiveEvery is the least time from the start of one passive
	// checkpoint to the start of the next: each copies the pages written
	// since the last, so a page rewritten by many commits in between
	// (an index's root, the sequence row) is written to the database file
	// and synced once, not once per commit.
	passiveEvery = 50 * time.Millisecond
	// walCatchUp is the length of the log, in frames (pages), past which
	// a passive checkpoint is followed by a second holding the writer's
	// turn, so that the next commit rewinds the log: the log then stays
	// within a few MiB (1 MiB at 4 KiB pages, and what is written during
	// one checkpoint) and is reused from its start, rather than growing to
	// the limit.
	walCatchUp = 256
)

// checkpointer copies the write-ahead log into the database file off the
// writers' path, and keeps the log under a limit while read transactions
// overlap without pause.
//
// SQLite's automatic checkpoint is off on the write connection: it runs
// inside COMMIT, after the transaction is durable, so every client of a
// commit that met it waited for a copy of the log and an fsync of the
// database file that its own write did not need, and so did the committer,
// the one serial stage of the writes. Instead each commit wakes a
// goroutine (run) that runs wal_checkpoint(PASSIVE) on a connection of its
// own, at most every passiveEvery, while writers go on. Commits made while
// it copies leave frames behind, and a writer that began before the copy
// ended appends to the log rather than rewinding it; so once the log holds
// more than walCatchUp frames, it copies once more holding the writer's
// turn, a short copy, and the next commit rewinds the log to its start.
// With Options.CheckpointAtLimit no commit wakes it: the log is copied only
// past the limit, as below.
//
// A passive checkpoint copies to the database file only the frames no open
// read transaction may still need, and the next writer rewinds the log only
// when every frame was copied and no reader reads from the log. With readers
// always active some snapshot is always older than the last commit, so the
// log is never rewound and grows with everything written.
//
// Once the log file passes the limit, the commit that sees it, still holding
// the writer's turn, runs wal_checkpoint(RESTART) on a connection of its
// own with a bounded busy wait: it copies the rest of the log, waiting for
// the readers of old frames, then waits until no reader reads from the log
// (readers that begin after the copy read the database file), so the next
// commit writes at the start of the log and journal_size_limit truncates the
// file back to the limit. If readers are still busy when the wait ends, the
// log grows by another quarter of the limit before the next attempt, which
// waits twice as long; after an attempt that worked the wait shrinks by a
// quarter.
//
// nextAt and wait are used under the writer's turn only; the other fields
// are set once or safe for concurrent use.
type checkpointer struct {
	conn    *sql.DB // one connection, whose busy timeout each attempt sets
	walPath string
	limit   int64
	atLimit bool // no passive checkpoints: the log is copied at the limit only

	writeMu *sync.Mutex   // the writer's turn
	hold    sync.Mutex    // held by each round of passive checkpoints (and by tests that hold them off)
	wake    chan struct{} // a commit was made (buffered: one is enough)
	stop    chan struct{} // closed by close
	done    chan struct{} // closed when run returns

	nextAt int64         // log size that triggers the next attempt
	wait   time.Duration // busy wait of the next attempt

	size     atomic.Int64 // log file size after the last commit
	restarts atomic.Int64 // attempts that rewound the log
	busy     atomic.Int64 // attempts that found readers still busy
	failed   atomic.Int64 // attempts that returned an error
	nanos    atomic.Int64 // time spent in attempts, holding the writer's turn

	passives atomic.Int64 // passive checkpoints run
	catchUps atomic.Int64 // of them, those that copied the rest holding the writer's turn
	pfailed  atomic.Int64 // passive checkpoints that returned an error
}

// newCheckpointer returns the checkpointer of the log at walPath and starts
// its passive checkpoints, unless atLimit leaves the log to the limit;
// writeMu is the writer's turn.
func newCheckpointer(conn *sql.DB, walPath string, limit int64, atLimit bool, writeMu *sync.Mutex) *checkpointer {
	c := &checkpointer{conn: conn, walPath: walPath, limit: limit, atLimit: atLimit, nextAt: limit, wait: walFirstWait,
		writeMu: writeMu, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

// close stops the passive checkpoints and waits for the one running.
func (c *checkpointer) close() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	<-c.done
}

// run copies the log into the database file after commits: one passive
// checkpoint at most every passiveEvery, and a second holding the writer's
// turn when the log has passed walCatchUp frames. A failed checkpoint is
// counted and tried again after the next commit; it loses nothing, since
// every frame stays in the log until copied.
func (c *checkpointer) run() {
	defer close(c.done)
	ctx := context.Background()
	for {
		select {
		case <-c.stop:
			return
		case <-c.wake:
		}
		start := time.Now()
		c.hold.Lock()
		log, err := c.passive(ctx)
		if err == nil && log > walCatchUp {
			// Whether or not frames were left, a writer may have begun
			// before the copy ended: its commit then appends to the log
			// rather than rewinding it. Copying once more holding the
			// writer's turn leaves none in flight, and every frame copied.
			c.writeMu.Lock()
			_, err = c.passive(ctx)
			c.writeMu.Unlock()
			c.catchUps.Add(1)
		}
		c.hold.Unlock()
		if err != nil {
			c.pfailed.Add(1)
		}
		select {
		case <-c.stop:
			return
		case <-time.After(time.Until(start.Add(passiveEvery))):
		}
	}
}

// passive runs wal_checkpoint(PASSIVE), which waits for no reader and no
// writer and copies the frames no reader may still need, and returns the
// frames in the log (since it was last rewound); none when another
// checkpoint held the log.
func (c *checkpointer) passive(ctx context.Context) (log int64, err error) {
	c.passives.Add(1)
	var busy, done int64
	if err := c.conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &log, &done); err != nil {
		return 0, fmt.Errorf("passive checkpoint: %w", err)
	}
	if busy != 0 {
		return 0, nil
	}
	return log, nil
}

// afterCommit runs after each commit, under the writer's turn: it wakes
// the passive checkpoints (unless the log is left to the limit), stats the
// log file, and checkpoints when the log passed the limit. The commit is
// durable whatever happens here, so a failed checkpoint is counted (and
// tried again later), not returned.
func (c *checkpointer) afterCommit(ctx context.Context) {
	if !c.atLimit {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
	fi, err := os.Stat(c.walPath)
	if err != nil {
		return // no log yet (or it was just removed): nothing to bound
	}
	size := fi.Size()
	c.size.Store(size)
	if size <= c.nextAt {
		if size <= c.limit {
			// back within the limit (rewound after a passive checkpoint
			// once the readers left): the backoff is over
			c.nextAt = c.limit
		}
		return
	}
	start := time.Now()
	busy, err := c.restart(context.WithoutCancel(ctx), c.wait)
	c.nanos.Add(int64(time.Since(start)))
	if err != nil || busy {
		if err != nil {
			c.failed.Add(1)
		} else {
			c.busy.Add(1)
		}
		c.nextAt = size + c.limit/4
		c.wait = min(2*c.wait, walMaxWait)
		return
	}
	// A wait longer than the readers needed costs nothing (the attempt
	// ends when they do), one too short holds the writers for nothing: keep
	// most of a wait that worked, so the next attempt likely works too.
	c.restarts.Add(1)
	c.nextAt = c.limit
	c.wait = max(walFirstWait, c.wait-c.wait/4)
}

// restart runs wal_checkpoint(RESTART), waiting at most wait for locks held
// by readers (or by a writer of another process). busy reports that it
// could not finish: the log will not be rewound by the next commit.
func (c *checkpointer) restart(ctx context.Context, wait time.Duration) (busy bool, err error) {
	conn, err := c.conn.Conn(ctx)
	if err != nil {
		return false, fmt.Errorf("checkpoint connection: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", wait.Milliseconds())); err != nil {
		return false, fmt.Errorf("checkpoint busy timeout: %w", err)
	}
	var b, log, done int64
	if err := conn.QueryRowContext(ctx, "PRAGMA wal_checkpoint(RESTART)").Scan(&b, &log, &done); err != nil {
		return false, fmt.Errorf("checkpoint: %w", err)
	}
	return b != 0, nil
}

// WALStats reports the write-ahead log: its size after the last commit,
// the limit, the checkpoints that rewound it, found readers busy or failed,
// the time they held the writer's turn, and the passive checkpoints.
func (db *DB) WALStats() shelfmark.WALStats {
	c := db.ckpt
	if c == nil {
		return shelfmark.WALStats{}
	}
	return shelfmark.WALStats{Bytes: c.size.Load(), Limit: c.limit, Restarts: c.restarts.Load(), Busy: c.busy.Load(), Failed: c.failed.Load(),
		Waited: time.Duration(c.nanos.Load()), Passive: c.passives.Load(), CatchUps: c.catchUps.Load(), PassiveFailed: c.pfailed.Load()}
}
