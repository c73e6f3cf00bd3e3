package blob

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

func newStore(t *testing.T) (*LocalStore, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "blobs")
	s, err := NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, dir
}

// files returns the blobs stored under dir: the regular files anywhere
// below it but the pack database, and "small.db:<sha-256>" for each blob the
// pack database holds committed.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && !strings.HasPrefix(d.Name(), smallFile) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, smallFile)); err != nil {
		return out
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, smallFile)+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT hex(sha256) FROM blobs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			t.Fatal(err)
		}
		out = append(out, smallFile+":"+strings.ToLower(h))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func assertEmpty(t *testing.T, dir string) {
	t.Helper()
	if fs := files(t, dir); len(fs) != 0 {
		t.Errorf("files left in the store: %v", fs)
	}
}

func assertCode(t *testing.T, err error, code string) *shelfmark.Error {
	t.Helper()
	var e *shelfmark.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Fatalf("error = %v, want code %s", err, code)
	}
	return e
}

func data(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

func hexSum(alg shelfmark.DigestAlgorithm, b []byte) []byte {
	switch alg {
	case shelfmark.SHA256:
		s := sha256.Sum256(b)
		return s[:]
	case shelfmark.SHA512:
		s := sha512.Sum512(b)
		return s[:]
	case shelfmark.MD5:
		s := md5.Sum(b)
		return s[:]
	case shelfmark.SHA1:
		s := sha1.Sum(b)
		return s[:]
	}
	panic(alg)
}

var allAlgs = []shelfmark.DigestAlgorithm{shelfmark.SHA256, shelfmark.SHA512, shelfmark.MD5, shelfmark.SHA1}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, dir := newStore(t)
	for _, n := range []int{0, 1, SmallMax - 1, SmallMax, SmallMax + 1, copyBufSize - 1, copyBufSize, copyBufSize + 1, 3*copyBufSize + 17} {
		in := data(n, byte(n))
		b, err := s.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{})
		if err != nil {
			t.Fatalf("Put %d bytes: %v", n, err)
		}
		want := hex.EncodeToString(hexSum(shelfmark.SHA256, in))
		if b.Size != int64(n) || b.Digests[shelfmark.SHA256] != want || len(b.Digests) != 1 {
			t.Fatalf("Put %d bytes = %+v, want size %d sha-256 %s only", n, b, n, want)
		}
		p := filepath.Join(dir, want[0:2], want[2:4], want)
		if n <= SmallMax {
			// small: a row of the pack database, no file
			if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("a %d-byte blob has a file: %v", n, err)
			}
			if fs := files(t, dir); !slices.Contains(fs, smallFile+":"+want) {
				t.Fatalf("a %d-byte blob is not in the pack database: %v", n, fs)
			}
		} else if info, err := os.Stat(p); err != nil || info.Mode().Perm() != blobPerm {
			t.Fatalf("stat %s = %v, %v", p, info, err)
		}
		f, err := s.Open(ctx, want)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(f)
		if err != nil || !bytes.Equal(got, in) {
			t.Fatalf("read back %d bytes, %v; want %d bytes", len(got), err, n)
		}
		// Seeking works, for Range requests.
		if n > 10 {
			if _, err := f.Seek(5, io.SeekStart); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 5)
			if _, err := io.ReadFull(f, buf); err != nil || !bytes.Equal(buf, in[5:10]) {
				t.Fatalf("after seek read %x, %v; want %x", buf, err, in[5:10])
			}
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if tmp := files(t, filepath.Join(dir, "tmp")); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
}

func TestComputeAll(t *testing.T) {
	s, _ := newStore(t)
	in := data(100000, 3)
	b, err := s.Put(context.Background(), bytes.NewReader(in), shelfmark.PutOptions{Compute: allAlgs})
	if err != nil {
		t.Fatal(err)
	}
	for _, alg := range allAlgs {
		if want := hex.EncodeToString(hexSum(alg, in)); b.Digests[alg] != want {
			t.Errorf("%s = %s, want %s", alg, b.Digests[alg], want)
		}
	}
}

func TestDedupe(t *testing.T) {
	ctx := context.Background()
	s, dir := newStore(t)
	in := data(500000, 9)
	b1, err := s.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b2, err := s.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{Compute: []shelfmark.DigestAlgorithm{shelfmark.MD5}})
	if err != nil {
		t.Fatal(err)
	}
	if b1.Digests[shelfmark.SHA256] != b2.Digests[shelfmark.SHA256] || b2.Digests[shelfmark.MD5] == "" {
		t.Fatalf("digests %v and %v", b1.Digests, b2.Digests)
	}
	if fs := files(t, dir); len(fs) != 1 {
		t.Fatalf("files on disk after two identical puts: %v", fs)
	}
}

func TestExpectedDigests(t *testing.T) {
	ctx := context.Background()
	in := []byte(`{"hello": "world"}`)
	for _, alg := range allAlgs {
		t.Run(string(alg)+"/match", func(t *testing.T) {
			s, dir := newStore(t)
			sum := hexSum(alg, in)
			b, err := s.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{
				Expect: []shelfmark.Digest{{Algorithm: alg, Value: sum}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if b.Digests[alg] != hex.EncodeToString(sum) || b.Digests[shelfmark.SHA256] == "" {
				t.Fatalf("digests = %v", b.Digests)
			}
			if fs := files(t, dir); len(fs) != 1 {
				t.Fatalf("files = %v", fs)
			}
		})
		t.Run(string(alg)+"/mismatch", func(t *testing.T) {
			s, dir := newStore(t)
			good := hexSum(alg, in)
			bad := bytes.Clone(good)
			bad[len(bad)-1] ^= 1
			_, err := s.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{
				Expect: []shelfmark.Digest{{Algorithm: alg, Value: bad}},
			})
			e := assertCode(t, err, shelfmark.EDIGESTMISMATCH)
			want := map[string]any{
				"algorithm":       string(alg),
				"expected":        hex.EncodeToString(bad),
				"computed":        hex.EncodeToString(good),
				"expected_base64": base64.StdEncoding.EncodeToString(bad),
				"computed_base64": base64.StdEncoding.EncodeToString(good),
			}
			for k, v := range want {
				if e.Details[k] != v {
					t.Errorf("Details[%s] = %v, want %v", k, e.Details[k], v)
				}
			}
			for _, s := range []string{string(alg), hex.EncodeToString(bad), hex.EncodeToString(good)} {
				if !bytes.Contains([]byte(e.Message), []byte(s)) {
					t.Errorf("message %q does not name %s", e.Message, s)
				}
			}
			assertEmpty(t, dir)
		})
	}
	t.Run("one of several wrong", func(t *testing.T) {
		s, dir := newStore(t)
		bad := hexSum(shelfmark.MD5, in)
		bad[0] ^= 0x80
		_, err := s.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{Expect: []shelfmark.Digest{
			{Algorithm: shelfmark.SHA256, Value: hexSum(shelfmark.SHA256, in)},
			{Algorithm: shelfmark.MD5, Value: bad},
		}})
		if e := assertCode(t, err, shelfmark.EDIGESTMISMATCH); e.Details["algorithm"] != "md5" {
			t.Errorf("Details = %v", e.Details)
		}
		assertEmpty(t, dir)
	})
	t.Run("wrong length", func(t *testing.T) {
		s, dir := newStore(t)
		_, err := s.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{Expect: []shelfmark.Digest{
			{Algorithm: shelfmark.SHA256, Value: hexSum(shelfmark.SHA1, in)},
		}})
		assertCode(t, err, shelfmark.EINVALID)
		assertEmpty(t, dir)
	})
	t.Run("unknown algorithm", func(t *testing.T) {
		s, dir := newStore(t)
		_, err := s.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{Compute: []shelfmark.DigestAlgorithm{"crc32c"}})
		assertCode(t, err, shelfmark.EINVALID)
		assertEmpty(t, dir)
	})
}

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// endless yields the byte 'x' forever.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

func TestMaxSize(t *testing.T) {
	ctx := context.Background()
	for _, limit := range []int64{1, 1000, copyBufSize, copyBufSize + 5} {
		s, dir := newStore(t)
		in := data(int(limit), 1)
		b, err := s.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{MaxSize: limit})
		if err != nil || b.Size != limit {
			t.Fatalf("Put of exactly %d bytes: %+v, %v", limit, b, err)
		}
		_, err = s.Put(ctx, bytes.NewReader(data(int(limit)+1, 2)), shelfmark.PutOptions{MaxSize: limit})
		e := assertCode(t, err, shelfmark.ETOOLARGE)
		if e.Details["limit"] != limit {
			t.Errorf("Details = %v", e.Details)
		}
		// An endless body is read no further than one byte past the limit.
		cr := &countingReader{r: endless{}}
		_, err = s.Put(ctx, cr, shelfmark.PutOptions{MaxSize: limit})
		assertCode(t, err, shelfmark.ETOOLARGE)
		if cr.n > limit+1 {
			t.Errorf("limit %d: read %d bytes", limit, cr.n)
		}
		if fs := files(t, dir); len(fs) != 1 {
			t.Errorf("limit %d: files = %v, want only the first blob", limit, fs)
		}
	}
}

// failing yields n bytes and then an error.
type failing struct{ n int }

var errBroken = errors.New("connection reset")

func (f *failing) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, errBroken
	}
	m := min(len(p), f.n, 1000)
	for i := range m {
		p[i] = 'y'
	}
	f.n -= m
	return m, nil
}

func TestFailingReader(t *testing.T) {
	s, dir := newStore(t)
	_, err := s.Put(context.Background(), &failing{n: 3 * copyBufSize / 2}, shelfmark.PutOptions{})
	if !errors.Is(err, errBroken) {
		t.Fatalf("error = %v, want the reader's", err)
	}
	assertEmpty(t, dir)
}

// cancelling cancels its context after n bytes, and keeps yielding bytes.
type cancelling struct {
	n      int
	cancel context.CancelFunc
}

func (c *cancelling) Read(p []byte) (int, error) {
	if c.n <= 0 {
		c.cancel()
	}
	m := min(len(p), 4096)
	c.n -= m
	return m, nil
}

func TestCancel(t *testing.T) {
	s, dir := newStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	_, err := s.Put(ctx, &cancelling{n: 2 * copyBufSize, cancel: cancel}, shelfmark.PutOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	assertEmpty(t, dir)

	// Already cancelled.
	_, err = s.Put(ctx, bytes.NewReader([]byte("abc")), shelfmark.PutOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	assertEmpty(t, dir)
}

func TestOpenInvalid(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t)
	b, err := s.Put(ctx, bytes.NewReader([]byte("hello")), shelfmark.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sha := b.Digests[shelfmark.SHA256]
	upper := []byte(sha)
	for i, c := range upper {
		if c >= 'a' && c <= 'f' {
			upper[i] = c - 'a' + 'A'
		}
	}
	for _, v := range []string{
		"../../etc/passwd",
		"../" + sha[3:],
		string(upper),
		sha[:63],
		sha + "0",
		"",
		sha[:62] + "/x",
		sha[:63] + "g",
		hex.EncodeToString(hexSum(shelfmark.SHA256, []byte("absent"))),
	} {
		f, err := s.Open(ctx, v)
		if f != nil {
			f.Close()
		}
		assertCode(t, err, shelfmark.ENOTFOUND)
	}
}

func TestConcurrentIdenticalPuts(t *testing.T) {
	s, dir := newStore(t)
	in := data(2*copyBufSize+100, 5)
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	shas := make([]string, n)
	for i := range n {
		wg.Go(func() {
			b, err := s.Put(context.Background(), bytes.NewReader(in), shelfmark.PutOptions{})
			errs[i] = err
			if b != nil {
				shas[i] = b.Digests[shelfmark.SHA256]
			}
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || shas[i] != shas[0] {
			t.Errorf("put %d: %s, %v", i, shas[i], errs[i])
		}
	}
	if fs := files(t, dir); len(fs) != 1 {
		t.Fatalf("files = %v", fs)
	}
	f, err := s.Open(context.Background(), shas[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, _ := io.ReadAll(f); !bytes.Equal(got, in) {
		t.Fatal("stored bytes differ")
	}
}

func TestNewLocalRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	if _, err := NewLocal(dir); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "tmp", tmpPrefix+"stale")
	fresh := filepath.Join(dir, "tmp", tmpPrefix+"fresh")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := NewLocal(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale temporary file still there: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("fresh temporary file removed: %v", err)
	}
}
