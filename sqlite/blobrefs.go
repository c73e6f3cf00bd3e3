package sqlite

import (
	"context"

	"github.com/shelfmark/shelfmark/internal/sqlstore"

	"github.com/shelfmark/shelfmark"
)

var _ shelfmark.BlobReferences = (*DB)(nil)

// ReferencedBlobs implements shelfmark.BlobReferences with one statement
// per call (sqlstore.ReferencedBlobs) in a read transaction.
func (db *DB) ReferencedBlobs(ctx context.Context, shas []string) (out map[string]bool, err error) {
	err = db.View(ctx, func(rtx shelfmark.ReadTx) error {
		out, err = sqlstore.ReferencedBlobs(ctx, rtx.(*readTx), &dialect, shas)
		return err
	})
	return out, err
}
