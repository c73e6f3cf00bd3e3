package blob

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/shelfmark/shelfmark"
)

var (
	_ shelfmark.BlobDiscarder = (*LocalStore)(nil)
	_ shelfmark.BlobDiscarder = (*S3Store)(nil)
)

// Discard implements shelfmark.BlobDiscarder: it removes the bytes of a
// refused upload at once instead of after the collector's grace period.
// A blob file is renamed aside first (as the collector does), so a reader
// or a Put finds it gone rather than half removed, and only then are its
// time and held judged: a blob stored again after storedAt, or held, is
// put back. A small blob is deleted from the pack database, in its write
// lock, unless a Put stored it again after storedAt or it waits for Sync.
//
// An upload of the same bytes that stored them before storedAt and has
// not recorded itself when held is asked can lose them; its own check
// after recording (the bytes must still open) finds that and refuses, and
// its client sends them again.
func (s *LocalStore) Discard(ctx context.Context, sha string, storedAt time.Time, held func(context.Context) (bool, error)) (bool, error) {
	if !validSHA256(sha) {
		return false, nil
	}
	final := s.path(sha)
	aside := filepath.Join(s.tmp, gcPrefix+sha)
	err := os.Rename(final, aside)
	if err == nil {
		return s.judgeAside(ctx, sha, aside, storedAt, held)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("blob: discard %s: %w", sha, err)
	}
	// not a file: a small blob, or nothing; one waiting for Sync is
	// stored again then
	if _, pending := s.pending.get(sha); pending {
		return false, nil
	}
	if h, err := held(ctx); err != nil || h {
		return false, err
	}
	sum, _ := hex.DecodeString(sha)
	n, err := s.small.remove(ctx, [][]byte{sum}, storedAt.Add(time.Microsecond))
	if err != nil {
		return false, fmt.Errorf("blob: discard %s: %w", sha, err)
	}
	return n > 0, nil
}

// judgeAside removes the blob file taken aside, or puts it back when it
// was stored again after storedAt or is held.
func (s *LocalStore) judgeAside(ctx context.Context, sha, aside string, storedAt time.Time, held func(context.Context) (bool, error)) (bool, error) {
	putBack := func(cause error) (bool, error) {
		if err := os.Rename(aside, s.path(sha)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, errors.Join(cause, fmt.Errorf("blob: discard: putting back %s: %w", sha, err))
		}
		return false, cause
	}
	info, err := os.Stat(aside)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // put back by a collector that took it aside too
	} else if err != nil {
		return putBack(fmt.Errorf("blob: discard %s: %w", sha, err))
	}
	if info.ModTime().After(storedAt) {
		return putBack(nil)
	}
	if h, err := held(ctx); err != nil || h {
		return putBack(err)
	}
	if err := os.Remove(aside); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("blob: discard %s: %w", sha, err)
	}
	return true, nil
}

// Discard implements shelfmark.BlobDiscarder. A small blob (in the small
// blob store) is deleted unless stored again after storedAt; an object is
// deleted unless S3 says it was modified after storedAt (S3 keeps whole
// seconds, and a Put of bytes stored within the refresh age does not touch
// them). A blob still waiting for Sync is left to the collector. Whether
// it is held is asked right before the delete: as for the collector, a
// window of one request remains in which an upload of the same bytes that
// recorded itself meanwhile loses them, and finds that when it checks
// they still open.
func (s *S3Store) Discard(ctx context.Context, sha string, storedAt time.Time, held func(context.Context) (bool, error)) (bool, error) {
	if !validSHA256(sha) {
		return false, nil
	}
	if _, pending := s.pending.get(sha); pending {
		return false, nil
	}
	_, small, err := s.small.SmallBlob(ctx, sha)
	if err != nil {
		return false, fmt.Errorf("blob: s3: discard %s: %w", sha, err)
	}
	if h, err := held(ctx); err != nil || h {
		return false, err
	}
	if small {
		n, err := s.small.DeleteSmallBlobs(ctx, []string{sha}, storedAt.Add(time.Microsecond))
		if err != nil {
			return false, fmt.Errorf("blob: s3: discard %s: %w", sha, err)
		}
		return n > 0, nil
	}
	// LastModified is in whole seconds, at or before the store's own
	// write: storedAt rounded up to the next second covers it
	return s.removeObject(ctx, sha, storedAt.Truncate(time.Second).Add(time.Second))
}
