package blob

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
)

// DefaultGrace is how long a blob no file refers to is kept: an upload is
// referenced by its file within seconds, so a day leaves every upload in
// progress (and a client that stores bytes first and names them in a
// group later) far on the safe side.
const DefaultGrace = 24 * time.Hour

// collectBatch is how many blobs one reference query asks about.
const collectBatch = 500

// gcPrefix names a blob the collector took aside (in tmp) before removing
// it.
const gcPrefix = "gc-"

// CollectOptions configure Collect.
type CollectOptions struct {
	// Grace keeps every blob stored, or stored again, less than this long
	// ago (default DefaultGrace).
	Grace time.Duration
	// DryRun counts what would be removed and removes nothing.
	DryRun bool
}

// CollectStats report what Collect found.
type CollectStats struct {
	Examined int   // blobs older than the grace period
	Orphans  int   // of those, blobs no file refers to
	Removed  int   // orphans removed (0 with DryRun)
	Bytes    int64 // the size of the orphans
}

// Collect removes the blobs no file refers to (refs decides) and that were
// last stored more than opts.Grace ago, and the temporary files of uploads
// that crashed. It is safe beside running uploads and other processes
// sharing the store:
//
//   - a blob stored again (Put of the same bytes) counts its age from then,
//     so an upload about to be committed is never taken;
//   - a file blob is first renamed aside, then its age read again: if a Put
//     refreshed it meanwhile it is put back, and a Put that finds it gone
//     stores its own copy;
//   - a small blob is deleted by one statement that checks its age again,
//     in the pack database's write lock, which a Put takes too.
//
// A file row committed more than Grace after its bytes were stored may name
// bytes already collected; clients must name what they upload within the
// grace period.
func (s *LocalStore) Collect(ctx context.Context, refs shelfmark.BlobReferences, opts CollectOptions) (CollectStats, error) {
	var st CollectStats
	if opts.Grace <= 0 {
		opts.Grace = DefaultGrace
	}
	cutoff := time.Now().Add(-opts.Grace)
	if !opts.DryRun {
		if err := s.removeStaleTemps(time.Now().Add(-tmpMaxAge)); err != nil {
			return st, err
		}
	}
	type candidate struct {
		sha  string
		size int64
	}
	var batch []candidate
	flush := func(remove func(ctx context.Context, c []candidate) error) error {
		if len(batch) == 0 {
			return nil
		}
		shas := make([]string, len(batch))
		for i, c := range batch {
			shas[i] = c.sha
		}
		used, err := refs.ReferencedBlobs(ctx, shas)
		if err != nil {
			return fmt.Errorf("blob: collect: %w", err)
		}
		var orphans []candidate
		for _, c := range batch {
			if !used[c.sha] {
				orphans = append(orphans, c)
				st.Orphans++
				st.Bytes += c.size
			}
		}
		batch = batch[:0]
		if opts.DryRun || len(orphans) == 0 {
			return nil
		}
		return remove(ctx, orphans)
	}
	removeFiles := func(ctx context.Context, cs []candidate) error {
		for _, c := range cs {
			removed, err := s.removeFile(c.sha, cutoff)
			if err != nil {
				return err
			}
			if removed {
				st.Removed++
			}
		}
		return nil
	}
	err := filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed meanwhile
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if p == s.tmp {
				return filepath.SkipDir
			}
			return nil
		}
		name := d.Name()
		if !validSHA256(name) || p != s.path(name) {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		if !info.ModTime().Before(cutoff) {
			return nil
		}
		st.Examined++
		batch = append(batch, candidate{name, info.Size()})
		if len(batch) >= collectBatch {
			return flush(removeFiles)
		}
		return nil
	})
	if err == nil {
		err = flush(removeFiles)
	}
	if err != nil {
		return st, fmt.Errorf("blob: collect: %w", err)
	}

	// The pack database, in keyset order.
	removeSmall := func(ctx context.Context, cs []candidate) error {
		sums := make([][]byte, 0, len(cs))
		for _, c := range cs {
			if _, pending := s.pending.get(c.sha); pending {
				continue // stored again at the next Sync
			}
			sum, _ := hex.DecodeString(c.sha)
			sums = append(sums, sum)
		}
		n, err := s.small.remove(ctx, sums, cutoff)
		st.Removed += n
		return err
	}
	after := []byte{} // an empty sha256 sorts before every other
	for {
		rows, err := s.small.r.QueryContext(ctx, `SELECT sha256, length(data) FROM blobs
			WHERE sha256 > ? AND stored < ? ORDER BY sha256 LIMIT ?`, after, cutoff.UnixMicro(), collectBatch)
		if err != nil {
			return st, fmt.Errorf("blob: collect the pack database: %w", err)
		}
		n := 0
		for rows.Next() {
			var sum []byte
			var size int64
			if err := rows.Scan(&sum, &size); err != nil {
				rows.Close()
				return st, fmt.Errorf("blob: collect the pack database: %w", err)
			}
			after = sum
			n++
			st.Examined++
			batch = append(batch, candidate{hex.EncodeToString(sum), size})
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return st, fmt.Errorf("blob: collect the pack database: %w", err)
		}
		if err := flush(removeSmall); err != nil {
			return st, err
		}
		if n < collectBatch {
			return st, nil
		}
	}
}

// removeFile removes the blob file sha unless it was stored again since
// cutoff, and reports whether it did. It renames the file aside first, so
// that a Put of the same bytes either refreshed it before (and it is put
// back) or finds it gone (and stores its own copy).
func (s *LocalStore) removeFile(sha string, cutoff time.Time) (bool, error) {
	final := s.path(sha)
	aside := filepath.Join(s.tmp, gcPrefix+sha)
	if err := os.Rename(final, aside); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("blob: collect: %w", err)
	}
	info, err := os.Stat(aside)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // put back by a store opened meanwhile
	} else if err != nil {
		return false, fmt.Errorf("blob: collect: %w", err)
	}
	if !info.ModTime().Before(cutoff) {
		// Stored again meanwhile: put it back (over an identical copy a
		// Put may have stored since).
		if err := os.Rename(aside, final); err != nil {
			return false, fmt.Errorf("blob: collect: putting back %s: %w", sha, err)
		}
		return false, nil
	}
	if err := os.Remove(aside); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("blob: collect: %w", err)
	}
	return true, nil
}

// restoreAside puts back the blobs a collector that crashed left renamed
// aside (it had not decided yet), unless the blob was stored again since.
func (s *LocalStore) restoreAside() error {
	entries, err := os.ReadDir(s.tmp)
	if err != nil {
		return fmt.Errorf("blob: listing temporary files: %w", err)
	}
	for _, e := range entries {
		sha, ok := strings.CutPrefix(e.Name(), gcPrefix)
		if !ok || !validSHA256(sha) {
			continue
		}
		aside := filepath.Join(s.tmp, e.Name())
		if _, err := os.Lstat(s.path(sha)); err == nil {
			err = os.Remove(aside)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("blob: %w", err)
			}
			continue
		}
		if err := mkdirSync(s.dir, sha[0:2], sha[2:4]); err != nil {
			return err
		}
		if err := os.Rename(aside, s.path(sha)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("blob: restoring %s: %w", sha, err)
		}
	}
	return nil
}
