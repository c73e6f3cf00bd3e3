package postgres

import (
	"context"

	"github.com/shelfmark/shelfmark/internal/sqlstore"

	"github.com/shelfmark/shelfmark"
)

var _ shelfmark.BlobReferences = (*DB)(nil)

// ReferencedBlobs implements shelfmark.BlobReferences with one statement
// per call (sqlstore.ReferencedBlobs) on the pool.
func (db *DB) ReferencedBlobs(ctx context.Context, shas []string) (map[string]bool, error) {
	return sqlstore.ReferencedBlobs(ctx, &readTx{r: db.run(db.pool)}, &dialect, shas)
}
