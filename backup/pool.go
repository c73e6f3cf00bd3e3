package backup

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
	"path"
	"sync"

	"github.com/shelfmark/shelfmark/ocfl"
)

// poolDir is the directory of the shared pool in a destination.
const poolDir = "pool"

// Digest algorithms of the pool: blobs are named by SHA-256, the files of
// the preservation copy by SHA-512 (the digest their inventories give).
const (
	algSHA256 = "sha256"
	algSHA512 = "sha512"
)

// pool is the destination's set of files named by digest. It knows what
// it holds from one listing per shard directory, made on first use.
type pool struct {
	fsys ocfl.FS

	mu   sync.Mutex
	have map[string]map[string]bool // by algorithm: the digests present
}

func newPool(fsys ocfl.FS) *pool {
	return &pool{fsys: fsys, have: map[string]map[string]bool{}}
}

// poolPath is where the file with digest d (lower-case hex) lives.
func poolPath(alg, d string) string {
	return path.Join(poolDir, alg, d[:2], d)
}

// load lists the pool's files of alg. Cost: one listing of the
// algorithm's directory and one of each of its shards.
func (p *pool) load(ctx context.Context, alg string) (map[string]bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if h, ok := p.have[alg]; ok {
		return h, nil
	}
	h := map[string]bool{}
	shards, err := p.fsys.ReadDir(ctx, path.Join(poolDir, alg))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list the pool: %w", err)
	}
	for _, s := range shards {
		if !s.Dir {
			continue
		}
		files, err := p.fsys.ReadDir(ctx, path.Join(poolDir, alg, s.Name))
		if err != nil {
			return nil, fmt.Errorf("list the pool: %w", err)
		}
		for _, f := range files {
			if !f.Dir && validDigest(alg, f.Name) {
				h[f.Name] = true
			}
		}
	}
	p.have[alg] = h
	return h, nil
}

// has reports whether the pool holds the file with digest d.
func (p *pool) has(ctx context.Context, alg, d string) (bool, error) {
	h, err := p.load(ctx, alg)
	if err != nil {
		return false, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return h[d], nil
}

// put writes what r reads as the file with digest d, failing (and
// storing nothing) unless the bytes have that digest; it returns their
// size.
func (p *pool) put(ctx context.Context, alg, d string, r io.Reader) (int64, error) {
	if _, err := p.load(ctx, alg); err != nil {
		return 0, err
	}
	v := newVerifier(r, alg, d)
	err := p.fsys.Write(ctx, poolPath(alg, d), v, false)
	if err != nil {
		return 0, fmt.Errorf("copy %s %s: %w", alg, d, err)
	}
	if !v.checked {
		return 0, fmt.Errorf("copy %s %s: the writer stopped before the end of the bytes", alg, d)
	}
	p.mu.Lock()
	p.have[alg][d] = true
	p.mu.Unlock()
	return v.n, nil
}

// open opens the pool's file with digest d, verifying it as it is read:
// the reader fails at its end unless the bytes have that digest.
func (p *pool) open(ctx context.Context, alg, d string) (*verifier, io.Closer, error) {
	rc, err := p.fsys.Open(ctx, poolPath(alg, d))
	if err != nil {
		return nil, nil, fmt.Errorf("the backup lacks %s %s: %w", alg, d, err)
	}
	return newVerifier(rc, alg, d), rc, nil
}

// verifier hashes what it reads and fails at the end unless the digest is
// want.
type verifier struct {
	r       io.Reader
	h       hash.Hash
	alg     string
	want    string
	n       int64
	checked bool
}

// errDigest is wrapped by the error of a verifier whose bytes do not have
// their digest.
var errDigest = errors.New("digest mismatch")

func newVerifier(r io.Reader, alg, want string) *verifier {
	return &verifier{r: r, h: newHash(alg), alg: alg, want: want}
}

func (v *verifier) Read(b []byte) (int, error) {
	n, err := v.r.Read(b)
	v.h.Write(b[:n])
	v.n += int64(n)
	if err == io.EOF {
		if got := hex.EncodeToString(v.h.Sum(nil)); got != v.want {
			return n, fmt.Errorf("%w: %d bytes with %s %s, want %s", errDigest, v.n, v.alg, got, v.want)
		}
		v.checked = true
	}
	return n, err
}

func newHash(alg string) hash.Hash {
	if alg == algSHA512 {
		return sha512.New()
	}
	return sha256.New()
}

// validDigest reports whether s is a lower-case hex digest of alg.
func validDigest(alg, s string) bool {
	n := 64
	if alg == algSHA512 {
		n = 128
	}
	if len(s) != n {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
