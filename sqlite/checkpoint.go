package sqlite

import (
	"context"
	"database/sql"
	"time"
)

// checkpointer copies the WAL into the database file from a connection of
// its own, so that no commit waits for it. SQLite's automatic checkpoint is
// turned off on the write connection: it would run inside the commit that
// crosses the threshold, stalling it and every write queued behind it.
type checkpointer struct {
	db     *sql.DB
	stop   chan struct{}
	done   chan struct{}
	kick   chan struct{}
	period time.Duration
}

func startCheckpointer(db *sql.DB, period time.Duration) *checkpointer {
	c := &checkpointer{db: db, stop: make(chan struct{}), done: make(chan struct{}), kick: make(chan struct{}, 1), period: period}
	go c.loop()
	return c
}

func (c *checkpointer) loop() {
	defer close(c.done)
	t := time.NewTicker(c.period)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			// a final full checkpoint leaves a small WAL behind
			c.db.ExecContext(context.Background(), `PRAGMA wal_checkpoint(TRUNCATE)`)
			return
		case <-t.C:
		case <-c.kick:
		}
		// PASSIVE never blocks writers or readers; it copies what it can.
		c.db.ExecContext(context.Background(), `PRAGMA wal_checkpoint(PASSIVE)`)
	}
}

// close stops the checkpointer after a last checkpoint.
func (c *checkpointer) close() {
	close(c.stop)
	<-c.done
}
