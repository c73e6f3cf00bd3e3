package sqlite

import (
	"context"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

var _ shelfmark.AuthFailures = (*DB)(nil)

// limiter runs the statements of the brute-force limiter
// (sqlstore.AuthFailures): each write in a write transaction of its own,
// each read in a read transaction.
func (db *DB) limiter(ctx context.Context, write bool, fn func(sqlstore.Execer) error) error {
	if write {
		return db.Update(ctx, func(w shelfmark.WriteTx) error { return fn(w.(*writeTx)) })
	}
	return db.View(ctx, func(r shelfmark.ReadTx) error { return fn(&writeTx{readTx: *r.(*readTx)}) })
}
