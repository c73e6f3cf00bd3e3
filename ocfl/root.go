package ocfl

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
)

// Names of the storage root's files.
const (
	rootDeclaration = "0=ocfl_1.1"
	layoutFile      = "ocfl_layout.json"
	// LayoutExtension is the storage layout extension a Root uses.
	LayoutExtension = "0004-hashed-n-tuple-storage-layout"
	layoutConfig    = "extensions/" + LayoutExtension + "/config.json"
)

// layoutConfigJSON is the 0004 extension's configuration: sha256 of the
// identifier, three tuples of three hex characters, the full digest as the
// object directory.
const layoutConfigJSON = `{
  "extensionName": "0004-hashed-n-tuple-storage-layout",
  "digestAlgorithm": "sha256",
  "tupleSize": 3,
  "numberOfTuples": 3,
  "shortObjectRoot": false
}
`

const layoutJSON = `{
  "extension": "0004-hashed-n-tuple-storage-layout",
  "description": "Hashed N-tuple Storage Layout: sha256 of the object id, three tuples of three characters, then the full digest"
}
`

// Errors a Root returns; test them with errors.Is.
var (
	// ErrNotFound: no object with that identifier (or none committed).
	ErrNotFound = errors.New("ocfl: object not found")
	// ErrHeadMismatch: the object's head is not the one the writer expected
	// (another writer committed first, or the caller's view is stale).
	ErrHeadMismatch = errors.New("ocfl: object head is not the expected one")
	// ErrDigestMismatch: bytes given for a new version do not have the
	// digest the state claims; nothing is committed.
	ErrDigestMismatch = errors.New("ocfl: content digest mismatch")
	// ErrNotRoot: the directory is not an OCFL storage root of this layout.
	ErrNotRoot = errors.New("ocfl: not an OCFL 1.1 storage root with the 0004 layout")
)

// Root is an OCFL 1.1 storage root laid out by the 0004 hashed n-tuple
// extension. It is safe for concurrent use: writes (and the recovery an
// open may do) of one object are serialised by a lock per object held in
// the Root and, when the FS is a Locker (DirFS is), by a lock of the FS
// that other processes honour too. On an FS that cannot lock (S3), run one
// writing process per storage root: the exclusive creation of each
// version's inventory still stops two writers committing the same version,
// but one could remove the other's unfinished version as a crash's
// leftover.
type Root struct {
	fsys  FS
	mu    sync.Mutex
	locks map[string]*objectLock
}

// objectLock is the lock of one object, counted so the map does not grow.
type objectLock struct {
	mu   sync.Mutex
	refs int
}

// InitRoot makes fsys a storage root if it is empty (writing 0=ocfl_1.1,
// ocfl_layout.json and the layout's config.json) and opens it; an existing
// root must already have this layout. Cost: a listing and three small reads
// or writes.
func InitRoot(ctx context.Context, fsys FS) (*Root, error) {
	entries, err := fsys.ReadDir(ctx, ".")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("ocfl: init storage root: %w", err)
	}
	if len(entries) == 0 || len(entries) == 1 && entries[0].Name == lockFile {
		// The declaration goes last: a root whose init was cut short has
		// none and is initialised again.
		for _, f := range []struct{ name, data string }{
			{layoutConfig, layoutConfigJSON},
			{layoutFile, layoutJSON},
			{rootDeclaration, "ocfl_1.1\n"},
		} {
			if err := fsys.Write(ctx, f.name, strings.NewReader(f.data), false); err != nil {
				return nil, fmt.Errorf("ocfl: init storage root: %w", err)
			}
		}
	} else if !hasEntry(entries, rootDeclaration) && !hasEntry(entries, "0=ocfl_1.0") {
		onlyInit := true
		for _, e := range entries {
			if e.Name != layoutFile && e.Name != "extensions" && e.Name != lockFile && !strings.HasPrefix(e.Name, tempPrefix) {
				onlyInit = false
			}
		}
		if onlyInit {
			if err := fsys.RemoveAll(ctx, layoutFile); err != nil {
				return nil, err
			}
			if err := fsys.RemoveAll(ctx, "extensions"); err != nil {
				return nil, err
			}
			return InitRoot(ctx, fsys)
		}
	}
	return OpenRoot(ctx, fsys)
}

// OpenRoot opens an existing storage root, checking its declaration and that
// its layout is the 0004 extension with this package's configuration
// (ErrNotRoot otherwise). Cost: three small reads.
func OpenRoot(ctx context.Context, fsys FS) (*Root, error) {
	decl, err := ReadFile(ctx, fsys, rootDeclaration, 64)
	if err != nil || string(decl) != "ocfl_1.1\n" {
		return nil, fmt.Errorf("%w: no valid %s", ErrNotRoot, rootDeclaration)
	}
	raw, err := ReadFile(ctx, fsys, layoutFile, 1<<16)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotRoot, err)
	}
	var layout struct {
		Extension string `json:"extension"`
	}
	if err := json.Unmarshal(raw, &layout); err != nil || layout.Extension != LayoutExtension {
		return nil, fmt.Errorf("%w: %s does not name %s", ErrNotRoot, layoutFile, LayoutExtension)
	}
	cfg, err := ReadFile(ctx, fsys, layoutConfig, 1<<16)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotRoot, err)
	}
	if err := checkLayoutConfig(cfg); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotRoot, err)
	}
	return &Root{fsys: fsys, locks: map[string]*objectLock{}}, nil
}

// checkLayoutConfig accepts the 0004 config this package writes (the
// defaults of the extension, which may be left out).
func checkLayoutConfig(data []byte) error {
	var cfg struct {
		ExtensionName   string `json:"extensionName"`
		DigestAlgorithm *string
		TupleSize       *int
		NumberOfTuples  *int
		ShortObjectRoot *bool
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&cfg); err != nil {
		return fmt.Errorf("%s: %w", layoutConfig, err)
	}
	if cfg.ExtensionName != LayoutExtension ||
		cfg.DigestAlgorithm != nil && *cfg.DigestAlgorithm != "sha256" ||
		cfg.TupleSize != nil && *cfg.TupleSize != 3 ||
		cfg.NumberOfTuples != nil && *cfg.NumberOfTuples != 3 ||
		cfg.ShortObjectRoot != nil && *cfg.ShortObjectRoot {
		return fmt.Errorf("%s: only sha256, tupleSize 3, numberOfTuples 3, shortObjectRoot false is supported", layoutConfig)
	}
	return nil
}

// FS is the storage the root lives on.
func (r *Root) FS() FS { return r.fsys }

// ObjectPath is the object root of id under the storage root, by the 0004
// layout: the sha256 of id in lower-case hex, split into three tuples of
// three characters, then the whole digest
// ("7e3/6a1/5c2/7e36a15c2…"). It does not say whether the object exists.
func ObjectPath(id string) string {
	sum := sha256.Sum256([]byte(id))
	h := hex.EncodeToString(sum[:])
	return h[0:3] + "/" + h[3:6] + "/" + h[6:9] + "/" + h
}

// lock takes the lock of the object at dir, in this Root and, when the FS
// is a Locker, against other processes, and returns its release.
func (r *Root) lock(ctx context.Context, dir string) (func(), error) {
	r.mu.Lock()
	l := r.locks[dir]
	if l == nil {
		l = &objectLock{}
		r.locks[dir] = l
	}
	l.refs++
	r.mu.Unlock()
	l.mu.Lock()
	release := func() {
		l.mu.Unlock()
		r.mu.Lock()
		l.refs--
		if l.refs == 0 {
			delete(r.locks, dir)
		}
		r.mu.Unlock()
	}
	if lk, ok := r.fsys.(Locker); ok {
		unlock, err := lk.LockObject(ctx, dir)
		if err != nil {
			release()
			return nil, err
		}
		return func() { unlock(); release() }, nil
	}
	return release, nil
}

func hasEntry(entries []Entry, name string) bool {
	for _, e := range entries {
		if e.Name == name {
			return true
		}
	}
	return false
}
