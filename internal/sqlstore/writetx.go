package sqlstore

import "context"

// Execer runs statements, with or without rows, inside one write
// transaction.
type Execer interface {
	Querier
	// Exec runs a statement and returns the rows it affected.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
}

// WriteTx is embedded in both backends' write transactions and implements
// the write methods they run the same way, on the dialect's statements. Its
// reads go through the Tx of the same transaction. Like Tx it costs a few
// words per transaction and no allocation.
type WriteTx struct {
	q Execer
	d *Dialect
	r Tx
}

// NewWriteTx returns the shared write half of a transaction that runs d's
// statements on q.
func NewWriteTx(q Execer, d *Dialect) WriteTx { return WriteTx{q: q, d: d, r: NewTx(q, d)} }
