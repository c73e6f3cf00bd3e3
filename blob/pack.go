package blob

import (
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
)

// Pack is a shelfmark.SmallBlobStore over the SQLite pack database a
// LocalStore keeps its small blobs in (<dir>/small.db): an S3Store whose
// metadata database is SQLite keeps its small blobs there, on the local
// disk beside that database. Close it when done.
type Pack struct{ small *smallStore }

var _ shelfmark.SmallBlobStore = (*Pack)(nil)

// OpenPack opens (creating it if need be) the pack database in dir.
func OpenPack(dir string) (*Pack, error) {
	if err := os.MkdirAll(dir, dirPerm); err != nil {
		return nil, fmt.Errorf("blob: pack: %w", err)
	}
	s, err := openSmall(filepath.Join(dir, smallFile))
	if err != nil {
		return nil, err
	}
	return &Pack{small: s}, nil
}

// Close closes the pack database.
func (p *Pack) Close() error { return p.small.close() }

// PutSmallBlobs implements shelfmark.SmallBlobStore: one durable
// transaction for the whole batch, none of it written if a SHA-256 is not
// one.
func (p *Pack) PutSmallBlobs(ctx context.Context, blobs []shelfmark.SmallBlob) error {
	return p.small.put(ctx, blobs)
}

// SmallBlob implements shelfmark.SmallBlobStore.
func (p *Pack) SmallBlob(ctx context.Context, sha256 string) ([]byte, bool, error) {
	if !validSHA256(sha256) {
		return nil, false, nil
	}
	sum, _ := hex.DecodeString(sha256)
	return p.small.get(ctx, sum)
}

// ListSmallBlobs implements shelfmark.SmallBlobStore with one keyset query.
func (p *Pack) ListSmallBlobs(ctx context.Context, after string, storedBefore time.Time, limit int) ([]shelfmark.SmallBlobInfo, error) {
	from, err := hex.DecodeString(after)
	if err != nil {
		return nil, fmt.Errorf("blob: pack: bad key %.80q", after)
	}
	rows, err := p.small.r.QueryContext(ctx, `SELECT hex(sha256), length(data), stored FROM blobs
		WHERE sha256 > ? AND stored < ? ORDER BY sha256 LIMIT ?`, from, storedBefore.UnixMicro(), limit)
	if err != nil {
		return nil, fmt.Errorf("blob: pack: list: %w", err)
	}
	defer rows.Close()
	var out []shelfmark.SmallBlobInfo
	for rows.Next() {
		var sha string
		var size, stored int64
		if err := rows.Scan(&sha, &size, &stored); err != nil {
			return nil, fmt.Errorf("blob: pack: list: %w", err)
		}
		out = append(out, shelfmark.SmallBlobInfo{SHA256: strings.ToLower(sha), Size: size, Stored: time.UnixMicro(stored)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("blob: pack: list: %w", err)
	}
	return out, nil
}

// DeleteSmallBlobs implements shelfmark.SmallBlobStore.
func (p *Pack) DeleteSmallBlobs(ctx context.Context, shas []string, storedBefore time.Time) (int, error) {
	sums := make([][]byte, 0, len(shas))
	for _, s := range shas {
		if !validSHA256(s) {
			return 0, fmt.Errorf("blob: pack: not a SHA-256: %.80q", s)
		}
		sum, _ := hex.DecodeString(s)
		sums = append(sums, sum)
	}
	return p.small.remove(ctx, sums, storedBefore)
}
