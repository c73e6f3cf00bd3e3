// Package blob keeps the bytes of managed files (rule R13): content-addressed
// by SHA-256, checksummed while they stream in, and durable before a Put
// returns (rule R10).
package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/shelfmark/shelfmark"
)

const (
	// copyBufSize is the size of the buffers that carry bytes from the
	// reader to the temporary file and the hashes.
	copyBufSize = 256 << 10
	// tmpPrefix starts the name of every temporary file.
	tmpPrefix = "put-"
	// tmpMaxAge is the age past which NewLocal deletes a temporary file as
	// the leftover of a crash. An upload in progress writes to its file and
	// so keeps its modification time recent.
	tmpMaxAge = time.Hour
	// blobPerm is the mode of stored blobs: they never change.
	blobPerm = 0o444
	dirPerm  = 0o755
)

// LocalStore is a shelfmark.BlobStore over a directory of the local file
// system. A blob of up to SmallMax bytes lives in the pack database
// <dir>/small.db, one row per SHA-256. A larger blob with SHA-256 h
// (lower-case hex) lives at <dir>/h[0:2]/h[2:4]/h; its bytes live in
// <dir>/tmp while they are received, until they are verified, synced and
// renamed into place, so a reader never sees a partial blob and a crash
// leaves at most a stale temporary file.
//
// A LocalStore is safe for concurrent use, also by several processes sharing
// the directory. Close it when done.
type LocalStore struct {
	dir   string
	tmp   string
	small *smallStore
	// pending holds the Deferred puts of small blobs until Sync.
	pending *pendingSmall
	bufs    sync.Pool // of *[]byte, copyBufSize long
	heads   sync.Pool // of *[]byte, SmallMax+1 long
	// deferredFiles counts Deferred puts into files since the last Sync:
	// without any, Sync need not sync the file system.
	deferredFiles atomic.Int64
	// wrapTemp, when set (by tests), wraps the writer of every temporary
	// file, so a test can make writes fail as on a full disk.
	wrapTemp func(io.Writer) io.Writer
}

var _ shelfmark.BlobStore = (*LocalStore)(nil)

// NewLocal returns a store over dir, creating it if need be, and deletes the
// temporary files that crashed uploads left there more than an hour ago.
func NewLocal(dir string) (*LocalStore, error) {
	if dir == "" {
		return nil, errors.New("blob: no directory given")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	s := &LocalStore{dir: abs, tmp: filepath.Join(abs, "tmp")}
	s.bufs.New = func() any {
		b := make([]byte, copyBufSize)
		return &b
	}
	s.heads.New = func() any {
		b := make([]byte, SmallMax+1)
		return &b
	}
	_, err = os.Stat(abs)
	created := errors.Is(err, fs.ErrNotExist)
	if err := os.MkdirAll(s.tmp, dirPerm); err != nil {
		return nil, fmt.Errorf("blob: creating the store: %w", err)
	}
	if created {
		// Make the new store directory itself durable.
		if err := syncDir(filepath.Dir(abs)); err != nil {
			return nil, err
		}
	}
	if err := syncDir(abs); err != nil {
		return nil, err
	}
	if err := s.removeStaleTemps(time.Now().Add(-tmpMaxAge)); err != nil {
		return nil, err
	}
	if err := s.restoreAside(); err != nil {
		return nil, err
	}
	if s.small, err = openSmall(filepath.Join(abs, smallFile)); err != nil {
		return nil, err
	}
	s.pending = newPendingSmall(s.small.put)
	return s, nil
}

// Close commits the deferred puts of small blobs and closes the pack
// database.
func (s *LocalStore) Close() error {
	err := s.pending.flush(context.Background())
	return errors.Join(full(err), s.small.close())
}

// removeStaleTemps deletes the temporary files last written before cutoff.
func (s *LocalStore) removeStaleTemps(cutoff time.Time) error {
	entries, err := os.ReadDir(s.tmp)
	if err != nil {
		return fmt.Errorf("blob: listing temporary files: %w", err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tmpPrefix) || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // another process finished or removed it
		} else if err != nil {
			return fmt.Errorf("blob: %w", err)
		}
		if info.ModTime().Before(cutoff) {
			err := os.Remove(filepath.Join(s.tmp, e.Name()))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("blob: removing a stale temporary file: %w", err)
			}
		}
	}
	return nil
}

// Put streams r into the store. It computes SHA-256 and every algorithm of
// opts.Compute and opts.Expect while the bytes arrive, stops reading as soon
// as more than opts.MaxSize bytes came (ETOOLARGE), verifies opts.Expect
// (EDIGESTMISMATCH), then stores the bytes: up to SmallMax bytes as a row of
// the pack database, committed durably (or, Deferred, at the next Sync);
// beyond, as a file synced and renamed to its content address. Identical
// bytes are stored once: when the address is taken, the new copy is
// dropped.
//
// On any error, including the cancellation of ctx, no bytes are kept. The
// one exception is a failure to sync the directory after the rename: the
// blob then stays in place (another Put of the same bytes may have been
// acknowledged) but the error is returned, as its durability is unknown.
// ctx is checked between reads; a Read that blocks is the reader's to end.
// A write that fails for lack of space (ENOSPC, a disk quota, a full pack
// database) is ESTORAGEFULL.
func (s *LocalStore) Put(ctx context.Context, r io.Reader, opts shelfmark.PutOptions) (*shelfmark.Blob, error) {
	b, err := s.put(ctx, r, opts)
	return b, full(err)
}

func (s *LocalStore) put(ctx context.Context, r io.Reader, opts shelfmark.PutOptions) (*shelfmark.Blob, error) {
	// Read the first SmallMax+1 bytes: a blob that ends within them is
	// stored in the pack database without touching the file system.
	hp := s.heads.Get().(*[]byte)
	defer s.heads.Put(hp)
	hs, r, head, eof, err := startPut(ctx, r, opts, *hp)
	if err != nil {
		return nil, err
	}
	if eof {
		return s.putSmall(ctx, head, hs, opts)
	}
	r = io.MultiReader(bytes.NewReader(head), r)
	f, err := os.CreateTemp(s.tmp, tmpPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("blob: creating a temporary file: %w", err)
	}
	tmpName := f.Name()
	keep := false
	defer func() {
		if !keep {
			_ = f.Close() // may already be closed
			_ = os.Remove(tmpName)
		}
	}()

	var dst io.Writer = f
	if s.wrapTemp != nil {
		dst = s.wrapTemp(f)
	}
	size, err := s.copy(ctx, dst, r, opts.MaxSize, hs)
	if err != nil {
		return nil, err
	}
	b, err := verify(size, hs, opts)
	if err != nil {
		return nil, err
	}

	sha := b.Digests[shelfmark.SHA256]
	final := s.path(sha)
	shard := filepath.Dir(final)
	if stored, err := s.renew(final); err != nil {
		return nil, err
	} else if stored {
		// Already stored: the copy need not be synced. Sync the stored file
		// and its directory anyway: a concurrent Put may have renamed it
		// there and not synced yet, or a Deferred Put may have left it
		// unsynced until its caller's Sync.
		if !opts.Deferred {
			if err := syncFile(final); err != nil {
				return nil, err
			}
			if err := syncDir(shard); err != nil {
				return nil, err
			}
		}
		return b, nil // the deferred function removes the copy
	}

	if err := f.Chmod(blobPerm); err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	if !opts.Deferred {
		if err := f.Sync(); err != nil {
			return nil, fmt.Errorf("blob: syncing: %w", err)
		}
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("blob: closing: %w", err)
	}
	if opts.Deferred {
		if err := os.MkdirAll(shard, 0o755); err != nil {
			return nil, fmt.Errorf("blob: %w", err)
		}
	} else if err := mkdirSync(s.dir, sha[0:2], sha[2:4]); err != nil {
		return nil, err
	}
	// Last chance to give up: past the rename the bytes are stored.
	if err := ctx.Err(); err != nil {
		return nil, cancelled(ctx)
	}
	// Should a concurrent Put of the same bytes rename first, this rename
	// atomically replaces its file by an identical one.
	if err := os.Rename(tmpName, final); err != nil {
		return nil, fmt.Errorf("blob: storing: %w", err)
	}
	keep = true
	if opts.Deferred {
		s.deferredFiles.Add(1)
		return b, nil // durable at the caller's Sync
	}
	if err := syncDir(shard); err != nil {
		return nil, err
	}
	return b, nil
}

// Sync makes every Deferred Put durable: the small blobs with one commit of
// the pack database, the files with one syncfs(2) of the store's file
// system instead of an fsync per file and directory. A lack of space is
// ESTORAGEFULL.
func (s *LocalStore) Sync(ctx context.Context) error {
	return full(s.sync(ctx))
}

func (s *LocalStore) sync(ctx context.Context) error {
	if err := s.pending.flush(ctx); err != nil {
		return err
	}
	// A Put counted after the swap is synced by its caller's own Sync.
	if s.deferredFiles.Swap(0) == 0 {
		return nil
	}
	d, err := os.Open(s.dir)
	if err != nil {
		return fmt.Errorf("blob: sync: %w", err)
	}
	defer d.Close()
	if err := unix.Syncfs(int(d.Fd())); err != nil {
		return fmt.Errorf("blob: syncfs: %w", err)
	}
	return nil
}

// renew reports whether the blob file final is stored, and renews its
// modification time if so: the collector of blobs no file refers to counts
// their age from the last Put. The collector renames a blob aside before
// removing it, so a blob still in place after its time was renewed stays;
// one gone meanwhile is stored again by the caller.
func (s *LocalStore) renew(final string) (bool, error) {
	now := time.Now()
	if err := os.Chtimes(final, now, now); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("blob: %w", err)
	}
	if _, err := os.Lstat(final); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("blob: %w", err)
	}
	return true, nil
}

// syncFile makes a stored file's bytes durable.
func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("blob: syncing %s: %w", filepath.Base(path), err)
	}
	return nil
}

// copy moves the bytes of r to dst and the hashes, reading at most limit+1
// bytes when limit > 0, and returns how many bytes it moved.
func (s *LocalStore) copy(ctx context.Context, dst io.Writer, r io.Reader, limit int64, hs []namedHash) (int64, error) {
	bp := s.bufs.Get().(*[]byte)
	defer s.bufs.Put(bp)
	buf := *bp
	if limit > 0 {
		r = io.LimitReader(r, limit+1)
	}
	var size int64
	for eof := false; !eof; {
		// Fill the buffer, so that writes stay large even when the reader
		// hands out small pieces, as network bodies do.
		n := 0
		for n < len(buf) {
			if ctx.Err() != nil {
				return size, cancelled(ctx)
			}
			m, err := r.Read(buf[n:])
			n += m
			if err == io.EOF {
				eof = true
				break
			} else if err != nil {
				return size, fmt.Errorf("blob: reading the bytes: %w", err)
			}
		}
		size += int64(n)
		if limit > 0 && size > limit {
			return size, tooLarge(limit)
		}
		if n == 0 {
			continue
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return size, fmt.Errorf("blob: writing: %w", err)
		}
		for _, h := range hs {
			h.h.Write(buf[:n])
		}
	}
	return size, nil
}

// Open returns the blob whose SHA-256 is sha256 (64 lower-case hex digits)
// as an *os.File. Any other value, and a blob not stored, is ENOTFOUND.
func (s *LocalStore) Open(ctx context.Context, sha256 string) (io.ReadSeekCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, cancelled(ctx)
	}
	if !validSHA256(sha256) {
		return nil, notFound(sha256)
	}
	f, err := os.Open(s.path(sha256))
	if err == nil {
		return f, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("blob: %w", err)
	}
	if data, ok := s.pending.get(sha256); ok {
		return memBlob{bytes.NewReader(data)}, nil
	}
	sum, _ := hex.DecodeString(sha256)
	data, ok, err := s.small.get(ctx, sum)
	if err != nil {
		return nil, err
	} else if !ok {
		return nil, notFound(sha256)
	}
	return memBlob{bytes.NewReader(data)}, nil
}

// readHead reads from r into buf until buf is full or r ends, and reports
// whether it ended.
func readHead(ctx context.Context, r io.Reader, buf []byte) ([]byte, bool, error) {
	n := 0
	for n < len(buf) {
		if ctx.Err() != nil {
			return nil, false, cancelled(ctx)
		}
		m, err := r.Read(buf[n:])
		n += m
		if err == io.EOF {
			return buf[:n], true, nil
		} else if err != nil {
			return nil, false, fmt.Errorf("blob: reading the bytes: %w", err)
		}
	}
	return buf, false, nil
}

// putSmall stores a blob of at most SmallMax bytes, read whole, in the pack
// database.
func (s *LocalStore) putSmall(ctx context.Context, data []byte, hs []namedHash, opts shelfmark.PutOptions) (*shelfmark.Blob, error) {
	b, err := checkSmall(ctx, data, hs, opts)
	if err != nil {
		return nil, err
	}
	sha := b.Digests[shelfmark.SHA256]
	if opts.Deferred {
		err = s.pending.add(ctx, sha, data)
	} else {
		err = s.small.put(ctx, []shelfmark.SmallBlob{{SHA256: sha, Data: data}})
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

// checkSmall checks a small blob read whole against opts (its size bound
// and expected digests), hashing it with hs, before either store keeps it,
// and returns the Blob.
func checkSmall(ctx context.Context, data []byte, hs []namedHash, opts shelfmark.PutOptions) (*shelfmark.Blob, error) {
	if opts.MaxSize > 0 && int64(len(data)) > opts.MaxSize {
		return nil, tooLarge(opts.MaxSize)
	}
	for _, h := range hs {
		h.h.Write(data)
	}
	b, err := verify(int64(len(data)), hs, opts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, cancelled(ctx)
	}
	return b, nil
}

// verify sums the hashes into a Blob of the given size and checks the
// digests opts expects.
func verify(size int64, hs []namedHash, opts shelfmark.PutOptions) (*shelfmark.Blob, error) {
	b := &shelfmark.Blob{Size: size, Digests: make(map[shelfmark.DigestAlgorithm]string, len(hs))}
	sums := make(map[shelfmark.DigestAlgorithm][]byte, len(hs))
	for _, h := range hs {
		sum := h.h.Sum(nil)
		sums[h.alg] = sum
		b.Digests[h.alg] = hex.EncodeToString(sum)
	}
	for _, d := range opts.Expect {
		if got := sums[d.Algorithm]; string(got) != string(d.Value) {
			return nil, mismatch(d.Algorithm, d.Value, got)
		}
	}
	return b, nil
}

func tooLarge(limit int64) error {
	return &shelfmark.Error{
		Code:    shelfmark.ETOOLARGE,
		Message: fmt.Sprintf("The content is larger than the limit of %d bytes.", limit),
		Details: map[string]any{"limit": limit},
	}
}

// path returns where the blob with the given valid SHA-256 lives.
func (s *LocalStore) path(sha string) string {
	return filepath.Join(s.dir, sha[0:2], sha[2:4], sha)
}

// validSHA256 reports whether v is 64 lower-case hex digits, the only
// values from which a path is ever built.
func validSHA256(v string) bool {
	if len(v) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func notFound(sha string) error {
	return &shelfmark.Error{
		Code:    shelfmark.ENOTFOUND,
		Message: fmt.Sprintf("No stored bytes have the SHA-256 %.80q.", sha),
	}
}

// cancelled returns the error of a Put or Open given up because ctx ended;
// errors.Is finds context.Canceled or context.DeadlineExceeded in it.
func cancelled(ctx context.Context) error {
	return fmt.Errorf("blob: %w", context.Cause(ctx))
}

func mismatch(alg shelfmark.DigestAlgorithm, expected, computed []byte) error {
	e, c := hex.EncodeToString(expected), hex.EncodeToString(computed)
	e64, c64 := base64.StdEncoding.EncodeToString(expected), base64.StdEncoding.EncodeToString(computed)
	return &shelfmark.Error{
		Code: shelfmark.EDIGESTMISMATCH,
		Message: fmt.Sprintf("The %s digest of the received bytes is %s (base64 %s), not %s (base64 %s) as sent.",
			alg, c, c64, e, e64),
		Details: map[string]any{
			"algorithm":       string(alg),
			"expected":        e,
			"computed":        c,
			"expected_base64": e64,
			"computed_base64": c64,
		},
	}
}

// namedHash is a running hash and the algorithm it computes.
type namedHash struct {
	alg shelfmark.DigestAlgorithm
	h   hash.Hash
}

// newHashes returns one hash per algorithm among SHA-256, opts.Compute and
// opts.Expect, after checking the algorithms and the expected lengths.
func newHashes(opts shelfmark.PutOptions) ([]namedHash, error) {
	algs := make([]shelfmark.DigestAlgorithm, 0, 1+len(opts.Compute)+len(opts.Expect))
	algs = append(algs, shelfmark.SHA256)
	algs = append(algs, opts.Compute...)
	for _, d := range opts.Expect {
		algs = append(algs, d.Algorithm)
	}
	var hs []namedHash
	seen := make(map[shelfmark.DigestAlgorithm]int, len(algs)) // sum lengths
	for _, alg := range algs {
		if _, ok := seen[alg]; ok {
			continue
		}
		h, n := alg.New(), alg.Size()
		if h == nil {
			return nil, &shelfmark.Error{
				Code:    shelfmark.EINVALID,
				Message: fmt.Sprintf("The digest algorithm %.40q is not supported; use sha-256, sha-512, md5 or sha.", alg),
				Details: map[string]any{"algorithm": string(alg)},
			}
		}
		seen[alg] = n
		hs = append(hs, namedHash{alg, h})
	}
	for _, d := range opts.Expect {
		if n := seen[d.Algorithm]; len(d.Value) != n {
			return nil, &shelfmark.Error{
				Code:    shelfmark.EINVALID,
				Message: fmt.Sprintf("The %s digest sent is %d bytes long; a %s digest has %d bytes.", d.Algorithm, len(d.Value), d.Algorithm, n),
				Details: map[string]any{"algorithm": string(d.Algorithm), "length": len(d.Value), "expected_length": n},
			}
		}
	}
	return hs, nil
}

// mkdirSync creates the directories root/names[0], root/names[0]/names[1]...
// that are missing, syncing the parent of each one it creates.
func mkdirSync(root string, names ...string) error {
	dir := root
	for _, name := range names {
		parent := dir
		dir = filepath.Join(dir, name)
		err := os.Mkdir(dir, dirPerm)
		if errors.Is(err, fs.ErrExist) {
			// Made earlier, or by a concurrent Put that syncs the parent
			// itself (only the first Put into a shard can race so).
			continue
		} else if err != nil {
			return fmt.Errorf("blob: %w", err)
		}
		if err := syncDir(parent); err != nil {
			return err
		}
	}
	return nil
}

// syncDir makes the entries of dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("blob: %w", err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("blob: syncing directory: %w", err)
	}
	return nil
}

// startPut begins a Put of r: it checks opts, makes the hashes it asks
// for, bounds r by opts.MaxSize (one byte more, to notice a larger body)
// and reads the first len(buf) bytes into head. eof reports that the
// whole body is in head; otherwise the body is head followed by what
// rest still gives.
func startPut(ctx context.Context, r io.Reader, opts shelfmark.PutOptions, buf []byte) (hs []namedHash, rest io.Reader, head []byte, eof bool, err error) {
	if opts.MaxSize < 0 {
		return nil, nil, nil, false, fmt.Errorf("blob: negative MaxSize %d", opts.MaxSize)
	}
	if hs, err = newHashes(opts); err != nil {
		return nil, nil, nil, false, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, nil, false, cancelled(ctx)
	}
	if opts.MaxSize > 0 {
		r = io.LimitReader(r, opts.MaxSize+1)
	}
	head, eof, err = readHead(ctx, r, buf)
	return hs, r, head, eof, err
}
