package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// readTxOptions are the options of every View's transaction.
var readTxOptions = pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}

// lazyRead is the querier of a View: a connection on which the read
// transaction begins with the first statement, in the same network write
// (pgx.Batch.BeginTx), not a round trip before it. A read of a few
// statements answers sooner for it, most of all on a busy machine, where
// every round trip waits for the reader to be scheduled again on both
// sides; a View that runs no statement costs none. The snapshot is the
// same as with BEGIN first: a REPEATABLE READ transaction takes it at its
// first statement.
type lazyRead struct {
	conn *pgx.Conn
	tx   pgx.Tx // once begun
}

// begin begins the transaction alone (for a statement that cannot go in a
// batch: one that names its own pgx execution mode, or a COPY).
func (q *lazyRead) begin(ctx context.Context) error {
	if q.tx != nil {
		return nil
	}
	tx, err := q.conn.BeginTx(ctx, readTxOptions)
	if err != nil {
		return fmt.Errorf("%w: %w", errBegin, err)
	}
	q.tx = tx
	return nil
}

// send begins the transaction with sql in one batch and returns the
// batch, whose next result is sql's.
func (q *lazyRead) send(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	return q.sendBatch(ctx, b)
}

// sendBatch sends b, begun by the transaction's BEGIN when it has not
// begun: the batch's results are then those of b's statements.
func (q *lazyRead) sendBatch(ctx context.Context, b *pgx.Batch) (pgx.BatchResults, error) {
	if q.tx != nil {
		return q.tx.SendBatch(ctx, b), nil
	}
	nb := &pgx.Batch{}
	nb.BeginTx(readTxOptions)
	nb.QueuedQueries = append(nb.QueuedQueries, b.QueuedQueries...)
	br := q.conn.SendBatch(ctx, nb)
	q.tx = br.Tx()
	if _, err := br.Exec(); err != nil {
		br.Close()
		return nil, fmt.Errorf("%w: %w", errBegin, err)
	}
	return br, nil
}

// batchable reports whether a statement's arguments may go in a batch:
// not when the first is a pgx option (a batch runs every statement in the
// connection's default mode).
func batchable(args []any) bool {
	if len(args) == 0 {
		return true
	}
	_, mode := args[0].(pgx.QueryExecMode)
	return !mode
}

// firstRows returns the rows of the next statement of br (a batch that
// begins a transaction with one statement, sent with error err) as rows
// whose Close closes br.
func firstRows(br pgx.BatchResults, err error) (pgx.Rows, error) {
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

// firstTag returns the outcome of the next statement of br, as firstRows
// does for a statement that returns no rows, and closes br.
func firstTag(br pgx.BatchResults, err error) (pgconn.CommandTag, error) {
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

// Query implements querier.
func (q *lazyRead) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if q.tx == nil && batchable(args) {
		return firstRows(q.send(ctx, sql, args))
	}
	if err := q.begin(ctx); err != nil {
		return nil, err
	}
	return q.tx.Query(ctx, sql, args...)
}

// Exec implements querier.
func (q *lazyRead) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if q.tx == nil && batchable(args) {
		return firstTag(q.send(ctx, sql, args))
	}
	if err := q.begin(ctx); err != nil {
		return pgconn.CommandTag{}, err
	}
	return q.tx.Exec(ctx, sql, args...)
}

// CopyFrom implements querier.
func (q *lazyRead) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	if err := q.begin(ctx); err != nil {
		return 0, err
	}
	return q.tx.CopyFrom(ctx, table, columns, src)
}

// end ends the transaction, if one began: a COMMIT after a read that
// succeeded, else a ROLLBACK. A failure to end it is not the read's (its
// rows were read in its snapshot, and a READ ONLY transaction has nothing
// to lose): pgx closes a connection left in a transaction rather than
// return it to the pool.
func (q *lazyRead) end(ok bool) {
	if q.tx == nil {
		return
	}
	if !ok {
		rollback(q.tx)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), endTimeout)
	defer cancel()
	_ = q.tx.Commit(ctx)
}

// rollback ends the transaction if it is still open (see rollback).
func (q *lazyRead) rollback() {
	if q.tx != nil {
		rollback(q.tx)
	}
}

// batchRows are the rows of a batch's one query: closing them closes the
// batch, after which the transaction takes the next statement.
type batchRows struct {
	pgx.Rows
	br  pgx.BatchResults
	err error
}

// Close implements pgx.Rows.
func (r *batchRows) Close() {
	r.Rows.Close()
	if r.br != nil {
		r.err = r.br.Close()
		r.br = nil
	}
}

// Err implements pgx.Rows: the rows' error, else the batch's.
func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}
