package postgres

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shelfmark/shelfmark"
)

// pipe is the querier of a write transaction: it passes every statement
// to the transaction, except that inside Pipeline (shelfmark.Pipeliner) a
// statement that returns no rows is queued instead, and the queue goes to
// the server in one round trip (PostgreSQL's pipeline, a pgx.Batch) when
// Pipeline ends or before any other statement, so that the statements
// still run in the order they were made. A group commit's writes (the
// resources, their owners, fields and audit entries) then cost one round
// trip rather than one each.
//
// The transaction begins with its first statement as well: its BEGIN (and
// the statements that take the writer lock and set its durability) go to
// the server in the same batch as that statement, not a round trip before
// it. A transaction that runs no statement never begins.
type pipe struct {
	querier // the connection
	trace   func(sql string, rows int64)
	// begin holds the statements that begin the transaction until they
	// are sent (write's begin, never modified)
	begin []string
	on    bool
	batch pgx.Batch
	sqls  []string
}

// begun reports whether the transaction's BEGIN has been sent.
func (p *pipe) begun() bool { return p.begin == nil }

// beginAlone sends what begins the transaction by itself (before a
// statement that cannot go in a batch: a COPY, or one that names its own
// execution mode), as one simple query.
func (p *pipe) beginAlone(ctx context.Context) error {
	if p.begun() {
		return nil
	}
	begin := p.begin
	p.begin = nil
	if _, err := p.querier.Exec(ctx, strings.Join(begin, "; ")); err != nil {
		return fmt.Errorf("begin write transaction: %w", err)
	}
	return nil
}

// sendBegun sends b, preceded by what begins the transaction when it has
// not begun, and returns the results of b's own statements.
func (p *pipe) sendBegun(ctx context.Context, b *pgx.Batch) (pgx.BatchResults, error) {
	sender := p.querier.(batchSender)
	if p.begun() {
		return sender.SendBatch(ctx, b), nil
	}
	begin := p.begin
	p.begin = nil
	nb := &pgx.Batch{}
	for _, sql := range begin {
		nb.Queue(sql)
	}
	nb.QueuedQueries = append(nb.QueuedQueries, b.QueuedQueries...)
	br := sender.SendBatch(ctx, nb)
	for range begin {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return nil, fmt.Errorf("begin write transaction: %w", err)
		}
	}
	return br, nil
}

// add queues sql when the pipe is on and the statement can go in a batch:
// it has arguments (a statement without them may be several commands,
// which only the simple protocol runs) and names no execution mode of its
// own. It reports whether it queued it.
func (p *pipe) add(sql string, args []any) bool {
	if !p.on || len(args) == 0 || !batchable(args) {
		return false
	}
	p.batch.Queue(sql, args...)
	p.sqls = append(p.sqls, sql)
	return true
}

// drop forgets what is queued, unsent.
func (p *pipe) drop() {
	p.batch = pgx.Batch{}
	p.sqls = p.sqls[:0]
}

// send runs what is queued, in one round trip, and reports each statement
// to the tracer with the rows it affected. The first statement that fails
// ends the batch (the server skips the rest): its error, naming the
// statement, is send's.
func (p *pipe) send(ctx context.Context) error {
	if len(p.sqls) == 0 {
		return nil
	}
	batch, sqls := p.batch, p.sqls
	p.batch, p.sqls = pgx.Batch{}, nil
	br, err := p.sendBegun(ctx, &batch)
	if err != nil {
		for _, sql := range sqls {
			p.trace(sql, 0)
		}
		return unavailable(full(err))
	}
	for i, sql := range sqls {
		if err != nil {
			p.trace(sql, 0)
			continue
		}
		var tag pgconn.CommandTag
		tag, err = br.Exec()
		p.trace(sql, tag.RowsAffected())
		if err != nil {
			err = fmt.Errorf("queued statement %d of %d (%s): %w", i+1, len(sqls), firstWords(sql), err)
		}
	}
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("queued statements: %w", cerr)
	}
	return unavailable(full(err))
}

// firstWords is the start of a statement, for an error message.
func firstWords(sql string) string {
	sql = strings.Join(strings.Fields(sql), " ")
	if len(sql) > 40 {
		sql = sql[:40] + "…"
	}
	return sql
}

// one sends sql alone, beginning the transaction with it when it has
// not begun; its result is the next of the batch returned.
func (p *pipe) one(ctx context.Context, sql string, args []any) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	b.Queue(sql, args...)
	return p.sendBegun(ctx, b)
}

// Exec implements querier: it sends what is queued first.
func (p *pipe) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if err := p.send(ctx); err != nil {
		return pgconn.CommandTag{}, err
	}
	if p.begun() || !batchable(args) {
		if err := p.beginAlone(ctx); err != nil {
			return pgconn.CommandTag{}, err
		}
		return p.querier.Exec(ctx, sql, args...)
	}
	return firstTag(p.one(ctx, sql, args))
}

// Query implements querier: it sends what is queued first.
func (p *pipe) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if err := p.send(ctx); err != nil {
		return nil, err
	}
	if p.begun() || !batchable(args) {
		if err := p.beginAlone(ctx); err != nil {
			return nil, err
		}
		return p.querier.Query(ctx, sql, args...)
	}
	return firstRows(p.one(ctx, sql, args))
}

// CopyFrom implements querier: it sends what is queued first.
func (p *pipe) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	if err := p.send(ctx); err != nil {
		return 0, err
	}
	if err := p.beginAlone(ctx); err != nil {
		return 0, err
	}
	return p.querier.CopyFrom(ctx, table, columns, src)
}

// sendBatch sends b on the transaction, after what is queued
// (runner.batch).
func (p *pipe) sendBatch(ctx context.Context, b *pgx.Batch) (pgx.BatchResults, error) {
	if err := p.send(ctx); err != nil {
		return nil, err
	}
	return p.sendBegun(ctx, b)
}

// batchSender is what pgx.Tx, pgxpool.Pool and pgxpool.Conn (a write
// transaction's connection) have beside querier.
type batchSender interface {
	SendBatch(context.Context, *pgx.Batch) pgx.BatchResults
}

// Pipeline implements shelfmark.Pipeliner: the statements of fn that
// return no rows are queued and sent together when fn returns (or before
// a statement of fn that returns rows). When fn fails, what is queued is
// dropped unsent: the transaction is rolled back. A Pipeline inside
// another is part of it.
func (t *writeTx) Pipeline(ctx context.Context, fn func() error) error {
	if t.pipe == nil || t.pipe.on {
		return fn()
	}
	t.pipe.on = true
	err := fn()
	t.pipe.on = false
	if err != nil {
		t.pipe.drop()
		return err
	}
	return t.pipe.send(ctx)
}

var _ shelfmark.Pipeliner = (*writeTx)(nil)
