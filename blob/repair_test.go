package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestReplaceBlob: a damaged blob (a file, or a row of the pack
// database) is replaced by its right bytes and reads whole again, with
// its stored mode; bytes of another digest are refused and change
// nothing; a blob stored nowhere is stored.
func TestReplaceBlob(t *testing.T) {
	ctx := context.Background()
	s, err := NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	read := func(sha string) []byte {
		t.Helper()
		rc, err := s.Open(ctx, sha)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		b, err := io.ReadAll(rc)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	big, small := bytes.Repeat([]byte("large blob "), 20000), []byte("a small blob")
	var shas []string
	for _, body := range [][]byte{big, small} {
		b, err := s.Put(ctx, bytes.NewReader(body), shelfmark.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		shas = append(shas, b.Digests[shelfmark.SHA256])
	}
	// damage the file
	p := s.path(shas[0])
	if err := os.Chmod(p, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append([]byte("X"), big[1:]...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.ReplaceBlob(ctx, shas[0], bytes.NewReader(small)); shelfmark.ErrorCode(err) != shelfmark.EDIGESTMISMATCH {
		t.Errorf("other bytes: %v", err)
	}
	if got := read(shas[0]); got[0] != 'X' {
		t.Error("a refused replacement changed the blob")
	}
	for i, body := range [][]byte{big, small} {
		if err := s.ReplaceBlob(ctx, shas[i], bytes.NewReader(body)); err != nil {
			t.Fatal(err)
		}
		if got := read(shas[i]); !bytes.Equal(got, body) {
			t.Errorf("blob %d after the replacement: %d bytes", i, len(got))
		}
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != blobPerm {
		t.Errorf("the replaced file: %v, %v", fi, err)
	}
	// stored nowhere: stored
	fresh := []byte("bytes that were lost")
	sum := sha256.Sum256(fresh)
	sha := hex.EncodeToString(sum[:])
	if err := s.ReplaceBlob(ctx, sha, bytes.NewReader(fresh)); err != nil {
		t.Fatal(err)
	}
	if got := read(sha); !bytes.Equal(got, fresh) {
		t.Errorf("a lost blob put back: %q", got)
	}
	if err := s.ReplaceBlob(ctx, "nope", bytes.NewReader(fresh)); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
		t.Errorf("a malformed digest: %v", err)
	}
}
