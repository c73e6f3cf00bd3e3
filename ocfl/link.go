package ocfl

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Linker is implemented by an FS that can give an existing file a second
// name without writing its bytes again (DirFS: a hard link). A Root uses
// it for an object's root inventory and root sidecar, which OCFL requires
// to be identical to the newest version's (E064): as second names of the
// version's files they are identical by construction, and a version costs
// two file creations fewer, which on a local file system are its dearest
// operations after the directories. An FS without it (S3) gets the bytes
// written again.
type Linker interface {
	// Link makes dst a second name of the file src, replacing dst
	// atomically if it exists (readers see the old file or the new one,
	// whole), and makes it durable before it returns: src must be durable
	// already.
	Link(ctx context.Context, src, dst string) error
	// LinkLater is Link without the durability, which the next Sync of
	// a BatchFS gives it.
	LinkLater(ctx context.Context, src, dst string) error
}

// linkFunc gives the file src the second name dst: Linker.Link, or
// Linker.LinkLater in a Batch.
type linkFunc func(ctx context.Context, src, dst string) error

// Link implements Linker.
func (d *DirFS) Link(ctx context.Context, src, dst string) error {
	return d.link(ctx, src, dst, true)
}

// LinkLater implements Linker: Link without the directory's sync, which
// Sync does for it.
func (d *DirFS) LinkLater(ctx context.Context, src, dst string) error {
	return d.link(ctx, src, dst, false)
}

// link is Link (durable) or LinkLater (not). Cost: one link(2) when dst is
// new; when it exists, a link to a temporary name and a rename over dst
// (a rename is atomic, a link cannot replace).
func (d *DirFS) link(ctx context.Context, src, dst string, durable bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	ps, err := d.local(src)
	if err != nil {
		return err
	}
	pd, err := d.local(dst)
	if err != nil {
		return err
	}
	dir := filepath.Dir(pd)
	if err := d.mkdirAll(dir, durable); err != nil {
		return fmt.Errorf("ocfl: link %s: %w", dst, err)
	}
	if err := os.Link(ps, pd); errors.Is(err, fs.ErrExist) {
		if err := replaceByLink(ps, pd, dir); err != nil {
			return fmt.Errorf("ocfl: link %s to %s: %w", dst, src, err)
		}
	} else if err != nil {
		return fmt.Errorf("ocfl: link %s to %s: %w", dst, src, err)
	}
	if !durable {
		d.later(pd, dir)
		return nil
	}
	return syncDir(dir)
}

// replaceByLink makes the existing pd (in dir) a name of ps: a link under
// a temporary name, renamed over pd. Names of one file already are left
// alone (rename(2) would do nothing and leave the temporary name).
func replaceByLink(ps, pd, dir string) error {
	si, err := os.Stat(ps)
	if err != nil {
		return err
	}
	if di, err := os.Stat(pd); err == nil && os.SameFile(si, di) {
		return nil
	}
	tmp := tempName(dir)
	if err := os.Link(ps, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, pd); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
