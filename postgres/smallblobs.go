package postgres

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
)

var _ shelfmark.SmallBlobStore = (*DB)(nil)

// PutSmallBlobs implements shelfmark.SmallBlobStore with one statement
// (unnest arrays) for the whole batch, none for an empty one.
func (db *DB) PutSmallBlobs(ctx context.Context, blobs []shelfmark.SmallBlob) error {
	if len(blobs) == 0 {
		return nil
	}
	// ON CONFLICT may not touch a row twice in one statement: one row per
	// digest.
	seen := make(map[string]bool, len(blobs))
	shas := make([][]byte, 0, len(blobs))
	data := make([][]byte, 0, len(blobs))
	for _, b := range blobs {
		if seen[b.SHA256] {
			continue
		}
		seen[b.SHA256] = true
		sum, err := decodeSHA256(b.SHA256)
		if err != nil {
			return err
		}
		shas = append(shas, sum)
		data = append(data, b.Data)
	}
	r := db.run(db.pool)
	if _, err := r.exec(ctx, `INSERT INTO small_blobs (sha256, data, stored)
		SELECT s, d, $3 FROM unnest($1::bytea[], $2::bytea[]) AS t(s, d)
		ON CONFLICT (sha256) DO UPDATE SET stored = excluded.stored`, shas, data, time.Now().UnixMicro()); err != nil {
		return fmt.Errorf("postgres: store small blobs: %w", err)
	}
	return nil
}

// SmallBlob implements shelfmark.SmallBlobStore.
func (db *DB) SmallBlob(ctx context.Context, sha256 string) ([]byte, bool, error) {
	sum, err := decodeSHA256(sha256)
	if err != nil {
		return nil, false, nil // no such digest is ever stored
	}
	var data []byte
	r := db.run(db.pool)
	n, err := r.query(ctx, `SELECT data FROM small_blobs WHERE sha256 = $1`, []any{sum},
		func(rows pgx.Rows) error { return rows.Scan(&data) })
	if err != nil {
		return nil, false, fmt.Errorf("postgres: read small blob: %w", err)
	}
	return data, n == 1, nil
}

// ListSmallBlobs implements shelfmark.SmallBlobStore with one keyset
// statement.
func (db *DB) ListSmallBlobs(ctx context.Context, after string, storedBefore time.Time, limit int) ([]shelfmark.SmallBlobInfo, error) {
	from := []byte{}
	if after != "" {
		var err error
		if from, err = hex.DecodeString(after); err != nil {
			return nil, fmt.Errorf("postgres: list small blobs: bad key %.80q", after)
		}
	}
	var out []shelfmark.SmallBlobInfo
	r := db.run(db.pool)
	_, err := r.query(ctx, `SELECT sha256, length(data), stored FROM small_blobs
		WHERE sha256 > $1 AND stored < $2 ORDER BY sha256 LIMIT $3`, []any{from, storedBefore.UnixMicro(), limit},
		func(rows pgx.Rows) error {
			var sum []byte
			var size, stored int64
			if err := rows.Scan(&sum, &size, &stored); err != nil {
				return err
			}
			out = append(out, shelfmark.SmallBlobInfo{SHA256: hex.EncodeToString(sum), Size: size, Stored: time.UnixMicro(stored)})
			return nil
		})
	if err != nil {
		return nil, fmt.Errorf("postgres: list small blobs: %w", err)
	}
	return out, nil
}

// DeleteSmallBlobs implements shelfmark.SmallBlobStore with one statement.
func (db *DB) DeleteSmallBlobs(ctx context.Context, shas []string, storedBefore time.Time) (int, error) {
	if len(shas) == 0 {
		return 0, nil
	}
	sums := make([][]byte, 0, len(shas))
	for _, s := range shas {
		sum, err := decodeSHA256(s)
		if err != nil {
			return 0, err
		}
		sums = append(sums, sum)
	}
	r := db.run(db.pool)
	n, err := r.exec(ctx, `DELETE FROM small_blobs WHERE sha256 = ANY($1) AND stored < $2`, sums, storedBefore.UnixMicro())
	if err != nil {
		return 0, fmt.Errorf("postgres: delete small blobs: %w", err)
	}
	return int(n), nil
}

// decodeSHA256 reads a SHA-256 in hex.
func decodeSHA256(s string) ([]byte, error) {
	sum, err := hex.DecodeString(s)
	if err != nil || len(sum) != 32 {
		return nil, errors.New("postgres: small blob: not a SHA-256: " + fmt.Sprintf("%.80q", s))
	}
	return sum, nil
}
