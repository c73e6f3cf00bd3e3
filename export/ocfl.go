package export

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
)

// OCFLResult says how each object of an OCFL export was made.
type OCFLResult struct {
	Dir string
	// Copied are the objects copied from the preservation copy with all
	// their versions; Written those written from the database's current
	// state as one version (not in the preservation copy).
	Copied, Written []shelfmark.ID
}

// OCFL writes a new OCFL storage root at dir (which must not exist)
// holding the objects of ids (see the package documentation). Cost: every
// content file of every version of the objects read and written once,
// and the new root validated (every file read once more).
func (e *Exporter) OCFL(ctx context.Context, ids []shelfmark.ID, dir string) (res *OCFLResult, err error) {
	dir = filepath.Clean(dir)
	if _, err := os.Lstat(dir); err == nil {
		return nil, fmt.Errorf("export ocfl: %s exists already", dir)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("export ocfl: %w", err)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("export ocfl: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("export ocfl: %w", err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	fsys, err := ocfl.NewDirFS(tmp)
	if err != nil {
		return nil, fmt.Errorf("export ocfl: %w", err)
	}
	root, err := ocfl.InitRoot(ctx, fsys)
	if err != nil {
		return nil, fmt.Errorf("export ocfl: %w", err)
	}
	res = &OCFLResult{Dir: dir}
	seen := map[shelfmark.ID]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		copied, err := e.copyObject(ctx, fsys, id)
		if err != nil {
			return nil, fmt.Errorf("export ocfl: %s: %w", id, err)
		}
		if copied {
			res.Copied = append(res.Copied, id)
			continue
		}
		if err := e.writeObject(ctx, root, id); err != nil {
			return nil, fmt.Errorf("export ocfl: %s: %w", id, err)
		}
		res.Written = append(res.Written, id)
	}
	if rep := ocfl.ValidateRoot(ctx, fsys); !rep.Valid() {
		return nil, fmt.Errorf("export ocfl: the new storage root is not valid: %w", rep.Err())
	}
	if err := os.Rename(tmp, dir); err != nil {
		return nil, fmt.Errorf("export ocfl: %w", err)
	}
	return res, nil
}

// copyObject copies the object of id from the preservation copy into dst
// as its head inventory names it, and reports whether it was there.
func (e *Exporter) copyObject(ctx context.Context, dst ocfl.FS, id shelfmark.ID) (bool, error) {
	if e.opts.Preservation == nil {
		return false, nil
	}
	if _, err := e.ids.Key(id); err != nil {
		return false, err
	}
	obj, err := e.opts.Preservation.Open(ctx, preserve.ObjectID(id))
	if errors.Is(err, ocfl.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	inv := obj.Inventory()
	src, dir := e.opts.Preservation.FS(), obj.Dir()
	alg := inv.DigestAlgorithm
	sidecar := "inventory.json." + alg
	copyFile := func(from, to, want string) error {
		r, err := src.Open(ctx, path.Join(dir, from))
		if err != nil {
			return err
		}
		defer r.Close()
		var h hash.Hash
		if want != "" {
			if h = digestHash(alg); h == nil {
				return fmt.Errorf("digest algorithm %q is not supported", alg)
			}
		}
		var rd io.Reader = r
		if h != nil {
			rd = io.TeeReader(r, h)
		}
		if err := dst.Write(ctx, path.Join(dir, to), rd, true); err != nil {
			return err
		}
		if h != nil && !strings.EqualFold(hex.EncodeToString(h.Sum(nil)), want) {
			return fmt.Errorf("%s: the preservation copy's bytes do not match their digest %s: the copy is damaged", from, want)
		}
		return nil
	}
	if err := copyFile("0=ocfl_object_1.1", "0=ocfl_object_1.1", ""); err != nil {
		return false, err
	}
	for n := 1; n <= obj.Head(); n++ {
		v := versionDir(inv, n)
		for _, f := range []string{"inventory.json", sidecar} {
			if err := copyFile(path.Join(v, f), path.Join(v, f), ""); err != nil {
				return false, err
			}
		}
	}
	for digest, paths := range inv.Manifest {
		for _, p := range paths {
			if err := copyFile(p, p, digest); err != nil {
				return false, err
			}
		}
	}
	// the head version's inventory is the root inventory, byte for byte
	head := versionDir(inv, obj.Head())
	for _, f := range []string{"inventory.json", sidecar} {
		if err := copyFile(path.Join(head, f), f, ""); err != nil {
			return false, err
		}
	}
	return true, nil
}

// versionDir is the name of version n as the inventory writes it (v1, or
// zero-padded like its head).
func versionDir(inv *ocfl.Inventory, n int) string {
	head := inv.Head
	if len(head) > 2 && head[1] == '0' { // zero-padded: v001
		return fmt.Sprintf("v%0*d", len(head)-1, n)
	}
	return fmt.Sprintf("v%d", n)
}

// digestHash is the hash of an OCFL digest algorithm.
func digestHash(alg string) hash.Hash {
	switch alg {
	case "sha512":
		return sha512.New()
	case "sha256":
		return sha256.New()
	}
	return nil
}

// writeObject writes the object of id from the database's current state
// as version 1 of a new object.
func (e *Exporter) writeObject(ctx context.Context, root *ocfl.Root, id shelfmark.ID) error {
	s, err := e.read(ctx, id)
	if err != nil {
		return err
	}
	contents, err := s.state.Contents()
	if err != nil {
		return err
	}
	state := make(map[string]string, len(contents))
	byDigest := map[string]preserve.Content{}
	for _, c := range contents {
		d := c.SHA512
		if c.File == nil {
			sum := sha512.Sum512(c.Bytes)
			d = hex.EncodeToString(sum[:])
		}
		if d == "" { // an original stored before SHA-512s were kept
			if d, err = e.sha512Of(ctx, c.File.SHA256); err != nil {
				return fmt.Errorf("%s: %w", c.Path, err)
			}
		}
		state[c.Path] = d
		byDigest[d] = c
	}
	_, err = root.Commit(ctx, preserve.ObjectID(id), 0, ocfl.NewVersion{
		State: state,
		Content: func(ctx context.Context, digest string) (io.ReadCloser, error) {
			c, ok := byDigest[digest]
			if !ok {
				return nil, fmt.Errorf("no content of digest %s", digest)
			}
			if c.File == nil {
				return io.NopCloser(strings.NewReader(string(c.Bytes))), nil
			}
			return e.blobs.Open(ctx, c.File.SHA256)
		},
		Created: e.opts.Now(),
		Message: "exported from the repository's current state (not in its preservation copy)",
		User:    ocfl.User{Name: SoftwareName, Address: preserve.RepositoryObject},
	})
	return err
}

// sha512Of reads the blob of sha256 and returns its SHA-512, checking its
// SHA-256 on the way.
func (e *Exporter) sha512Of(ctx context.Context, sha256hex string) (string, error) {
	rc, err := e.blobs.Open(ctx, sha256hex)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	h5, h2 := sha512.New(), sha256.New()
	if _, err := io.Copy(io.MultiWriter(h5, h2), rc); err != nil {
		return "", err
	}
	if got := hex.EncodeToString(h2.Sum(nil)); got != sha256hex {
		return "", fmt.Errorf("the content store's bytes of %s have the SHA-256 %s: the content store is damaged", sha256hex, got)
	}
	return hex.EncodeToString(h5.Sum(nil)), nil
}
