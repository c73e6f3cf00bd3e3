package backup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/sqlite"
)

// BlobSource is the content store a backup reads: LocalStore and S3Store
// are one.
type BlobSource interface {
	// Open opens the blob with this SHA-256; a missing one is an error
	// of code shelfmark.ENOTFOUND.
	Open(ctx context.Context, sha256 string) (io.ReadSeekCloser, error)
	// Walk calls fn with every stored blob's SHA-256.
	Walk(ctx context.Context, fn func(sha256 string) error) error
}

// Source is the repository a backup copies.
type Source struct {
	// SQLite is the database file of the embedded default; empty when
	// the database is PostgreSQL (Backend), which is backed up with its
	// own tools.
	SQLite string
	// Backend names the database ("sqlite" or "postgresql").
	Backend string
	// Blobs is the content store.
	Blobs BlobSource
	// OCFL is the preservation copy's storage root (nil: none).
	OCFL ocfl.FS
}

// Options configure Run.
type Options struct {
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Version is the Shelfmark release written in the manifest.
	Version string
	// TempDir receives the database snapshot before it is copied to the
	// destination (default os.TempDir()): a directory of its own per run,
	// named with the process's id, removed when the run ends; a run
	// removes those that processes no longer running left (a backup
	// killed mid-copy), so that a killed run's copy of the database does
	// not stay. The shell gives the repository's own data directory: the
	// system's temporary directory may be memory (tmpfs), too small for a
	// copy of the database.
	TempDir string
	// Progress, when set, is told of each phase's progress.
	Progress func(Progress)
	// Parallel is how many files are copied at once (default
	// DefaultParallel).
	Parallel int
}

// Progress is where a backup or restore run is.
type Progress struct {
	Phase string // "database", "blobs", "ocfl"
	Done  int64  // items done in this phase (pages of the database)
	Total int64  // items in this phase, -1 when not known yet
	// Copied counts the files this run wrote so far (the rest were there).
	Copied int64
}

// snapshotAttempts bounds the snapshots taken when a blob a snapshot
// refers to disappears before it is copied (a purge meanwhile).
const snapshotAttempts = 3

// errBlobGone is wrapped when a blob the snapshot refers to is not in the
// content store any more.
var errBlobGone = errors.New("a blob the database refers to is missing from the content store")

// Run backs the repository src up into the destination dst, and returns
// the new backup's directory and manifest. It copies the database first
// (for SQLite), then the blobs that copy refers to (for PostgreSQL every
// blob stored), then the preservation copy, each file only if the pool
// does not have it yet; the manifest last. Safe while servers run.
// Cost: one read of the database, one listing of the pool, one read of
// each new blob and file and of each object's root inventory.
func Run(ctx context.Context, src Source, dst ocfl.FS, opts Options) (string, *Manifest, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.TempDir == "" {
		opts.TempDir = os.TempDir()
	}
	if opts.Progress == nil {
		opts.Progress = func(Progress) {}
	}
	m := &Manifest{Format: Format, Version: opts.Version, Started: opts.Now().UTC(), Database: Database{Backend: src.Backend}}
	prevOCFL, err := previous(ctx, dst)
	if err != nil {
		return "", nil, err
	}
	dir, err := newBackupDir(ctx, dst, m.Started)
	if err != nil {
		return "", nil, err
	}
	p := newPool(dst)
	var shas []string
	for attempt := 1; ; attempt++ {
		shas, err = snapshot(ctx, src, dst, dir, m, opts)
		if err != nil {
			return dir, nil, err
		}
		shas, err = copyBlobs(ctx, src, p, shas, m, opts)
		if errors.Is(err, errBlobGone) && src.SQLite != "" && attempt < snapshotAttempts {
			continue // purged after the snapshot: a new snapshot no longer refers to it
		}
		if err != nil {
			return dir, nil, err
		}
		break
	}
	if m.Blobs, err = writeListing(ctx, dst, path.Join(dir, "blobs.txt"), shas); err != nil {
		return dir, nil, err
	}
	if src.OCFL != nil {
		lines, err := copyOCFL(ctx, src.OCFL, p, prevOCFL, m, opts)
		if err != nil {
			return dir, nil, err
		}
		if m.OCFL, err = writeListing(ctx, dst, path.Join(dir, "ocfl.txt"), lines); err != nil {
			return dir, nil, err
		}
	}
	m.Finished = opts.Now().UTC()
	if err := writeManifest(ctx, dst, dir, m); err != nil {
		return dir, nil, err
	}
	return dir, m, nil
}

// newBackupDir claims the new backup's directory, named for its start:
// its file "started" is written exclusively, so two runs never share one.
func newBackupDir(ctx context.Context, dst ocfl.FS, started time.Time) (string, error) {
	base := path.Join(backupsDir, started.Format("20060102T150405Z"))
	name := base
	for i := 2; ; i++ {
		err := dst.Write(ctx, path.Join(name, "started"), strings.NewReader(started.Format(time.RFC3339Nano)+"\n"), true)
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, fs.ErrExist) || i > 1000 {
			return "", fmt.Errorf("start the backup %s: %w", name, err)
		}
		name = fmt.Sprintf("%s-%d", base, i)
	}
}

// snapshot copies a SQLite database into dir and returns the blobs it
// refers to; for PostgreSQL, every blob the content store holds.
func snapshot(ctx context.Context, src Source, dst ocfl.FS, dir string, m *Manifest, opts Options) ([]string, error) {
	var shas []string
	if src.SQLite == "" {
		opts.Progress(Progress{Phase: "blobs", Total: -1})
		err := src.Blobs.Walk(ctx, func(sha string) error {
			shas = append(shas, sha)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("list the content store: %w", err)
		}
		sort.Strings(shas)
		return shas, nil
	}
	if err := os.MkdirAll(opts.TempDir, 0o700); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	removeStaleSnapshots(opts.TempDir)
	tmp, err := os.MkdirTemp(opts.TempDir, fmt.Sprintf("%s%d-", snapshotPrefix, os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	defer os.RemoveAll(tmp)
	file := filepath.Join(tmp, "shelfmark.db")
	err = sqlite.Snapshot(ctx, src.SQLite, file, func(done, total int) {
		opts.Progress(Progress{Phase: "database", Done: int64(done), Total: int64(total)})
	})
	if err != nil {
		return nil, err
	}
	if err := sqlite.SnapshotBlobs(ctx, file, func(sha string) error {
		shas = append(shas, sha)
		return nil
	}); err != nil {
		return nil, err
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	cr := &countReader{r: io.TeeReader(f, h)}
	if err := dst.Write(ctx, path.Join(dir, "shelfmark.db"), cr, false); err != nil {
		return nil, fmt.Errorf("copy the database snapshot: %w", err)
	}
	m.Database.File, m.Database.Size, m.Database.SHA256 = "shelfmark.db", cr.n, hex.EncodeToString(h.Sum(nil))
	return shas, nil
}

// copyBlobs copies the blobs of shas the pool lacks, and returns those
// in the backup: for PostgreSQL, a blob collected since it was listed is
// left out (no database state to match); for SQLite, a blob the snapshot
// refers to that is gone fails the run with errBlobGone.
func copyBlobs(ctx context.Context, src Source, p *pool, shas []string, m *Manifest, opts Options) ([]string, error) {
	c := newCopier(ctx, p, opts.Parallel)
	var mu sync.Mutex
	gone := map[string]bool{}
	var err error
	for i, sha := range shas {
		if !validDigest(algSHA256, sha) {
			err = fmt.Errorf("the database names a blob %.80q that is not a SHA-256", sha)
			break
		}
		_, err = c.submit(copyJob{alg: algSHA256, d: sha,
			open: func(ctx context.Context) (io.ReadCloser, error) { return src.Blobs.Open(ctx, sha) },
			fail: func(err error) error {
				switch {
				case notStored(err) && src.SQLite == "":
					mu.Lock()
					gone[sha] = true
					mu.Unlock()
					return nil
				case notStored(err):
					return fmt.Errorf("blob %s: %w (purged after the snapshot?)", sha, errBlobGone)
				}
				return fmt.Errorf("open blob %s: %w", sha, err)
			}})
		if err != nil {
			break
		}
		if (i+1)%256 == 0 {
			files, _ := c.counts()
			opts.Progress(Progress{Phase: "blobs", Done: int64(i + 1), Total: int64(len(shas)), Copied: m.Copied.Blobs + files})
		}
	}
	if cerr := c.close(); err == nil {
		err = cerr
	}
	files, bytes := c.counts()
	m.Copied.Blobs += files
	m.Copied.Bytes += bytes
	if err != nil {
		return nil, err
	}
	opts.Progress(Progress{Phase: "blobs", Done: int64(len(shas)), Total: int64(len(shas)), Copied: m.Copied.Blobs})
	if len(gone) == 0 {
		return shas, nil
	}
	kept := make([]string, 0, len(shas)-len(gone))
	for _, sha := range shas {
		if !gone[sha] {
			kept = append(kept, sha)
		}
	}
	return kept, nil
}

// writeListing writes lines, one a line, as name, and describes it.
func writeListing(ctx context.Context, dst ocfl.FS, name string, lines []string) (Listing, error) {
	var buf bytes.Buffer
	for _, l := range lines {
		buf.WriteString(l)
		buf.WriteByte('\n')
	}
	sum := sha256.Sum256(buf.Bytes())
	if err := dst.Write(ctx, name, &buf, false); err != nil {
		return Listing{}, fmt.Errorf("write %s: %w", name, err)
	}
	return Listing{List: path.Base(name), SHA256: hex.EncodeToString(sum[:]), Files: int64(len(lines))}, nil
}

// readListing reads the listing l of the backup dir, verifying its digest.
func readListing(ctx context.Context, fsys ocfl.FS, dir string, l Listing) ([]string, error) {
	if l.List == "" {
		return nil, nil
	}
	data, err := ocfl.ReadFile(ctx, fsys, path.Join(dir, l.List), 1<<34)
	if err != nil {
		return nil, fmt.Errorf("backup %s: %w", dir, err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); got != l.SHA256 {
		return nil, fmt.Errorf("backup %s: %s has SHA-256 %s, the manifest says %s", dir, l.List, got, l.SHA256)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	if len(data) == 0 {
		lines = nil
	}
	if int64(len(lines)) != l.Files {
		return nil, fmt.Errorf("backup %s: %s lists %d files, the manifest says %d", dir, l.List, len(lines), l.Files)
	}
	return lines, nil
}

// previous reads the preservation copy's listing of the newest whole
// backup: path → its line, for the files OCFL never rewrites.
func previous(ctx context.Context, dst ocfl.FS) (map[string]string, error) {
	dir, m, err := Latest(ctx, dst)
	if errors.Is(err, ErrNotWhole) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	lines, err := readListing(ctx, dst, dir, m.OCFL)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(lines))
	for _, l := range lines {
		if d, p, ok := strings.Cut(l, " "); ok && immutable(p) {
			out[p] = d
		}
	}
	return out, nil
}

// notStored reports whether an error of BlobSource.Open says the blob is
// not stored.
func notStored(err error) bool {
	return shelfmark.ErrorCode(err) == shelfmark.ENOTFOUND || errors.Is(err, os.ErrNotExist)
}

// countReader counts the bytes read through it.
type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}
