package backup

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/shelfmark/shelfmark/ocfl"
)

// maxRootFile bounds a file of the storage root outside the objects (the
// declaration, the layout, extension configurations).
const maxRootFile = 1 << 20

// objectDeclaration is the file that makes a directory an OCFL object.
const objectDeclaration = "0=ocfl_object_1.1"

// ocflCopy copies a storage root into the pool and lists what it copied.
type ocflCopy struct {
	src  ocfl.FS
	pool *pool
	prev map[string]string // path → digest, of the previous backup's immutable files
	m    *Manifest
	opts Options
	cp   *copier

	lines []string // "<sha512> <path>"

	mu   sync.Mutex
	gone map[string]bool // object directories purged while they were copied
}

// copyOCFL copies the storage root src: its own files, then every object
// at its last committed version (the root inventory read once, its sidecar
// made from it, so the two always agree; the version directories it names,
// which never change). It returns the listing's lines, sorted by path.
func copyOCFL(ctx context.Context, src ocfl.FS, p *pool, prev map[string]string, m *Manifest, opts Options) ([]string, error) {
	root, err := ocfl.OpenRoot(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("the preservation copy: %w", err)
	}
	c := &ocflCopy{src: src, pool: p, prev: prev, m: m, opts: opts, cp: newCopier(ctx, p, opts.Parallel), gone: map[string]bool{}}
	err = c.walk(ctx, root)
	if cerr := c.cp.close(); err == nil {
		err = cerr
	}
	files, bytes := c.cp.counts()
	m.Copied.OCFLFiles += files
	m.Copied.Bytes += bytes
	if err != nil {
		return nil, err
	}
	lines := c.lines[:0]
	for _, l := range c.lines {
		if !c.gone[objectDir(lineName(l))] {
			lines = append(lines, l)
		}
	}
	sort.Slice(lines, func(i, j int) bool { return lineName(lines[i]) < lineName(lines[j]) })
	return lines, nil
}

// walk copies the storage root's own files, then its objects.
func (c *ocflCopy) walk(ctx context.Context, root *ocfl.Root) error {
	if err := c.rootFiles(ctx, "."); err != nil {
		return err
	}
	var done int64
	err := root.Objects(ctx, func(id string, err error) error {
		if err != nil {
			return fmt.Errorf("the preservation copy: %w (repair it with shelfmark fixity run, then back up again)", err)
		}
		if err := c.objectOrGone(ctx, ocfl.ObjectPath(id)); err != nil {
			return fmt.Errorf("the preservation copy: object %s: %w", id, err)
		}
		done++
		if done%64 == 0 {
			files, _ := c.cp.counts()
			c.opts.Progress(Progress{Phase: "ocfl", Done: done, Total: -1, Copied: c.m.Copied.OCFLFiles + files})
		}
		return nil
	})
	if err != nil {
		return err
	}
	files, _ := c.cp.counts()
	c.opts.Progress(Progress{Phase: "ocfl", Done: done, Total: done, Copied: c.m.Copied.OCFLFiles + files})
	return nil
}

// objectDir is the object directory of a path in the storage root (the
// first four elements), or "" for a file of the root itself.
func objectDir(p string) string {
	parts := strings.SplitN(p, "/", 5)
	if len(parts) < 5 {
		return ""
	}
	return strings.Join(parts[:4], "/")
}

// goneObject reports whether the object at dir was purged (its root
// inventory is gone), and notes it.
func (c *ocflCopy) goneObject(ctx context.Context, dir string) bool {
	_, err := ocfl.ReadFile(ctx, c.src, path.Join(dir, "inventory.json"), ocfl.MaxInventorySize)
	if !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	c.mu.Lock()
	c.gone[dir] = true
	c.mu.Unlock()
	return true
}

// lineName is the path of a listing line.
func lineName(l string) string {
	_, p, _ := strings.Cut(l, " ")
	return p
}

// rootFiles copies the files of the storage root outside its objects:
// everything but the tuple directories (three hex characters), hidden
// files (the lock file, temporary files) and directories.
func (c *ocflCopy) rootFiles(ctx context.Context, dir string) error {
	entries, err := c.src.ReadDir(ctx, dir)
	if err != nil {
		return fmt.Errorf("the preservation copy: list %s: %w", dir, err)
	}
	for _, e := range entries {
		name := path.Join(dir, e.Name)
		switch {
		case strings.HasPrefix(e.Name, "."), e.Irregular:
		case e.Dir && dir == "." && len(e.Name) == 3:
		case e.Dir:
			if err := c.rootFiles(ctx, name); err != nil {
				return err
			}
		default:
			data, err := ocfl.ReadFile(ctx, c.src, name, maxRootFile)
			if err != nil {
				return fmt.Errorf("the preservation copy: %w", err)
			}
			if err := c.small(ctx, name, data); err != nil {
				return err
			}
		}
	}
	return nil
}

// objectOrGone copies the object at dir, or nothing if it was purged
// (its root inventory removed) while it was being copied.
func (c *ocflCopy) objectOrGone(ctx context.Context, dir string) error {
	err := c.object(ctx, dir)
	if err != nil && errors.Is(err, fs.ErrNotExist) && c.goneObject(ctx, dir) {
		return nil
	}
	return err
}

// object copies the object at dir as of its root inventory.
func (c *ocflCopy) object(ctx context.Context, dir string) error {
	data, err := ocfl.ReadFile(ctx, c.src, path.Join(dir, "inventory.json"), ocfl.MaxInventorySize)
	if err != nil {
		return err
	}
	inv, rep := ocfl.ParseInventory(data)
	if err := rep.Err(); err != nil {
		return fmt.Errorf("root inventory: %w", err)
	}
	if inv.DigestAlgorithm != algSHA512 {
		return fmt.Errorf("digest algorithm %q: a backup copies objects digested with sha512", inv.DigestAlgorithm)
	}
	if err := c.immutableFile(ctx, path.Join(dir, objectDeclaration)); err != nil {
		return err
	}
	if err := c.small(ctx, path.Join(dir, "inventory.json"), data); err != nil {
		return err
	}
	sum := sha512.Sum512(data)
	if err := c.small(ctx, path.Join(dir, "inventory.json.sha512"), []byte(hex.EncodeToString(sum[:])+"  inventory.json\n")); err != nil {
		return err
	}
	for v := range inv.Versions {
		for _, f := range []string{"inventory.json", "inventory.json.sha512"} {
			if err := c.immutableFile(ctx, path.Join(dir, v, f)); err != nil {
				return err
			}
		}
	}
	for d, paths := range inv.Manifest {
		d = strings.ToLower(d)
		for _, p := range paths {
			if err := c.content(ctx, path.Join(dir, p), d); err != nil {
				return err
			}
		}
	}
	return nil
}

// content copies a content file whose digest its inventory gives (by a
// worker of the copier: a file missing then is left out with its object
// if the object was purged meanwhile).
func (c *ocflCopy) content(ctx context.Context, name, d string) error {
	if !validDigest(algSHA512, d) {
		return fmt.Errorf("%s: digest %.130q is not a SHA-512", name, d)
	}
	_, err := c.cp.submit(copyJob{alg: algSHA512, d: d,
		open: func(ctx context.Context) (io.ReadCloser, error) { return c.src.Open(ctx, name) },
		fail: func(err error) error {
			if errors.Is(err, fs.ErrNotExist) && c.goneObject(ctx, objectDir(name)) {
				return nil
			}
			return fmt.Errorf("the preservation copy: open %s: %w", name, err)
		}})
	if err != nil {
		return err
	}
	c.lines = append(c.lines, d+" "+name)
	return nil
}

// immutableFile copies a file OCFL writes once (an object's declaration,
// a version's inventory and sidecar): from the previous backup's listing
// when it has it and the pool still holds it, else read.
func (c *ocflCopy) immutableFile(ctx context.Context, name string) error {
	if d, ok := c.prev[name]; ok {
		if have, err := c.pool.has(ctx, algSHA512, d); err != nil {
			return err
		} else if have {
			c.lines = append(c.lines, d+" "+name)
			return nil
		}
	}
	data, err := ocfl.ReadFile(ctx, c.src, name, ocfl.MaxInventorySize)
	if errors.Is(err, fs.ErrNotExist) && path.Base(name) == objectDeclaration {
		return fmt.Errorf("%s is missing", name)
	}
	if err != nil {
		return err
	}
	return c.small(ctx, name, data)
}

// small copies a file read whole.
func (c *ocflCopy) small(ctx context.Context, name string, data []byte) error {
	sum := sha512.Sum512(data)
	d := hex.EncodeToString(sum[:])
	_, err := c.cp.submit(copyJob{alg: algSHA512, d: d,
		open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	c.lines = append(c.lines, d+" "+name)
	return nil
}

// immutable reports whether the storage root's file at p is one OCFL
// never rewrites: inside an object (three tuple directories and the
// object's directory down), its declaration or a file of a version
// directory.
func immutable(p string) bool {
	parts := strings.Split(p, "/")
	if len(parts) < 5 || len(parts[3]) != 64 {
		return false
	}
	if len(parts) == 5 {
		return parts[4] == objectDeclaration
	}
	v := parts[4]
	if len(v) < 2 || v[0] != 'v' {
		return false
	}
	for _, r := range v[1:] {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
