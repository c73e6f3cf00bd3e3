package ocfl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// NewVersion is the full logical state of a version to commit, with its
// metadata.
type NewVersion struct {
	// State maps every logical path of the new version to the sha512 digest
	// of its bytes (hex). A path of the previous version missing here is
	// deleted in the new version.
	State map[string]string
	// Content opens the bytes of a digest the object does not hold yet. It
	// is called once per such digest, never for content already in the
	// manifest.
	Content func(ctx context.Context, digest string) (io.ReadCloser, error)
	// Created is when the version was made (written in UTC, to the second).
	Created time.Time
	// Message says why the version was made.
	Message string
	// User says who made it: a name (required) and an address (a mailto: or
	// other URI; recommended, a validator warns without it).
	User User
}

// Commit writes version expectedHead+1 of the object id, whose head must be
// expectedHead (0 for a new object), else ErrHeadMismatch and nothing is
// written. Only content whose digest is not in the manifest is written
// (into the new version's content directory, under its first logical
// path); each file's digest is checked as it is written, and a mismatch
// (ErrDigestMismatch) or any other failure removes the new version and
// commits nothing. Then the version's inventory and sidecar are written, the
// inventory exclusively (two writers cannot both create it), and last the
// root inventory (the commit point) and its sidecar.
//
// Cost: the new content's bytes, plus the inventory twice (it is written
// and its digest taken; on an FS that is a Linker the root inventory and
// sidecar are second names of the version's, else they are written again):
// the only part that grows with the object. Writes of one object are
// serialised; of different objects they run in parallel.
//
// If only the root sidecar fails to be written after the commit point, the
// version is committed: Commit returns the new Object together with an
// error, and the next Open or Commit rewrites the sidecar.
func (r *Root) Commit(ctx context.Context, id string, expectedHead int, v NewVersion) (*Object, error) {
	pv, err := r.prepare(ctx, id, expectedHead, v, r.fsys.Write)
	if err != nil {
		return nil, err
	}
	defer pv.unlock()
	return r.finish(ctx, pv, r.fsys.Write, r.link(false))
}

// link is the FS's Link (LinkLater when later is set and the FS is a
// BatchFS), or nil when it cannot link.
func (r *Root) link(later bool) linkFunc {
	l, ok := r.fsys.(Linker)
	if !ok {
		return nil
	}
	if _, batch := r.fsys.(BatchFS); later && batch {
		return l.LinkLater
	}
	return l.Link
}

// writeFunc writes one file: FS.Write, or BatchFS.WriteLater in a Batch.
type writeFunc func(ctx context.Context, name string, r io.Reader, exclusive bool) error

// prepared is a version written up to its commit point: its content and
// its version directory's inventory and sidecar are written, and the
// object's lock is held until unlock.
type prepared struct {
	id, dir, name string
	cur           *Inventory // the head before this version (nil: a new object)
	inv           *Inventory // the inventory with this version
	data          []byte     // inv as written
	side          string     // its sidecar's text
	unlock        func()
}

// discard removes what was written of version name of the object at dir
// (and the object root, for a new object, cur == nil): nothing of it is
// referenced. A failure to remove is repaired by the next recover.
func (r *Root) discard(ctx context.Context, cur *Inventory, dir, name string) {
	ctx = context.WithoutCancel(ctx)
	if cur == nil {
		_ = r.removeObjectDir(ctx, dir)
	} else {
		_ = r.fsys.RemoveAll(ctx, path.Join(dir, name))
	}
}

// prepare checks v, takes the object's lock, recovers the object, checks
// its head, and writes the new version's content, inventory and sidecar
// with write. On error nothing of the version is left and the lock is
// released; on success the caller owns the lock (prepared.unlock).
func (r *Root) prepare(ctx context.Context, id string, expectedHead int, v NewVersion, write writeFunc) (*prepared, error) {
	if id == "" || !utf8.ValidString(id) {
		return nil, errors.New("ocfl: commit: the object id must be non-empty UTF-8")
	}
	if v.User.Name == "" {
		return nil, fmt.Errorf("ocfl: commit %q: the version's user needs a name", id)
	}
	if y := v.Created.UTC().Year(); v.Created.IsZero() || y < 1 || y > 9999 {
		return nil, fmt.Errorf("ocfl: commit %q: created time %v is missing or outside years 1 to 9999", id, v.Created)
	}
	logical := make(map[string]bool, len(v.State))
	for p, d := range v.State {
		if code, msg := pathProblem(p); code != 0 || strings.ContainsRune(p, 0) || !utf8.ValidString(p) {
			if msg == "" {
				msg = "holds a NUL or is not UTF-8"
			}
			return nil, fmt.Errorf("ocfl: commit %q: logical path %q %s", id, p, msg)
		}
		if len(d) != 128 || !hexRE.MatchString(d) {
			return nil, fmt.Errorf("ocfl: commit %q: digest of %q is not a sha512 hex digest", id, p)
		}
		logical[p] = true
	}
	if c := conflicts(logical); len(c) > 0 {
		return nil, fmt.Errorf("ocfl: commit %q: logical path %q is both a file and a directory", id, c[0])
	}
	dir := ObjectPath(id)
	unlock, err := r.lock(ctx, dir)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			unlock()
		}
	}()
	cur, err := r.recover(ctx, dir)
	if err != nil {
		return nil, err
	}
	head := 0
	if cur != nil {
		head, _ = versionNumber(cur.Head)
		if cur.ID != id {
			return nil, fmt.Errorf("ocfl: commit %q: object at %s has id %q", id, dir, cur.ID)
		}
		if cur.DigestAlgorithm != "sha512" {
			return nil, fmt.Errorf("ocfl: commit %q: object uses %s; only sha512 objects are written", id, cur.DigestAlgorithm)
		}
		if cur.Type != InventoryType {
			return nil, fmt.Errorf("ocfl: commit %q: object is not OCFL 1.1 (%s); upgrading it is not supported", id, cur.Type)
		}
	}
	if head != expectedHead {
		return nil, fmt.Errorf("ocfl: commit %q: head is %d, expected %d: %w", id, head, expectedHead, ErrHeadMismatch)
	}
	inv := nextInventory(cur, id)
	name := versionName(head+1, inv.Head)
	if cur != nil && len(cur.Head) > 2 && cur.Head[1] == '0' && (len(name) != len(cur.Head) || name[1] != '0') {
		return nil, fmt.Errorf("ocfl: commit %q: zero-padded version names of %s have no room for version %d", id, cur.Head, head+1)
	}
	inv.Head = name
	pv := &prepared{id: id, dir: dir, name: name, cur: cur, inv: inv, unlock: unlock}

	written := false // the version directory is ours to remove on failure
	defer func() {
		if !ok && written {
			r.discard(ctx, cur, dir, name)
		}
	}()
	written = true
	if cur == nil {
		if err := write(ctx, path.Join(dir, objectDeclaration), strings.NewReader("ocfl_object_1.1\n"), false); err != nil {
			return nil, err
		}
	}
	// Each digest of the state, under the spelling the manifest uses.
	known := make(map[string]string, len(inv.Manifest))
	for d := range inv.Manifest {
		known[lower(d)] = d
	}
	byDigest := map[string][]string{}
	for p, d := range v.State {
		d = lower(d)
		if k, ok := known[d]; ok {
			d = k
		}
		byDigest[d] = append(byDigest[d], p)
	}
	digests := make([]string, 0, len(byDigest))
	for d, paths := range byDigest {
		sort.Strings(paths)
		digests = append(digests, d)
	}
	sort.Strings(digests)
	for _, d := range digests {
		if _, ok := inv.Manifest[d]; ok {
			continue
		}
		if v.Content == nil {
			return nil, fmt.Errorf("ocfl: commit %q: content of %s is new but NewVersion.Content is nil", id, d)
		}
		cp := name + "/" + inv.contentDir() + "/" + byDigest[d][0]
		if err := writeContent(ctx, write, path.Join(dir, cp), d, v.Content); err != nil {
			return nil, fmt.Errorf("ocfl: commit %q: %w", id, err)
		}
		inv.Manifest[d] = []string{cp}
	}
	user := v.User
	inv.Versions[name] = &Version{Created: v.Created.UTC().Truncate(time.Second), Message: v.Message, User: &user, State: byDigest, hasMessage: true}
	if pv.data, err = inv.Marshal(); err != nil {
		return nil, err
	}
	pv.side = sidecarText(hexDigest("sha512", pv.data))
	if err := write(ctx, path.Join(dir, name, "inventory.json"), bytes.NewReader(pv.data), true); err != nil {
		if errors.Is(err, fs.ErrExist) {
			// Another writer (one that does not share our locks) is
			// making this version: leave its directory alone.
			written = false
			return nil, fmt.Errorf("ocfl: commit %q: %s is being written by another writer: %w", id, name, ErrHeadMismatch)
		}
		return nil, fmt.Errorf("ocfl: commit %q: version inventory: %w", id, err)
	}
	if err := write(ctx, path.Join(dir, name, "inventory.json.sha512"), strings.NewReader(pv.side), false); err != nil {
		return nil, fmt.Errorf("ocfl: commit %q: %w", id, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ok = true
	return pv, nil
}

// finish writes a prepared version's root inventory (the commit point)
// and root sidecar, as second names of the version's with link when it is
// set, else with write; the caller releases the lock. If the root
// inventory's write fails, whether it took place is unknown (a rename may
// have happened before a failed directory sync), so the version directory
// is left for the next recover, which keeps it if the root inventory names
// it and removes it if not.
func (r *Root) finish(ctx context.Context, pv *prepared, write writeFunc, link linkFunc) (*Object, error) {
	place := func(ctx context.Context, name string, data []byte) error {
		if link != nil {
			return link(ctx, path.Join(pv.dir, pv.name, name), path.Join(pv.dir, name))
		}
		return write(ctx, path.Join(pv.dir, name), bytes.NewReader(data), false)
	}
	if err := place(ctx, "inventory.json", pv.data); err != nil {
		return nil, fmt.Errorf("ocfl: commit %q: root inventory: %w", pv.id, err)
	}
	obj := &Object{fsys: r.fsys, dir: pv.dir, inv: pv.inv}
	if err := place(context.WithoutCancel(ctx), "inventory.json.sha512", []byte(pv.side)); err != nil {
		return obj, fmt.Errorf("ocfl: commit %q: version %s committed, but its root sidecar was not written (the next open rewrites it): %w", pv.id, pv.name, err)
	}
	return obj, nil
}

// writeContent writes the bytes of digest d to name, checking the digest
// as they stream.
func writeContent(ctx context.Context, write writeFunc, name, d string, open func(context.Context, string) (io.ReadCloser, error)) error {
	rc, err := open(ctx, lower(d))
	if err != nil {
		return fmt.Errorf("open content %s: %w", d, err)
	}
	defer rc.Close()
	h, _ := newHash("sha512")
	vr := &verifyReader{r: rc, h: h, want: lower(d), name: name}
	if err := write(ctx, name, vr, false); err != nil {
		return err
	}
	// An FS that stops before the end would skip the check at io.EOF.
	if _, err := io.Copy(io.Discard, vr); err != nil {
		return err
	}
	return nil
}

// nextInventory copies cur (or starts a new inventory for id) so the next
// version can be added without touching cur. Version blocks are shared
// (they are never modified); the manifest map is copied.
func nextInventory(cur *Inventory, id string) *Inventory {
	if cur == nil {
		return &Inventory{ID: id, Type: InventoryType, DigestAlgorithm: "sha512", Head: "v1",
			Manifest: map[string][]string{}, Versions: map[string]*Version{}}
	}
	inv := *cur
	inv.Type = InventoryType
	inv.Manifest = make(map[string][]string, len(cur.Manifest)+1)
	for d, p := range cur.Manifest {
		inv.Manifest[d] = p
	}
	inv.Versions = make(map[string]*Version, len(cur.Versions)+1)
	for n, v := range cur.Versions {
		inv.Versions[n] = v
	}
	return &inv
}

// Purge removes the object id entirely (a takedown): its root inventory
// first, so that from then on the object does not exist for Open even if
// the removal of the rest is cut short (the next Purge or Commit finishes
// it), then the object root, then any tuple directories left empty.
// Purging an object that does not exist is not an error. Cost: one removal
// per file of the object.
func (r *Root) Purge(ctx context.Context, id string) error {
	dir := ObjectPath(id)
	unlock, err := r.lock(ctx, dir)
	if err != nil {
		return err
	}
	defer unlock()
	entries, err := r.fsys.ReadDir(ctx, dir)
	if err != nil {
		return nil // nothing there (or unreadable: RemoveAll below would say)
	}
	if hasEntry(entries, "inventory.json") {
		data, err := ReadFile(ctx, r.fsys, path.Join(dir, "inventory.json"), MaxInventorySize)
		if err == nil {
			rep := &Report{}
			if inv := checkInventory(data, "inventory.json", rep); inv != nil && inv.ID != "" && inv.ID != id {
				return fmt.Errorf("ocfl: purge %q: object at %s has id %q", id, dir, inv.ID)
			}
		}
		if err := r.fsys.RemoveAll(ctx, path.Join(dir, "inventory.json")); err != nil {
			return fmt.Errorf("ocfl: purge %q: %w", id, err)
		}
	}
	if err := r.removeObjectDir(ctx, dir); err != nil {
		return fmt.Errorf("ocfl: purge %q: %w", id, err)
	}
	return nil
}
