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
func (d *DirFS) Write(ctx context.Context, name string, r io.Reader, exclusive bool) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := d.local(name)
	if err != nil {
		return err
	}
	dir := filepath.Dir(p)
	if err := d.mkdirAll(dir); err != nil {
		return fmt.Errorf("ocfl: write %s: %w", name, err)
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	tmp := filepath.Join(dir, tempPrefix+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("ocfl: write %s: %w", name, err)
	}
	defer func() {
		if f != nil {
			f.Close()
		}
		os.Remove(tmp)
	}()
	if _, err := io.Copy(f, ctxReader{ctx, r}); err != nil {
		return fmt.Errorf("ocfl: write %s: %w", name, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("ocfl: write %s: %w", name, err)
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
	}
	return syncDir(dir)
}

// mkdirAll makes dir and its missing parents, syncing the parent of each
// directory it makes, so that a file synced inside is reachable after a
// crash.
func (d *DirFS) mkdirAll(dir string) error {
	var missing []string
	for p := dir; p != d.root && len(p) > len(d.root); p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil {
			break
		}
		missing = append(missing, p)
	}
	if len(missing) == 0 {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := syncDir(filepath.Dir(missing[i])); err != nil {
			return err
		}
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

// ctxReader stops a copy when its context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// readFile reads a whole file of at most limit bytes; a larger file is an
// error wrapping errTooLarge.
func readFile(ctx context.Context, fsys FS, name string, limit int64) ([]byte, error) {
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
