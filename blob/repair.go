package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/iox"
)

var _ shelfmark.BlobRepairer = (*LocalStore)(nil)

// ReplaceBlob implements shelfmark.BlobRepairer: r's bytes are read into a
// temporary file (or, for a blob the pack database holds, into memory, at
// most SmallMax bytes) and checked against sha; only then do they replace
// the stored copy, by a rename over the blob's file or an update of its
// row, so that a reader sees the old bytes or the new, never a mix. A blob
// stored nowhere is stored. Cost: one read of r and one write of its bytes.
func (s *LocalStore) ReplaceBlob(ctx context.Context, sha string, r io.Reader) error {
	if !validSHA256(sha) {
		return notFound(sha)
	}
	want, _ := hex.DecodeString(sha)
	final := s.path(sha)
	if _, err := os.Lstat(final); errors.Is(err, fs.ErrNotExist) {
		data, err := io.ReadAll(io.LimitReader(r, SmallMax+1))
		if err != nil {
			return fmt.Errorf("blob: replace %s: %w", sha, err)
		}
		if len(data) <= SmallMax {
			sum := sha256.Sum256(data)
			if string(sum[:]) != string(want) {
				return mismatch(shelfmark.SHA256, want, sum[:])
			}
			return s.small.replace(ctx, want, data)
		}
		r = io.MultiReader(bytes.NewReader(data), r)
	} else if err != nil {
		return fmt.Errorf("blob: replace %s: %w", sha, err)
	}
	f, err := os.CreateTemp(s.tmp, tmpPrefix+"*")
	if err != nil {
		return fmt.Errorf("blob: replace %s: %w", sha, err)
	}
	tmp := f.Name()
	defer func() {
		_ = f.Close()
		_ = os.Remove(tmp)
	}()
	h := sha256.New()
	if _, err := iox.Copy(ctx, io.MultiWriter(f, h), r); err != nil {
		return fmt.Errorf("blob: replace %s: %w", sha, err)
	}
	if got := h.Sum(nil); string(got) != string(want) {
		return mismatch(shelfmark.SHA256, want, got)
	}
	if err := f.Chmod(blobPerm); err != nil {
		return fmt.Errorf("blob: replace %s: %w", sha, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("blob: replace %s: syncing: %w", sha, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("blob: replace %s: %w", sha, err)
	}
	if err := mkdirSync(s.dir, sha[0:2], sha[2:4]); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("blob: replace %s: %w", sha, err)
	}
	return syncDir(filepath.Dir(final))
}

// replace writes data as the row of sum, whatever the row held, durably.
func (s *smallStore) replace(ctx context.Context, sum, data []byte) error {
	err := withTx(ctx, s.w, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO blobs (sha256, data, stored) VALUES (?, ?, ?)
		ON CONFLICT (sha256) DO UPDATE SET data = excluded.data`, sum, data, time.Now().UnixMicro())
		return err
	})
	if err != nil {
		return fmt.Errorf("blob: replacing in the pack database: %w", err)
	}
	return nil
}

// withTx runs fn in a transaction of db and commits it.
func withTx(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}
