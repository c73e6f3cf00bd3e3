package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"

	"github.com/shelfmark/shelfmark"
)

var _ shelfmark.BlobReferences = (*DB)(nil)

// ReferencedBlobs implements shelfmark.BlobReferences with one statement
// per call, through the indexes on files (sha256) and uploads (sha256).
func (db *DB) ReferencedBlobs(ctx context.Context, shas []string) (map[string]bool, error) {
	out := make(map[string]bool)
	if len(shas) == 0 {
		return out, nil
	}
	list, err := json.Marshal(shas)
	if err != nil {
		return nil, fmt.Errorf("sqlite: referenced blobs: %w", err)
	}
	err = db.View(ctx, func(rtx shelfmark.ReadTx) error {
		t := rtx.(*tx)
		return t.query(ctx, `SELECT sha256 FROM files WHERE sha256 IN (SELECT value FROM json_each(?1)) AND sha256 <> ''
			UNION SELECT sha256 FROM uploads WHERE sha256 IN (SELECT value FROM json_each(?1))`,
			[]any{string(list)}, func(r *sql.Rows) error {
				var sha string
				if err := r.Scan(&sha); err != nil {
					return err
				}
				out[sha] = true
				return nil
			})
	})
	if err != nil {
		return nil, fmt.Errorf("sqlite: referenced blobs: %w", err)
	}
	return out, nil
}
