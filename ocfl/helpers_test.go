package ocfl

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// sum is the sha512 of s in hex.
func sum(s string) string {
	h := sha512.Sum512([]byte(s))
	return hex.EncodeToString(h[:])
}

// files is a version's content by logical path.
type files map[string]string

// newVersion makes the NewVersion of fs, opening content from fs itself,
// and counts the digests it is asked to open.
func newVersion(fs files, msg string, opened *int) NewVersion {
	state := map[string]string{}
	byDigest := map[string]string{}
	for p, c := range fs {
		state[p] = sum(c)
		byDigest[sum(c)] = c
	}
	return NewVersion{
		State: state,
		Content: func(_ context.Context, d string) (io.ReadCloser, error) {
			if opened != nil {
				*opened++
			}
			c, ok := byDigest[d]
			if !ok {
				return nil, fmt.Errorf("no content %s", d)
			}
			return io.NopCloser(bytes.NewReader([]byte(c))), nil
		},
		Created: time.Date(2026, 11, 29, 3, 0, 0, 0, time.UTC),
		Message: msg,
		User:    User{Name: "Shelfmark", Address: "mailto:preservation@example.org"},
	}
}

// newRoot makes a storage root in a fresh directory.
func newRoot(t testing.TB) (*Root, *DirFS) {
	t.Helper()
	fsys, err := NewDirFS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, err := InitRoot(context.Background(), fsys)
	if err != nil {
		t.Fatal(err)
	}
	return root, fsys
}

// commit commits fs as the next version of id after head, failing the test
// on error.
func commit(t testing.TB, root *Root, id string, head int, fs files, msg string) *Object {
	t.Helper()
	obj, err := root.Commit(context.Background(), id, head, newVersion(fs, msg, nil))
	if err != nil {
		t.Fatalf("commit %s v%d: %v", id, head+1, err)
	}
	return obj
}

// readAll reads the logical file p of version n.
func readAll(t testing.TB, obj *Object, n int, p string) string {
	t.Helper()
	rc, err := obj.Open(context.Background(), n, p)
	if err != nil {
		t.Fatalf("open %s v%d: %v", p, n, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s v%d: %v", p, n, err)
	}
	return string(b)
}

// checkObject asserts the object reads back as want at version n.
func checkObject(t testing.TB, obj *Object, n int, want files) {
	t.Helper()
	state, err := obj.State(n)
	if err != nil {
		t.Fatal(err)
	}
	if len(state) != len(want) {
		t.Errorf("v%d has %d files, want %d: %v", n, len(state), len(want), state)
	}
	for p, c := range want {
		if state[p] != sum(c) {
			t.Errorf("v%d %s: digest %s, want that of %q", n, p, state[p], c)
			continue
		}
		if got := readAll(t, obj, n, p); got != c {
			t.Errorf("v%d %s = %q, want %q", n, p, got, c)
		}
	}
}

// mustValid asserts the storage root validates with no finding.
func mustValid(t testing.TB, fsys FS) {
	t.Helper()
	if rep := ValidateRoot(context.Background(), fsys); len(rep.Errors)+len(rep.Warnings) > 0 {
		t.Fatalf("storage root not clean:\n%s", rep)
	}
}

// countingFS is a DirFS that counts what is written through it and can
// stop working (as a crashed process would) at a given write.
type countingFS struct {
	*DirFS
	mu       sync.Mutex
	writes   []string
	bytes    int64
	crashAt  int // the write (1-based) at which the "process" dies; 0: never
	crashed  bool
	partial  bool // the dying write leaves a partial temporary file
	removals int
}

var errCrashed = errors.New("simulated crash")

func (c *countingFS) dead() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.crashed
}

// next records a write of name, or, at the write crashAt, kills the
// "process" (a partial crash leaves what cut leaves).
func (c *countingFS) next(name string, cut func()) error {
	c.mu.Lock()
	if c.crashed {
		c.mu.Unlock()
		return errCrashed
	}
	if c.crashAt == len(c.writes)+1 {
		c.crashed = true
		c.mu.Unlock()
		if c.partial {
			cut()
		}
		return errCrashed
	}
	c.writes = append(c.writes, name)
	c.mu.Unlock()
	return nil
}

// cutDir is the local directory of name, made if missing, for what a
// write cut short leaves there.
func (c *countingFS) cutDir(name string) string {
	dir := filepath.Join(c.DirFS.Dir(), filepath.FromSlash(pathDir(name)))
	_ = os.MkdirAll(dir, 0o755)
	return dir
}

func (c *countingFS) Write(ctx context.Context, name string, r io.Reader, exclusive bool) error {
	if err := c.next(name, func() {
		// the temporary file of a write cut short
		_ = os.WriteFile(filepath.Join(c.cutDir(name), tempPrefix+"cut"), []byte("par"), 0o644)
	}); err != nil {
		return err
	}
	cr := &countReader{r: r}
	err := c.DirFS.Write(ctx, name, cr, exclusive)
	c.mu.Lock()
	c.bytes += cr.n
	c.mu.Unlock()
	return err
}

// Link counts a link as a write of no bytes, and dies as Write does.
func (c *countingFS) Link(ctx context.Context, src, dst string) error {
	return c.link(ctx, src, dst, c.DirFS.Link)
}

// LinkLater is Link without the durability.
func (c *countingFS) LinkLater(ctx context.Context, src, dst string) error {
	return c.link(ctx, src, dst, c.DirFS.LinkLater)
}

func (c *countingFS) link(ctx context.Context, src, dst string, link linkFunc) error {
	if err := c.next(dst, func() {
		// the temporary name of a replacing link cut short
		_ = os.Link(filepath.Join(c.DirFS.Dir(), filepath.FromSlash(src)), filepath.Join(c.cutDir(dst), tempPrefix+"cut"))
	}); err != nil {
		return err
	}
	return link(ctx, src, dst)
}

func (c *countingFS) RemoveAll(ctx context.Context, name string) error {
	if c.dead() {
		return errCrashed
	}
	c.mu.Lock()
	c.removals++
	c.mu.Unlock()
	return c.DirFS.RemoveAll(ctx, name)
}

func (c *countingFS) ReadDir(ctx context.Context, dir string) ([]Entry, error) {
	if c.dead() {
		return nil, errCrashed
	}
	return c.DirFS.ReadDir(ctx, dir)
}

func (c *countingFS) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	if c.dead() {
		return nil, errCrashed
	}
	return c.DirFS.Open(ctx, name)
}

func (c *countingFS) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writes, c.bytes, c.removals = nil, 0, 0
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func pathDir(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '/' {
			return name[:i]
		}
	}
	return "."
}
