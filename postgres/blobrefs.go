package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

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
	r := db.run(db.pool)
	_, err := r.query(ctx, `SELECT sha256 FROM files WHERE sha256 = ANY($1) AND sha256 <> ''
		UNION SELECT sha256 FROM uploads WHERE sha256 = ANY($1)`, []any{shas},
		func(rows pgx.Rows) error {
			var sha string
			if err := rows.Scan(&sha); err != nil {
				return err
			}
			out[sha] = true
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("postgres: referenced blobs: %w", err)
	}
	return out, nil
}
