package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
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
)

// checkpointer keeps the write-ahead log under a limit while read
// transactions overlap without pause.
//
// SQLite's automatic checkpoint (PASSIVE, on the write connection after a
// commit) copies to the database file only the frames no open read
// transaction may still need, and the next writer rewinds the log only when
// every frame was copied and no reader reads from the log. With readers
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
// All its fields but the counters are used under the writer's turn.
type checkpointer struct {
	conn    *sql.DB // one connection, whose busy timeout each attempt sets
	walPath string
	limit   int64

	nextAt int64         // log size that triggers the next attempt
	wait   time.Duration // busy wait of the next attempt

	size     atomic.Int64 // log file size after the last commit
	restarts atomic.Int64 // attempts that rewound the log
	busy     atomic.Int64 // attempts that found readers still busy
	failed   atomic.Int64 // attempts that returned an error
	nanos    atomic.Int64 // time spent in attempts, holding the writer's turn
}

func newCheckpointer(conn *sql.DB, walPath string, limit int64) *checkpointer {
	return &checkpointer{conn: conn, walPath: walPath, limit: limit, nextAt: limit, wait: walFirstWait}
}

// afterCommit runs after each commit, under the writer's turn: one stat of
// the log file, and a checkpoint when the log passed the limit. The commit
// is durable whatever happens here, so a failed checkpoint is counted (and
// tried again later), not returned.
func (c *checkpointer) afterCommit(ctx context.Context) {
	fi, err := os.Stat(c.walPath)
	if err != nil {
		return // no log yet (or it was just removed): nothing to bound
	}
	size := fi.Size()
	c.size.Store(size)
	if size <= c.nextAt {
		if size <= c.limit {
			// back within the limit (rewound by SQLite's automatic
			// checkpoint once the readers left): the backoff is over
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
// and the time they held the writer's turn.
func (db *DB) WALStats() shelfmark.WALStats {
	c := db.ckpt
	if c == nil {
		return shelfmark.WALStats{}
	}
	return shelfmark.WALStats{Bytes: c.size.Load(), Limit: c.limit, Restarts: c.restarts.Load(), Busy: c.busy.Load(), Failed: c.failed.Load(),
		Waited: time.Duration(c.nanos.Load())}
}
