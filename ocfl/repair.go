package ocfl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
)

// ReplaceContent rewrites the content file at contentPath (from the object
// root, as in the manifest) of the object id with the bytes of r: the
// repair of a content file found damaged, from another copy of the same
// bytes. Under the object's lock, r is streamed to a temporary file beside
// the content file while its digest (the inventory's algorithm) is
// computed; only when it is the manifest's digest for that path does the
// temporary file replace the content file (DirFS: fsync and rename), so a
// reader sees the old bytes or the new, never a mix, and bytes of any
// other digest change nothing (an error wrapping ErrDigestMismatch). The
// inventory is not changed: the object holds the same content as before.
// On an FS without locks (S3) nothing else of the object is recovered (see
// Root.Open). Cost: one read of the root inventory and one write of the
// file.
func (r *Root) ReplaceContent(ctx context.Context, id, contentPath string, content io.Reader) error {
	dir := ObjectPath(id)
	unlock, err := r.lock(ctx, dir)
	if err != nil {
		return err
	}
	defer unlock()
	var inv *Inventory
	if _, ok := r.fsys.(Locker); ok {
		inv, err = r.recover(ctx, dir)
	} else if obj, verr := r.View(ctx, id); verr == nil {
		// no locks (S3): repair nothing else, a writer may be at work
		inv = obj.inv
	} else if !errors.Is(verr, ErrNotFound) {
		err = verr
	}
	if err != nil {
		return err
	}
	if inv == nil || inv.ID != id {
		return fmt.Errorf("ocfl: replace %s in %q: %w", contentPath, id, ErrNotFound)
	}
	want := ""
	for d, paths := range inv.Manifest {
		for _, p := range paths {
			if p == contentPath {
				want = lower(d)
			}
		}
	}
	if want == "" {
		return fmt.Errorf("ocfl: replace %s in %q: no such content file: %w", contentPath, id, ErrNotFound)
	}
	h, ok := newHash(inv.DigestAlgorithm)
	if !ok {
		return fmt.Errorf("ocfl: replace %s in %q: digest algorithm %q is not supported", contentPath, id, inv.DigestAlgorithm)
	}
	name := path.Join(dir, contentPath)
	vr := &verifyReader{r: content, h: h, want: want, name: name}
	if err := r.fsys.Write(ctx, name, vr, false); err != nil {
		return fmt.Errorf("ocfl: replace %s in %q: %w", contentPath, id, err)
	}
	return nil
}
