package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// readTx implements shelfmark.ReadTx inside a View or an Update.
type readTx struct {
	sqlstore.Tx
	r runner
}

// writeTx implements shelfmark.WriteTx inside an Update.
type writeTx struct {
	readTx
	sqlstore.WriteTx
	savepoints int  // savepoints opened for COPY (see copyInSavepoint)
	claimed    bool // took change numbers: the horizon moves when it ends
	// pipe carries every statement of the transaction (Pipeline); nil
	// outside a transaction (direct)
	pipe *pipe
}

// newReadTx returns the read transaction of q.
func (db *DB) newReadTx(q querier) *readTx {
	t := &readTx{r: db.run(q)}
	t.Tx = sqlstore.NewTx(t, &dialect)
	return t
}

// newWriteTx returns the write transaction of q.
func (db *DB) newWriteTx(q querier) *writeTx {
	p := &pipe{querier: q}
	t := &writeTx{readTx: readTx{r: db.run(p)}, pipe: p}
	p.trace = t.r.trace
	t.Tx = sqlstore.NewTx(&t.readTx, &dialect)
	t.WriteTx = sqlstore.NewWriteTx(t, &dialect)
	return t
}

// EachRow runs a query and calls each for every row: sqlstore.Querier
// over the runner.
func (t *readTx) EachRow(ctx context.Context, sql string, args []any, each func(sqlstore.Scanner) error) error {
	_, err := t.r.query(ctx, sql, args, func(rows pgx.Rows) error { return each(rows) })
	return err
}

// EachRowOf runs statements in one round trip: sqlstore.Batcher over the
// runner.
func (t *readTx) EachRowOf(ctx context.Context, qs []sqlstore.Batch) error {
	return t.r.batch(ctx, qs)
}

// Exec runs a statement and returns the rows it affected:
// sqlstore.Execer over the runner.
func (t *writeTx) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	return t.r.exec(ctx, sql, args...)
}

// NextSeq implements shelfmark.WriteTx: it claims n numbers (see the
// package documentation, "Parallel commits and the change horizon"). The
// claim is held until the transaction ends; the horizon is advanced then.
func (t *writeTx) NextSeq(ctx context.Context, n int) (int64, error) {
	t.claimed = true
	return t.WriteTx.NextSeq(ctx, n)
}

// AddCounter implements shelfmark.WriteTx. The counter "seq" is the last
// change number taken: adding to it claims that many numbers (as a
// rebuild does to raise it), so it moves only forward.
func (t *writeTx) AddCounter(ctx context.Context, name string, delta int64) (int64, error) {
	if name != seqCounter {
		return t.WriteTx.AddCounter(ctx, name, delta)
	}
	if delta < 1 {
		return 0, fmt.Errorf("postgres: add %d to the counter seq: change numbers only move forward", delta)
	}
	first, err := t.NextSeq(ctx, int(delta))
	if err != nil {
		return 0, err
	}
	return first + delta - 1, nil
}

// seqCounter is the counter that names the last change number taken.
const seqCounter = "seq"

var (
	_ shelfmark.ReadTx  = (*readTx)(nil)
	_ shelfmark.WriteTx = (*writeTx)(nil)
)

// direct runs the statements of sqlstore.Direct on the pool, each its own
// transaction, outside the writer lock (they take no sequence number) and
// committed synchronously whatever Options.Relaxed says (only write
// transactions are relaxed).
func (db *DB) direct(_ context.Context, _ bool, fn func(sqlstore.Execer) error) error {
	return fn(&writeTx{readTx: readTx{r: db.run(db.pool)}})
}
