package ocfl

import (
	"context"
	"crypto/rand"
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
	"sync/atomic"

	"github.com/shelfmark/shelfmark/internal/iox"
)

// FS is the storage a Root lives on: a tree of files named by slash-separated
// paths relative to the storage root. It is small on purpose so that an
// S3-compatible store can implement it (a "directory" is then a key prefix
// and exists while a key lies under it).
//
// No method renames: a local directory implements Write with a temporary
// file and a rename, an S3 store with one PUT (an object appears whole or not
// at all). The commit point of a version is therefore the Write of the
// object's root inventory.json, which needs only that a single Write replaces
// the file atomically; everything written before it (content, the version
// directory's inventory) is invisible to readers, who follow the root
// inventory, and is removed as a partial version if the writer stops.
type FS interface {
	// ReadDir lists the immediate children of dir ("." is the root), sorted
	// by name. A directory that does not exist gives an error wrapping
	// fs.ErrNotExist (on S3: a prefix with no keys). Cost: one listing.
	ReadDir(ctx context.Context, dir string) ([]Entry, error)
	// Open opens the file name for reading; a missing file gives an error
	// wrapping fs.ErrNotExist.
	Open(ctx context.Context, name string) (io.ReadCloser, error)
	// Write stores everything read from r as the file name, creating parent
	// directories as needed. Readers see the old file (or none) until Write
	// returns, then the whole new one; if r fails, nothing is stored. With
	// exclusive set it fails with an error wrapping fs.ErrExist when name
	// already exists (local: a hard link of the finished temporary file; S3:
	// a conditional PUT with If-None-Match: *). The file is durable when
	// Write returns.
	Write(ctx context.Context, name string, r io.Reader, exclusive bool) error
	// RemoveAll removes name and everything beneath it; a missing name is not
	// an error.
	RemoveAll(ctx context.Context, name string) error
}

// Entry is one child in a directory listing.
type Entry struct {
	// Name is the child's name (one path element).
	Name string
	// Dir is set for a directory.
	Dir bool
	// Irregular is set for anything that is neither a regular file nor a
	// directory (a symbolic link, a device): OCFL forbids them (E090).
	Irregular bool
}

// tempPrefix begins the name of every temporary file a DirFS writes; a file
// so named in an object is a crash's leftover, removed by recovery.
const tempPrefix = ".ocfl-tmp-"

// DirFS is an FS over a local directory. Writes go to a temporary file in the
// same directory, are synced, and are renamed into place (exclusive writes
// are hard-linked, which fails if the name exists, so the file system must
// support hard links); the directory is synced after, and so is the parent
// of every directory a write creates, so a written file survives a crash.
type DirFS struct {
	root string

	mu      sync.Mutex
	pending map[string]bool     // files and directories to sync (see Sync)
	dirs    map[string]bool     // directories known to exist, until a removal or Sync
	held    map[int64]*heldByte // bytes of the lock file held (lock.go)

	files, made atomic.Int64 // files written and directories made (Stats)
}

// FSStats counts what a DirFS created since it was opened.
type FSStats struct {
	// Files is the number of files written (each a file creation).
	Files int64
	// Dirs is the number of directories made.
	Dirs int64
}

// Stats returns the files written and directories made so far: each is
// a file system metadata operation, the part of a version's cost that
// does not shrink with its size.
func (d *DirFS) Stats() FSStats {
	return FSStats{Files: d.files.Load(), Dirs: d.made.Load()}
}

// NewDirFS returns the FS of the local directory dir (created if missing).
func NewDirFS(dir string) (*DirFS, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("ocfl: storage root directory: %w", err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("ocfl: storage root directory: %w", err)
	}
	return &DirFS{root: abs}, nil
}

// Dir is the local directory of the FS.
func (d *DirFS) Dir() string { return d.root }

// local maps a slash path to a local path, refusing any path that would
// leave the root.
func (d *DirFS) local(name string) (string, error) {
	if name == "" || name == "." {
		return d.root, nil
	}
	if path.Clean(name) != name || strings.HasPrefix(name, "/") || name == ".." ||
		strings.HasPrefix(name, "../") || strings.ContainsRune(name, 0) {
		return "", fmt.Errorf("ocfl: path %q is not a clean relative path", name)
	}
	return filepath.Join(d.root, filepath.FromSlash(name)), nil
}

// ReadDir implements FS.
func (d *DirFS) ReadDir(ctx context.Context, dir string) ([]Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := d.local(dir)
	if err != nil {
		return nil, err
	}
	des, err := os.ReadDir(p)
	if err != nil {
		return nil, fmt.Errorf("ocfl: list %s: %w", dir, err)
	}
	out := make([]Entry, 0, len(des))
	for _, de := range des {
		t := de.Type()
		out = append(out, Entry{Name: de.Name(), Dir: t.IsDir(), Irregular: !t.IsDir() && !t.IsRegular()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Open implements FS.
func (d *DirFS) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := d.local(name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("ocfl: open %s: %w", name, err)
	}
	return f, nil
}

// Write implements FS.
func (d *DirFS) Write(ctx context.Context, name string, r io.Reader, exclusive bool) error {
	return d.write(ctx, name, r, exclusive, true)
}

// WriteLater implements BatchFS: Write without the file's and the
// directories' syncs, which Sync does for all of them at once.
func (d *DirFS) WriteLater(ctx context.Context, name string, r io.Reader, exclusive bool) error {
	return d.write(ctx, name, r, exclusive, false)
}

// later notes local paths a later Sync must make durable.
func (d *DirFS) later(paths ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pending == nil {
		d.pending = map[string]bool{}
	}
	for _, p := range paths {
		d.pending[p] = true
	}
}

// known reports whether dir is known to exist: WriteLater made it or
// wrote into it since the last Sync and no removal happened since.
func (d *DirFS) known(dir string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.dirs[dir]
}

// know notes that dir exists (for WriteLater's writes until the next Sync).
func (d *DirFS) know(dir string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dirs == nil {
		d.dirs = map[string]bool{}
	}
	d.dirs[dir] = true
}

// forgetDirs forgets which directories exist, after a removal (here, or in
// another process, which writeNew notices).
func (d *DirFS) forgetDirs() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dirs = nil
}

// takePending returns and forgets the paths noted for Sync.
func (d *DirFS) takePending() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.pending))
	for p := range d.pending {
		out = append(out, p)
	}
	d.pending, d.dirs = nil, nil
	sort.Strings(out)
	return out
}

// syncPaths fsyncs each of paths (files and directories; a path removed
// since is skipped).
func syncPaths(paths []string) error {
	for _, p := range paths {
		if err := syncDir(p); err != nil {
			return err
		}
	}
	return nil
}

// write is Write (durable) or WriteLater (not).
func (d *DirFS) write(ctx context.Context, name string, r io.Reader, exclusive, durable bool) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := d.local(name)
	if err != nil {
		return err
	}
	dir := filepath.Dir(p)
	if err := d.mkdirAll(dir, durable); err != nil {
		return fmt.Errorf("ocfl: write %s: %w", name, err)
	}
	if !durable {
		// A new file is written in place: no reader follows it before a
		// later commit point (see BatchFS), and a crash's torn file is in
		// a version that recovery removes or replaces.
		done, err := d.writeNew(ctx, p, dir, r)
		if done || err != nil || exclusive {
			if err == nil && !done {
				err = fs.ErrExist
			}
			if err != nil {
				return fmt.Errorf("ocfl: write %s: %w", name, err)
			}
			return nil
		}
	}
	tmp := tempName(dir)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("ocfl: write %s: %w", name, err)
	}
	d.files.Add(1)
	placed := false
	defer func() {
		if f != nil {
			f.Close()
		}
		if !placed {
			os.Remove(tmp)
		}
	}()
	if _, err := iox.Copy(ctx, f, r); err != nil {
		return fmt.Errorf("ocfl: write %s: %w", name, err)
	}
	if durable {
		if err := f.Sync(); err != nil {
			return fmt.Errorf("ocfl: write %s: %w", name, err)
		}
	}
	if err := f.Close(); err != nil {
		f = nil
		return fmt.Errorf("ocfl: write %s: %w", name, err)
	}
	f = nil
	if exclusive {
		if err := os.Link(tmp, p); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("ocfl: write %s: %w", name, fs.ErrExist)
			}
			return fmt.Errorf("ocfl: write %s: %w", name, err)
		}
	} else if err := os.Rename(tmp, p); err != nil {
		return fmt.Errorf("ocfl: write %s: %w", name, err)
	} else {
		placed = true
	}
	if !durable {
		d.later(p, dir)
		return nil
	}
	return syncDir(dir)
}

// tempName is a new temporary name in the local directory dir, which
// recovery removes if a crash leaves it.
func tempName(dir string) string {
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	return filepath.Join(dir, tempPrefix+hex.EncodeToString(rnd[:]))
}

// writeNew creates p, which must not exist, and copies r into it, for
// WriteLater; done is false (and nothing written) when p exists. A failed
// copy removes p.
func (d *DirFS) writeNew(ctx context.Context, p, dir string, r io.Reader) (done bool, err error) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		// a directory noted as made was removed since: make it again
		d.forgetDirs()
		if err = d.mkdirAll(dir, false); err == nil {
			f, err = os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		}
	}
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	d.files.Add(1)
	if _, err = iox.Copy(ctx, f, r); err == nil {
		err = f.Close()
	} else {
		f.Close()
	}
	if err != nil {
		os.Remove(p)
		return false, err
	}
	d.later(p, dir)
	return true, nil
}

// mkdirAll makes dir and its missing parents, syncing the parent of each
// directory it makes (or, when not durable, noting it for Sync), so that a
// file synced inside is reachable after a crash. Directories noted for
// Sync are known to exist and not looked up again until then.
func (d *DirFS) mkdirAll(dir string, durable bool) error {
	if !durable && d.known(dir) {
		return nil
	}
	var missing []string
	for p := dir; p != d.root && len(p) > len(d.root); p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil {
			break
		}
		missing = append(missing, p)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		d.made.Add(1)
		if !durable {
			d.later(filepath.Dir(missing[i]))
		} else if err := syncDir(filepath.Dir(missing[i])); err != nil {
			return err
		}
	}
	if !durable {
		d.know(dir)
	}
	return nil
}

// RemoveAll implements FS.
func (d *DirFS) RemoveAll(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := d.local(name)
	if err != nil {
		return err
	}
	if p == d.root {
		return fmt.Errorf("ocfl: refusing to remove the storage root")
	}
	d.forgetDirs()
	if err := os.RemoveAll(p); err != nil {
		return fmt.Errorf("ocfl: remove %s: %w", name, err)
	}
	return syncDir(filepath.Dir(p))
}

// syncDir makes a directory's entries durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("ocfl: sync %s: %w", dir, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("ocfl: sync %s: %w", dir, err)
	}
	return nil
}

// ReadFile reads a whole file of fsys of at most limit bytes; a larger
// file is an error (wrapping errTooLarge), found after reading limit+1
// bytes at most.
func ReadFile(ctx context.Context, fsys FS, name string, limit int64) ([]byte, error) {
	rc, err := fsys.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, fmt.Errorf("ocfl: read %s: %w", name, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("ocfl: %s: %w (limit %d bytes)", name, errTooLarge, limit)
	}
	return data, nil
}

// errTooLarge marks a file over a read limit.
var errTooLarge = errors.New("file too large")
