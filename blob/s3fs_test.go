package blob

import (
	"bytes"
	"context"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob/s3test"
	"github.com/shelfmark/shelfmark/ocfl"
)

// newS3FS starts an S3 server behind a proxy and returns an S3FS on it.
func newS3FS(t *testing.T) (*S3FS, *s3test.Proxy) {
	t.Helper()
	srv := s3test.Start(t)
	srv.CreateBucket(t, testBucket)
	proxy := s3test.NewProxy(t, srv.Endpoint)
	f, err := NewS3FS(context.Background(), S3Options{Bucket: testBucket, Prefix: "ocfl", Endpoint: proxy.Endpoint,
		AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey, SpoolDir: t.TempDir(), PartSize: 5 << 20,
		Timeout: time.Minute, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	return f, proxy
}

// version is an OCFL version of the files given by logical path.
func version(files map[string]string, msg string) ocfl.NewVersion {
	state := map[string]string{}
	content := map[string][]byte{}
	for p, c := range files {
		sum := sha512.Sum512([]byte(c))
		d := hex.EncodeToString(sum[:])
		state[p], content[d] = d, []byte(c)
	}
	return ocfl.NewVersion{State: state, Created: time.Date(2026, 11, 29, 6, 0, 0, 0, time.UTC), Message: msg,
		User: ocfl.User{Name: "Shelfmark", Address: "urn:shelfmark:repository"},
		Content: func(_ context.Context, d string) (io.ReadCloser, error) {
			c, ok := content[d]
			if !ok {
				return nil, fmt.Errorf("no content %s", d)
			}
			return io.NopCloser(bytes.NewReader(c)), nil
		}}
}

// TestS3FSStorageRoot keeps an OCFL storage root on S3: objects committed
// one by one and in a batch read back, the root validates, a large file
// goes up in parts, an exclusive write of an existing file is refused,
// and a purge removes every key of the object.
func TestS3FSStorageRoot(t *testing.T) {
	ctx := context.Background()
	f, _ := newS3FS(t)
	root, err := ocfl.InitRoot(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("0123456789abcdef", (6<<20)/16) // past the 5 MiB part size
	if _, err := root.Commit(ctx, "urn:shelfmark:a", 0, version(map[string]string{"object.json": "{}", "files/s/big.tif": big}, "v1")); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Commit(ctx, "urn:shelfmark:a", 1, version(map[string]string{"object.json": `{"v":2}`, "files/s/big.tif": big}, "v2")); err != nil {
		t.Fatal(err)
	}
	b := root.NewBatch()
	for i := range 3 {
		if err := b.Add(ctx, fmt.Sprintf("urn:shelfmark:b%d", i), 0, version(map[string]string{"object.json": fmt.Sprint(i)}, "v1")); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := b.Commit(ctx); err != nil || n != 3 {
		t.Fatalf("batch: %d, %v", n, err)
	}
	obj, err := root.Open(ctx, "urn:shelfmark:a")
	if err != nil {
		t.Fatal(err)
	}
	if obj.Head() != 2 {
		t.Fatalf("head %d, want 2", obj.Head())
	}
	rc, err := obj.Open(ctx, 1, "files/s/big.tif")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(got) != big {
		t.Fatalf("big file read back: %d bytes, %v", len(got), err)
	}
	if rep := ocfl.ValidateRoot(ctx, f); len(rep.Errors)+len(rep.Warnings) > 0 {
		t.Fatalf("the storage root on S3 is not clean:\n%s", rep)
	}
	var ids []string
	if err := root.Objects(ctx, func(id string, err error) error {
		if err != nil {
			return err
		}
		ids = append(ids, id)
		return nil
	}); err != nil || len(ids) != 4 {
		t.Fatalf("objects %v, %v; want 4", ids, err)
	}

	if err := f.Write(ctx, "ocfl_layout.json", strings.NewReader("{}"), true); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("exclusive write over an existing file: %v, want fs.ErrExist", err)
	}
	if _, err := f.ReadDir(ctx, "no/such/dir"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing directory: %v, want fs.ErrNotExist", err)
	}
	if _, err := f.Open(ctx, "no-such-file"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want fs.ErrNotExist", err)
	}
	if _, err := f.ReadDir(ctx, "../x"); err == nil {
		t.Fatal("a path leaving the root was accepted")
	}
	if err := root.Purge(ctx, "urn:shelfmark:a"); err != nil {
		t.Fatal(err)
	}
	if _, err := root.Open(ctx, "urn:shelfmark:a"); !errors.Is(err, ocfl.ErrNotFound) {
		t.Fatalf("purged object: %v, want ErrNotFound", err)
	}
	if _, err := f.ReadDir(ctx, ocfl.ObjectPath("urn:shelfmark:a")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("keys of the purged object left: %v", err)
	}
}

// TestS3FSUnreachable: with the store down a commit fails as unavailable
// and leaves the object at its last version; once the store is back the
// next commit succeeds.
func TestS3FSUnreachable(t *testing.T) {
	ctx := context.Background()
	f, proxy := newS3FS(t)
	root, err := ocfl.InitRoot(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := root.Commit(ctx, "urn:shelfmark:x", 0, version(map[string]string{"a": "1"}, "v1")); err != nil {
		t.Fatal(err)
	}
	proxy.SetFault(s3test.Down, 0)
	_, err = root.Commit(ctx, "urn:shelfmark:x", 1, version(map[string]string{"a": "2"}, "v2"))
	var se *shelfmark.Error
	if !errors.As(err, &se) || se.Code != shelfmark.EUNAVAILABLE {
		t.Fatalf("commit with the store down: %v, want EUNAVAILABLE", err)
	}
	if f.Ready(ctx) == nil {
		t.Fatal("Ready with the store down")
	}
	proxy.SetFault(s3test.Pass, 0)
	obj, err := root.Open(ctx, "urn:shelfmark:x")
	if err != nil || obj.Head() != 1 {
		t.Fatalf("after the outage: %v, %v; want head 1", obj, err)
	}
	if _, err := root.Commit(ctx, "urn:shelfmark:x", 1, version(map[string]string{"a": "2"}, "v2")); err != nil {
		t.Fatal(err)
	}
	if rep := ocfl.ValidateRoot(ctx, f); len(rep.Errors)+len(rep.Warnings) > 0 {
		t.Fatalf("the storage root on S3 is not clean:\n%s", rep)
	}
}
