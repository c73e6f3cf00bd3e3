package ocfl

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
)

// objectDeclaration is the conformance declaration of the objects written.
const objectDeclaration = "0=ocfl_object_1.1"

// Object is one committed version of an OCFL object as read from its root
// inventory: a snapshot, not updated by later commits (open it again to see
// them). Its methods read only the inventory already in memory, except
// Open, which reads the file asked for. It is safe for concurrent use.
type Object struct {
	fsys FS
	dir  string
	inv  *Inventory

	mu     sync.Mutex
	states map[string]map[string]string // version name → logical path → digest
	midx   map[string][]string          // lower-case digest → content paths
}

// index returns the logical state of version name and the manifest index,
// built on first use (linear in the version's files) and kept.
func (o *Object) index(name string) (map[string]string, map[string][]string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.states == nil {
		o.states = map[string]map[string]string{}
		o.midx = o.inv.manifestIndex()
	}
	st := o.states[name]
	if st == nil {
		st = o.inv.logicalState(name)
		o.states[name] = st
	}
	return st, o.midx
}

// VersionInfo describes one version of an object.
type VersionInfo struct {
	// Num is the version number (1 for v1).
	Num int
	// Name is the version directory name ("v1").
	Name string
	// Created, Message and User are the version block's metadata.
	Created time.Time
	Message string
	User    *User
	// Files is the number of logical files in the version's state.
	Files int
}

// ContentFile is one file stored in the object, with the digest its bytes
// must have: a fixity check reads Path and compares.
type ContentFile struct {
	// Path is the file's path from the storage root.
	Path string
	// ContentPath is the path from the object root, as in the manifest.
	ContentPath string
	// Algorithm is the digest algorithm ("sha512").
	Algorithm string
	// Digest is the expected digest in lower-case hex.
	Digest string
}

// ID is the object's identifier.
func (o *Object) ID() string { return o.inv.ID }

// Dir is the object root, relative to the storage root.
func (o *Object) Dir() string { return o.dir }

// Head is the number of the object's most recent version.
func (o *Object) Head() int {
	n, _ := versionNumber(o.inv.Head)
	return n
}

// Inventory is the object's root inventory. It is shared: callers must not
// modify it.
func (o *Object) Inventory() *Inventory { return o.inv }

// Versions lists the versions, oldest first. Cost: linear in the number of
// versions.
func (o *Object) Versions() []VersionInfo {
	var out []VersionInfo
	for _, name := range o.inv.versionNames() {
		v := o.inv.Versions[name]
		n, _ := versionNumber(name)
		files := 0
		for _, paths := range v.State {
			files += len(paths)
		}
		out = append(out, VersionInfo{Num: n, Name: name, Created: v.Created, Message: v.Message, User: v.User, Files: files})
	}
	return out
}

// versionByNum is the name of version n.
func (o *Object) versionByNum(n int) (string, error) {
	name := versionName(n, o.inv.Head)
	if o.inv.Versions[name] == nil {
		return "", fmt.Errorf("ocfl: object %q has no version %d (head is %s): %w", o.inv.ID, n, o.inv.Head, ErrNotFound)
	}
	return name, nil
}

// State is the logical state of version n: each logical path with its
// digest (lower-case hex, in the inventory's algorithm). Cost: linear in the
// version's files.
func (o *Object) State(n int) (map[string]string, error) {
	name, err := o.versionByNum(n)
	if err != nil {
		return nil, err
	}
	out := o.inv.logicalState(name)
	for p, d := range out {
		out[p] = lower(d)
	}
	return out, nil
}

// Open opens the bytes of the logical file at path as of version n,
// resolving it through the manifest. The reader checks the digest as it is
// read: reading to the end returns an error wrapping ErrDigestMismatch
// instead of io.EOF if the stored bytes have changed. Cost: the first Open
// of a version indexes its state (linear in its files); later ones look
// the path up directly.
func (o *Object) Open(ctx context.Context, n int, logical string) (io.ReadCloser, error) {
	name, err := o.versionByNum(n)
	if err != nil {
		return nil, err
	}
	state, midx := o.index(name)
	digest, ok := state[logical]
	if !ok {
		return nil, fmt.Errorf("ocfl: object %q version %d has no file %q: %w", o.inv.ID, n, logical, ErrNotFound)
	}
	paths := midx[lower(digest)]
	if len(paths) == 0 {
		return nil, fmt.Errorf("ocfl: object %q: digest %s of %q is not in the manifest", o.inv.ID, digest, logical)
	}
	rc, err := o.fsys.Open(ctx, path.Join(o.dir, paths[0]))
	if err != nil {
		return nil, err
	}
	h, _ := newHash(o.inv.DigestAlgorithm)
	return &verifyReader{r: rc, c: rc, h: h, want: lower(digest), name: path.Join(o.dir, paths[0])}, nil
}

// ContentFiles lists every content file of the object with its expected
// digest, sorted by path. Cost: linear in the manifest.
func (o *Object) ContentFiles() []ContentFile {
	var out []ContentFile
	for d, paths := range o.inv.Manifest {
		for _, p := range paths {
			out = append(out, ContentFile{Path: path.Join(o.dir, p), ContentPath: p, Algorithm: o.inv.DigestAlgorithm, Digest: lower(d)})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// newHash returns the hash of a content digest algorithm.
func newHash(alg string) (hash.Hash, bool) {
	switch alg {
	case "sha512":
		return sha512.New(), true
	case "sha256":
		return sha256.New(), true
	}
	return sha512.New(), false
}

// verifyReader hashes what it reads and, at the end, fails with
// ErrDigestMismatch unless the digest is want.
type verifyReader struct {
	r    io.Reader
	c    io.Closer
	h    hash.Hash
	want string
	name string
	n    int64
}

func (v *verifyReader) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if err == io.EOF {
		if got := hex.EncodeToString(v.h.Sum(nil)); got != v.want {
			return n, fmt.Errorf("ocfl: %s: %w: read %d bytes with digest %s, want %s", v.name, ErrDigestMismatch, v.n, got, v.want)
		}
	}
	return n, err
}

func (v *verifyReader) Close() error {
	if v.c == nil {
		return nil
	}
	return v.c.Close()
}

// Open opens the object with identifier id at its last committed version
// (ErrNotFound if there is none). If a writer stopped part way, the leftovers
// are removed first (see the package documentation), under the object's
// lock. Cost: reading the root inventory and listing the object root.
//
// On an FS that is not a Locker (S3), Open repairs nothing: another
// process may be writing the object, and what looks like a crash's
// leftovers may be its version in progress. It reads the root inventory
// (or, if that does not parse, the newest whole version inventory) and
// leaves recovery to the writer's next Commit or RecoverAll.
func (r *Root) Open(ctx context.Context, id string) (*Object, error) {
	dir := ObjectPath(id)
	if _, ok := r.fsys.(Locker); !ok {
		return r.View(ctx, id)
	}
	unlock, err := r.lock(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	inv, err := r.recover(ctx, dir)
	if err != nil {
		return nil, err
	}
	if inv == nil {
		return nil, fmt.Errorf("ocfl: %q: %w", id, ErrNotFound)
	}
	if inv.ID != id {
		return nil, fmt.Errorf("ocfl: object at %s has id %q, not %q", dir, inv.ID, id)
	}
	return &Object{fsys: r.fsys, dir: dir, inv: inv}, nil
}

// View reads the object with identifier id at its last committed version
// (ErrNotFound if there is none) without taking its lock or repairing
// anything: what a reader needs, since a version is committed by one
// atomic replacement of the root inventory. A version in progress (or a
// crash's leftovers) is not seen; a root inventory a crash tore is read
// from the newest whole version inventory instead. Readers call View, so
// that they never wait for a writer; writers (Commit, and Open where the
// FS has locks) repair. An inventory that does not match its sidecar is
// an error, as in Open. Cost: one read of the root inventory and of its
// sidecar.
func (r *Root) View(ctx context.Context, id string) (*Object, error) {
	dir := ObjectPath(id)
	data, err := ReadFile(ctx, r.fsys, path.Join(dir, "inventory.json"), MaxInventorySize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("ocfl: %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	inv := checkInventory(data, path.Join(dir, "inventory.json"), rep)
	if !rep.Valid() {
		entries, err := r.fsys.ReadDir(ctx, dir)
		if err != nil {
			return nil, err
		}
		if inv, _, ok := r.newestWhole(ctx, dir, entries); ok {
			return &Object{fsys: r.fsys, dir: dir, inv: inv}, nil
		}
		return nil, fmt.Errorf("ocfl: object root %s: %w", dir, rep.Err())
	}
	if inv.ID != id {
		return nil, fmt.Errorf("ocfl: object at %s has id %q, not %q", dir, inv.ID, id)
	}
	// The sidecar must match, unless a writer is between the root
	// inventory and its sidecar: then the inventory is the head version's,
	// whose own sidecar matches.
	sidecar := "inventory.json." + inv.DigestAlgorithm
	want := hexDigest(inv.DigestAlgorithm, data)
	if got, _ := ReadFile(ctx, r.fsys, path.Join(dir, sidecar), 1024); sidecarDigest(got) != want {
		vdata, err := ReadFile(ctx, r.fsys, path.Join(dir, inv.Head, "inventory.json"), MaxInventorySize)
		vside, _ := ReadFile(ctx, r.fsys, path.Join(dir, inv.Head, sidecar), 1024)
		if err != nil || !bytes.Equal(vdata, data) || sidecarDigest(vside) != want {
			return nil, fmt.Errorf("ocfl: object root %s: %s does not match inventory.json", dir, sidecar)
		}
	}
	return &Object{fsys: r.fsys, dir: dir, inv: inv}, nil
}

// recover brings the object at dir to its last whole version and returns
// its root inventory (nil when no version was ever committed):
//   - temporary files in the object root are removed;
//   - an object root without inventory.json holding only what a first
//     version's writer makes (declaration, v1) is removed entirely;
//   - version directories beyond the root inventory's head are removed;
//   - a root sidecar that does not match the root inventory is rewritten
//     when the inventory is byte for byte the head version's inventory,
//     whose own sidecar matches (a commit cut short between the root
//     inventory and its sidecar);
//   - a root inventory that is not a valid inventory (torn by a crash
//     after a Batch's first sync) is replaced by the newest version
//     inventory that is whole (see newestWhole).
//
// Anything else wrong is returned as an error and left alone. The caller
// holds the object's lock.
func (r *Root) recover(ctx context.Context, dir string) (*Inventory, error) {
	entries, err := r.fsys.ReadDir(ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name, tempPrefix) {
			if err := r.fsys.RemoveAll(ctx, path.Join(dir, e.Name)); err != nil {
				return nil, fmt.Errorf("ocfl: recover %s: %w", dir, err)
			}
		}
	}
	if !hasEntry(entries, "inventory.json") {
		for _, e := range entries {
			if e.Name != objectDeclaration && e.Name != "v1" && !strings.HasPrefix(e.Name, tempPrefix) {
				return nil, fmt.Errorf("ocfl: object root %s has no inventory.json but holds %s: not recovered", dir, e.Name)
			}
		}
		if err := r.removeObjectDir(ctx, dir); err != nil {
			return nil, fmt.Errorf("ocfl: recover %s: %w", dir, err)
		}
		return nil, nil
	}
	data, err := ReadFile(ctx, r.fsys, path.Join(dir, "inventory.json"), MaxInventorySize)
	if err != nil {
		return nil, err
	}
	rep := &Report{}
	inv := checkInventory(data, path.Join(dir, "inventory.json"), rep)
	if !rep.Valid() {
		// A root inventory torn by a crash after a Batch's first sync:
		// the newest whole version inventory is what it was being
		// replaced with, or what it was.
		pinv, pdata, ok := r.newestWhole(ctx, dir, entries)
		if !ok {
			return nil, fmt.Errorf("ocfl: object root %s: %w", dir, rep.Err())
		}
		if err := r.fsys.Write(ctx, path.Join(dir, "inventory.json"), bytes.NewReader(pdata), false); err != nil {
			return nil, fmt.Errorf("ocfl: recover %s: %w", dir, err)
		}
		inv, data = pinv, pdata
	}
	headNum, _ := versionNumber(inv.Head)
	for _, e := range entries {
		if n, ok := versionNumber(e.Name); ok && n > headNum {
			if err := r.fsys.RemoveAll(ctx, path.Join(dir, e.Name)); err != nil {
				return nil, fmt.Errorf("ocfl: recover %s: %w", dir, err)
			}
		}
	}
	sidecar := "inventory.json." + inv.DigestAlgorithm
	want := hexDigest(inv.DigestAlgorithm, data)
	got, _ := ReadFile(ctx, r.fsys, path.Join(dir, sidecar), 1024)
	if sidecarDigest(got) != want {
		vdata, err := ReadFile(ctx, r.fsys, path.Join(dir, inv.Head, "inventory.json"), MaxInventorySize)
		if err != nil || !bytes.Equal(vdata, data) {
			return nil, fmt.Errorf("ocfl: object root %s: %s does not match inventory.json", dir, sidecar)
		}
		vside, _ := ReadFile(ctx, r.fsys, path.Join(dir, inv.Head, sidecar), 1024)
		if sidecarDigest(vside) != want {
			return nil, fmt.Errorf("ocfl: object root %s: %s does not match inventory.json", dir, sidecar)
		}
		if err := r.fsys.Write(ctx, path.Join(dir, sidecar), strings.NewReader(sidecarText(want)), false); err != nil {
			return nil, fmt.Errorf("ocfl: recover %s: %w", dir, err)
		}
	}
	return inv, nil
}

// newestWhole finds the newest version directory of the object at dir
// whose inventory is valid, matches its sidecar, names that version as its
// head and belongs to the object at dir; it returns that inventory and its
// bytes. Cost: reading version inventories from the newest down until one
// is whole (one, unless a crash tore several).
func (r *Root) newestWhole(ctx context.Context, dir string, entries []Entry) (*Inventory, []byte, bool) {
	var nums []int
	names := map[int]string{}
	for _, e := range entries {
		if n, ok := versionNumber(e.Name); ok && e.Dir {
			nums = append(nums, n)
			names[n] = e.Name
		}
	}
	sort.Sort(sort.Reverse(sort.IntSlice(nums)))
	for _, n := range nums {
		name := names[n]
		data, err := ReadFile(ctx, r.fsys, path.Join(dir, name, "inventory.json"), MaxInventorySize)
		if err != nil {
			continue
		}
		rep := &Report{}
		inv := checkInventory(data, path.Join(dir, name, "inventory.json"), rep)
		if !rep.Valid() || inv.Head != name || ObjectPath(inv.ID) != dir {
			continue
		}
		side, _ := ReadFile(ctx, r.fsys, path.Join(dir, name, "inventory.json."+inv.DigestAlgorithm), 1024)
		if sidecarDigest(side) != hexDigest(inv.DigestAlgorithm, data) {
			continue
		}
		return inv, data, true
	}
	return nil, nil, false
}

// removeObjectDir removes an object root and then its parent directories
// up to the storage root while they are empty (OCFL forbids empty
// directories).
func (r *Root) removeObjectDir(ctx context.Context, dir string) error {
	if err := r.fsys.RemoveAll(ctx, dir); err != nil {
		return err
	}
	for p := path.Dir(dir); p != "." && p != "/" && p != ""; p = path.Dir(p) {
		entries, err := r.fsys.ReadDir(ctx, p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if len(entries) > 0 {
			break
		}
		if err := r.fsys.RemoveAll(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// hexDigest is the lower-case hex digest of data.
func hexDigest(alg string, data []byte) string {
	h, _ := newHash(alg)
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// sidecarText is the content of an inventory sidecar.
func sidecarText(digest string) string { return digest + "  inventory.json\n" }

// sidecarDigest reads the digest of a sidecar ("" if it is not one),
// lower-cased.
func sidecarDigest(data []byte) string {
	fields := strings.Fields(string(data))
	if len(fields) != 2 || fields[1] != "inventory.json" || !hexRE.MatchString(fields[0]) {
		return ""
	}
	return lower(fields[0])
}
