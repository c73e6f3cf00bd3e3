package postgres

import (
	"context"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

var _ shelfmark.AuthFailures = (*DB)(nil)

// limiter runs the statements of the brute-force limiter
// (sqlstore.AuthFailures) on the pool, each in a transaction of its own and
// outside the writer lock: they take no sequence number.
func (db *DB) limiter(_ context.Context, _ bool, fn func(sqlstore.Execer) error) error {
	return fn(&writeTx{readTx: readTx{r: db.run(db.pool)}})
}
