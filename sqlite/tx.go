package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// readTx implements shelfmark.ReadTx inside a View or an Update. Every
// statement goes through exec, query or queryRow, which use cached prepared
// statements and report to the tracer.
type readTx struct {
	sqlstore.Tx
	db    *DB
	pool  *sql.DB
	sqlTx *sql.Tx
}

// writeTx implements shelfmark.WriteTx inside an Update.
type writeTx struct {
	readTx
	sqlstore.WriteTx
}

var (
	_ shelfmark.ReadTx  = (*readTx)(nil)
	_ shelfmark.WriteTx = (*writeTx)(nil)
)

// newReadTx returns the read transaction of sqlTx, begun on pool.
func (db *DB) newReadTx(pool *sql.DB, sqlTx *sql.Tx) *readTx {
	t := &readTx{db: db, pool: pool, sqlTx: sqlTx}
	t.Tx = sqlstore.NewTx(t, &dialect)
	return t
}

// newWriteTx returns the write transaction of sqlTx, begun on pool.
func (db *DB) newWriteTx(pool *sql.DB, sqlTx *sql.Tx) *writeTx {
	t := &writeTx{readTx: readTx{db: db, pool: pool, sqlTx: sqlTx}}
	t.Tx = sqlstore.NewTx(&t.readTx, &dialect)
	t.WriteTx = sqlstore.NewWriteTx(t, &dialect)
	return t
}

func (t *readTx) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	s, err := t.db.prepared(ctx, t.pool, query)
	if err != nil {
		return nil, err
	}
	return t.sqlTx.StmtContext(ctx, s), nil
}

func (t *readTx) exec(ctx context.Context, query string, args ...any) (int64, error) {
	s, err := t.stmt(ctx, query)
	if err != nil {
		return 0, err
	}
	res, err := s.ExecContext(ctx, args...)
	if err != nil {
		return 0, full(fmt.Errorf("%s: %w", firstLine(query), err))
	}
	n, _ := res.RowsAffected()
	if t.db.tracer != nil {
		t.db.tracer(query, n)
	}
	return n, nil
}

// query runs a query and calls scan for each row.
func (t *readTx) query(ctx context.Context, query string, args []any, scan func(sqlstore.Scanner) error) error {
	if t.db.chunked[query] && len(args) <= maxChunkArgs {
		return t.queryChunks(ctx, query, args, scan)
	}
	s, err := t.stmt(ctx, query)
	if err != nil {
		return err
	}
	rows, err := s.QueryContext(ctx, args...)
	if err != nil {
		return full(fmt.Errorf("%s: %w", firstLine(query), err))
	}
	defer rows.Close()
	var n int64
	var rs *rowScanner // made at the first row: an empty answer costs nothing
	for rows.Next() {
		n++
		if rs == nil {
			rs = &rowScanner{rows: rows}
		}
		if err := scan(rs); err != nil {
			return fmt.Errorf("%s: scan: %w", firstLine(query), err)
		}
	}
	if err := rows.Err(); err != nil {
		return full(fmt.Errorf("%s: %w", firstLine(query), err))
	}
	if t.db.tracer != nil {
		t.db.tracer(query, n)
	}
	return nil
}

// queryRow scans the single row of a query into dest; sql.ErrNoRows when
// there is none.
func (t *readTx) queryRow(ctx context.Context, query string, args []any, dest ...any) error {
	found := false
	err := t.query(ctx, query, args, func(r sqlstore.Scanner) error {
		found = true
		return r.Scan(dest...)
	})
	if err != nil {
		return err
	}
	if !found {
		return sql.ErrNoRows
	}
	return nil
}

// EachRow runs a query and calls each for every row: sqlstore.Querier
// over query.
func (t *readTx) EachRow(ctx context.Context, query string, args []any, each func(sqlstore.Scanner) error) error {
	return t.query(ctx, query, args, each)
}

// Exec runs a statement and returns the rows it affected:
// sqlstore.Execer over exec.
func (t *writeTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return t.exec(ctx, query, args...)
}

// direct runs the statements of sqlstore.Direct: a write in a write
// transaction of its own, a read in a read transaction.
func (db *DB) direct(ctx context.Context, write bool, fn func(sqlstore.Execer) error) error {
	if write {
		return db.Update(ctx, func(w shelfmark.WriteTx) error { return fn(w.(*writeTx)) })
	}
	return db.View(ctx, func(r shelfmark.ReadTx) error { return fn(&writeTx{readTx: *r.(*readTx)}) })
}
