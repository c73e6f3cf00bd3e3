package blob

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob/s3test"
)

const testBucket = "shelfmark"

// s3Env is a store on versitygw behind a counting, fault-injecting proxy.
type s3Env struct {
	srv    *s3test.Server
	proxy  *s3test.Proxy
	store  *S3Store
	pack   *Pack
	client *s3.Client // straight to the server, for inspection
	spool  string
}

func newS3Env(t *testing.T, change func(*S3Options)) *s3Env {
	t.Helper()
	srv := s3test.Start(t)
	srv.CreateBucket(t, testBucket)
	proxy := s3test.NewProxy(t, srv.Endpoint)
	pack, err := OpenPack(filepath.Join(t.TempDir(), "pack"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pack.Close() })
	spool := t.TempDir()
	opts := S3Options{Bucket: testBucket, Prefix: "blobs", Endpoint: proxy.Endpoint, AccessKey: s3test.AccessKey,
		SecretKey: s3test.SecretKey, Small: pack, SpoolDir: spool, PartSize: 5 << 20, Timeout: time.Minute}
	if change != nil {
		change(&opts)
	}
	s, err := NewS3(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	proxy.Counts()
	return &s3Env{srv: srv, proxy: proxy, store: s, pack: pack, client: s3test.Client(srv.Endpoint, s3test.AccessKey, s3test.SecretKey), spool: spool}
}

// keys lists the objects of the bucket.
func (e *s3Env) keys(t *testing.T) []string {
	t.Helper()
	out, err := e.client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(testBucket)})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	return keys
}

// clean fails the test if anything but want is stored in the bucket, if a
// multipart upload is unfinished, or if a spool file is left.
func (e *s3Env) clean(t *testing.T, want ...string) {
	t.Helper()
	keys := e.keys(t)
	if strings.Join(keys, " ") != strings.Join(want, " ") {
		t.Errorf("objects %q, want %q", keys, want)
	}
	ups, err := e.client.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: aws.String(testBucket)})
	if err != nil {
		t.Fatal(err)
	}
	if len(ups.Uploads) != 0 {
		t.Errorf("%d unfinished multipart uploads", len(ups.Uploads))
	}
	if left, _ := filepath.Glob(filepath.Join(e.spool, "*")); len(left) != 0 {
		t.Errorf("spool files left: %q", left)
	}
}

func shaHex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func readAll(t *testing.T, s shelfmark.BlobStore, sha string) []byte {
	t.Helper()
	rc, err := s.Open(context.Background(), sha)
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

func TestS3PutOpenRange(t *testing.T) {
	e := newS3Env(t, nil)
	ctx := context.Background()
	big := data(300<<10, 1)
	b, err := e.store.Put(ctx, bytes.NewReader(big), shelfmark.PutOptions{Compute: []shelfmark.DigestAlgorithm{shelfmark.MD5}})
	if err != nil {
		t.Fatal(err)
	}
	sha := shaHex(big)
	if b.Digests[shelfmark.SHA256] != sha || b.Size != int64(len(big)) || b.Digests[shelfmark.MD5] == "" {
		t.Fatalf("blob %+v", b)
	}
	c := e.proxy.Counts()
	t.Logf("Put of 300 KiB: %d requests (%s)", s3test.Total(c), s3test.String(c))
	if s3test.Total(c) != 2 || c["HEAD"] != 1 || c["PUT"] != 1 {
		t.Errorf("Put of a new large blob: %s, want one HEAD and one PUT", s3test.String(c))
	}
	e.clean(t, "blobs/"+sha[:2]+"/"+sha)

	// the same bytes again: one HEAD, no upload
	if _, err := e.store.Put(ctx, bytes.NewReader(big), shelfmark.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if c := e.proxy.Counts(); s3test.Total(c) != 1 || c["HEAD"] != 1 {
		t.Errorf("Put of stored bytes: %s, want one HEAD", s3test.String(c))
	}

	if got := readAll(t, e.store, sha); !bytes.Equal(got, big) {
		t.Fatal("read back other bytes")
	}
	// an object cut short under the key is replaced by the next upload
	key := "blobs/" + sha[:2] + "/" + sha
	if _, err := e.client.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(testBucket), Key: &key, Body: bytes.NewReader(big[:1000])}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Put(ctx, bytes.NewReader(big), shelfmark.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, e.store, sha); !bytes.Equal(got, big) {
		t.Fatal("a damaged object was kept")
	}
	// seek to the end and back costs nothing; a read from an offset is
	// one ranged GET
	e.proxy.Counts()
	rc, err := e.store.Open(ctx, sha)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if n, err := rc.Seek(0, io.SeekEnd); err != nil || n != int64(len(big)) {
		t.Fatalf("size %d %v", n, err)
	}
	if _, err := rc.Seek(100000, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	if c := e.proxy.Counts(); s3test.Total(c) != 1 || c["HEAD"] != 1 {
		t.Errorf("Open and seeks: %s, want one HEAD", s3test.String(c))
	}
	part := make([]byte, 5000)
	if _, err := io.ReadFull(rc, part); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(part, big[100000:105000]) {
		t.Fatal("ranged read returned other bytes")
	}
	if c := e.proxy.Counts(); s3test.Total(c) != 1 || c["GET"] != 1 {
		t.Errorf("a ranged read: %s, want one GET", s3test.String(c))
	}
	if _, err := rc.Seek(-10, io.SeekEnd); err != nil {
		t.Fatal(err)
	}
	tail, err := io.ReadAll(rc)
	if err != nil || !bytes.Equal(tail, big[len(big)-10:]) {
		t.Fatalf("tail %v", err)
	}

	// a digest nothing is stored under, and a bad one
	for _, bad := range []string{shaHex([]byte("never")), "../../etc/passwd", strings.ToUpper(sha)} {
		if _, err := e.store.Open(ctx, bad); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
			t.Errorf("Open(%q): %v, want not found", bad, err)
		}
	}
	// readiness
	if err := e.store.Ready(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestS3Small(t *testing.T) {
	e := newS3Env(t, nil)
	ctx := context.Background()
	var shas []string
	for i := 0; i < 50; i++ {
		in := data(4<<10, byte(i))
		b, err := e.store.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{Deferred: true})
		if err != nil {
			t.Fatal(err)
		}
		shas = append(shas, b.Digests[shelfmark.SHA256])
	}
	// a blob of exactly SmallMax bytes is small too
	edge := data(SmallMax, 99)
	if _, err := e.store.Put(ctx, bytes.NewReader(edge), shelfmark.PutOptions{Deferred: true}); err != nil {
		t.Fatal(err)
	}
	// deferred blobs are readable before Sync, from memory
	if got := readAll(t, e.store, shas[7]); !bytes.Equal(got, data(4<<10, 7)) {
		t.Fatal("a deferred blob reads back other bytes")
	}
	if page, _ := e.pack.ListSmallBlobs(ctx, "", farFuture, 100); len(page) != 0 {
		t.Fatalf("%d small blobs written before Sync", len(page))
	}
	if err := e.store.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if page, _ := e.pack.ListSmallBlobs(ctx, "", farFuture, 100); len(page) != 51 {
		t.Fatalf("%d small blobs written at Sync, want 51", len(page))
	}
	// one not deferred
	if _, err := e.store.Put(ctx, strings.NewReader("hello"), shelfmark.PutOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, e.store, shaHex([]byte("hello"))); string(got) != "hello" {
		t.Fatalf("read %q", got)
	}
	if got := readAll(t, e.store, shaHex(edge)); !bytes.Equal(got, edge) {
		t.Fatal("the SmallMax blob reads back other bytes")
	}
	if c := e.proxy.Counts(); s3test.Total(c) != 0 {
		t.Errorf("small blobs cost S3 requests: %s", s3test.String(c))
	}
	e.clean(t)
	// a small blob has no presigned URL: the server streams it
	if u, err := e.store.Presign(ctx, shas[0], shelfmark.PresignOptions{TTL: time.Minute}); err != nil || u != "" {
		t.Fatalf("presigned a small blob: %q %v", u, err)
	}
}

func TestS3Multipart(t *testing.T) {
	e := newS3Env(t, nil)
	ctx := context.Background()
	in := data(11<<20+123, 3) // three parts of 5 MiB
	b, err := e.store.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sha := shaHex(in)
	if b.Digests[shelfmark.SHA256] != sha {
		t.Fatal("wrong digest")
	}
	c := e.proxy.Counts()
	t.Logf("Put of 11 MiB: %s", s3test.String(c))
	if c["PUT ?uploadId ?partNumber"] != 3 || c["POST ?uploads"] != 1 || c["POST ?uploadId"] != 1 {
		t.Errorf("multipart upload: %s, want 3 parts", s3test.String(c))
	}
	if got := readAll(t, e.store, sha); !bytes.Equal(got, in) {
		t.Fatal("read back other bytes")
	}
	e.clean(t, "blobs/"+sha[:2]+"/"+sha)

	// a presigned URL serves the bytes without credentials
	u, err := e.store.Presign(ctx, sha, shelfmark.PresignOptions{TTL: time.Minute, ContentType: "application/x-test"})
	if err != nil || u == "" {
		t.Fatalf("presign: %q %v", u, err)
	}
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("Range", "bytes=10-19")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusPartialContent || !bytes.Equal(got, in[10:20]) {
		t.Fatalf("presigned GET: %s %q", resp.Status, got)
	}
}

func TestS3Refused(t *testing.T) {
	e := newS3Env(t, nil)
	ctx := context.Background()
	big := data(100<<10, 5)
	// an expected digest that does not match
	wrong := sha256.Sum256([]byte("other"))
	for _, in := range [][]byte{big, data(11<<20, 6), []byte("small")} {
		_, err := e.store.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{Expect: []shelfmark.Digest{{Algorithm: shelfmark.SHA256, Value: wrong[:]}}})
		if shelfmark.ErrorCode(err) != shelfmark.EDIGESTMISMATCH {
			t.Errorf("digest mismatch of %d bytes: %v", len(in), err)
		}
		// too large
		_, err = e.store.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{MaxSize: int64(len(in)) - 1})
		if shelfmark.ErrorCode(err) != shelfmark.ETOOLARGE {
			t.Errorf("too large, %d bytes: %v", len(in), err)
		}
	}
	if c := e.proxy.Counts(); s3test.Total(c) != 0 {
		t.Errorf("refused uploads sent requests: %s", s3test.String(c))
	}
	e.clean(t)
}

func TestS3Faults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault s3test.Fault
		size  int
	}{
		{"500 single", s3test.Fail, 300 << 10},
		{"500 multipart", s3test.Fail, 11 << 20},
		{"hang single", s3test.Stall, 300 << 10},
		{"hang multipart", s3test.Stall, 11 << 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newS3Env(t, func(o *S3Options) { o.Timeout = 3 * time.Second; o.MaxAttempts = 2 })
			ctx := context.Background()
			e.proxy.SetFault(tc.fault, 64<<10)
			in := data(tc.size, 9)
			start := time.Now()
			_, err := e.store.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{})
			took := time.Since(start)
			if shelfmark.ErrorCode(err) != shelfmark.EUNAVAILABLE {
				t.Fatalf("Put: %v, want unavailable", err)
			}
			want := "failed (HTTP 500"
			if tc.fault == s3test.Stall {
				want = "did not answer within 3s"
			}
			if !strings.Contains(shelfmark.ErrorMessage(err), want) {
				t.Errorf("message %q, want %q", shelfmark.ErrorMessage(err), want)
			}
			t.Logf("failed after %s: %v", took.Round(time.Millisecond), err)
			e.proxy.SetFault(s3test.Pass, 0)
			e.clean(t)
			// and it works again once S3 does
			if _, err := e.store.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{}); err != nil {
				t.Fatal(err)
			}
			sha := shaHex(in)
			e.clean(t, "blobs/"+sha[:2]+"/"+sha)
		})
	}
}

func TestS3BadConfig(t *testing.T) {
	srv := s3test.Start(t)
	srv.CreateBucket(t, testBucket)
	pack, err := OpenPack(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer pack.Close()
	ctx := context.Background()
	opts := S3Options{Bucket: testBucket, Endpoint: srv.Endpoint, AccessKey: s3test.AccessKey, SecretKey: "wrong", Small: pack, Timeout: 30 * time.Second}
	_, err = NewS3(ctx, opts)
	if shelfmark.ErrorCode(err) != shelfmark.EUNAVAILABLE || !strings.Contains(shelfmark.ErrorMessage(err), "refused this server's credentials") {
		t.Errorf("wrong secret: %v", err)
	}
	opts.SecretKey, opts.Bucket = s3test.SecretKey, "no-such-bucket"
	_, err = NewS3(ctx, opts)
	if shelfmark.ErrorCode(err) != shelfmark.EUNAVAILABLE || !strings.Contains(shelfmark.ErrorMessage(err), `has no bucket "no-such-bucket"`) {
		t.Errorf("missing bucket: %v", err)
	}
	// a store whose server goes away is not ready
	opts.Bucket = testBucket
	proxy := s3test.NewProxy(t, srv.Endpoint)
	opts.Endpoint = proxy.Endpoint
	s, err := NewS3(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	proxy.SetFault(s3test.Down, 0)
	if err := s.Ready(ctx); shelfmark.ErrorCode(err) != shelfmark.EUNAVAILABLE || !strings.Contains(shelfmark.ErrorMessage(err), "failed (HTTP 500") {
		t.Errorf("ready with the server down: %v", err)
	}
	proxy.SetFault(s3test.Pass, 0)
	if err := s.Ready(ctx); err != nil {
		t.Errorf("ready with the server back: %v", err)
	}
	opts.Endpoint = "http://127.0.0.1:1"
	if _, err := NewS3(ctx, opts); shelfmark.ErrorCode(err) != shelfmark.EUNAVAILABLE || !strings.Contains(shelfmark.ErrorMessage(err), "cannot be reached") {
		t.Errorf("no server: %v", err)
	}
}

func TestS3WalkCollect(t *testing.T) {
	e := newS3Env(t, func(o *S3Options) { o.Refresh = time.Millisecond })
	ctx := context.Background()
	put := func(in []byte) string {
		b, err := e.store.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return b.Digests[shelfmark.SHA256]
	}
	keepBig, dropBig := put(data(100<<10, 1)), put(data(100<<10, 2))
	keepSmall, dropSmall := put(data(100, 1)), put(data(100, 2))
	var walked []string
	if err := e.store.Walk(ctx, func(sha string) error { walked = append(walked, sha); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(walked) != 4 {
		t.Fatalf("walked %d blobs, want 4", len(walked))
	}
	refs := refSet{keepBig: true, keepSmall: true}
	// nothing is older than the grace period yet
	st, err := e.store.Collect(ctx, refs, CollectOptions{Grace: time.Hour})
	if err != nil || st.Examined != 0 || st.Removed != 0 {
		t.Fatalf("collect: %+v %v", st, err)
	}
	if _, err := e.store.Collect(ctx, refs, CollectOptions{Grace: time.Nanosecond}); err == nil {
		t.Fatal("a grace period below the refresh age was accepted")
	}
	// a grace period of 2 ms takes everything stored before
	time.Sleep(5 * time.Millisecond)
	st, err = e.store.Collect(ctx, refs, CollectOptions{Grace: 2 * time.Millisecond, DryRun: true})
	if err != nil || st.Orphans != 2 || st.Removed != 0 {
		t.Fatalf("dry run: %+v %v", st, err)
	}
	st, err = e.store.Collect(ctx, refs, CollectOptions{Grace: 2 * time.Millisecond})
	if err != nil || st.Examined != 4 || st.Orphans != 2 || st.Removed != 2 {
		t.Fatalf("collect: %+v %v", st, err)
	}
	for _, sha := range []string{dropBig, dropSmall} {
		if _, err := e.store.Open(ctx, sha); shelfmark.ErrorCode(err) != shelfmark.ENOTFOUND {
			t.Errorf("collected %s still opens: %v", sha, err)
		}
	}
	for _, sha := range []string{keepBig, keepSmall} {
		if _, err := e.store.Open(ctx, sha); err != nil {
			t.Errorf("referenced %s: %v", sha, err)
		}
	}
	// a crashed upload's parts are aborted once stale
	key := "blobs/ab/crashed"
	if _, err := e.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: aws.String(testBucket), Key: &key}); err != nil {
		t.Fatal(err)
	}
	if err := e.store.abortStale(ctx, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	e.clean(t, "blobs/"+keepBig[:2]+"/"+keepBig)
}

func TestParseS3URL(t *testing.T) {
	for _, tc := range []struct{ in, bucket, prefix, err string }{
		{"s3://bucket", "bucket", "", ""},
		{"s3://my.bucket-1/a/b/", "my.bucket-1", "a/b", ""},
		{"s3://bucket/", "bucket", "", ""},
		{"http://bucket/x", "", "", "must start with s3://"},
		{"s3://Bucket/x", "", "", "not a bucket name"},
		{"s3://b/x", "", "", "not a bucket name"},
		{"s3://user:pw@bucket/x", "", "", "bucket and a prefix only"},
		{"s3://bucket:9000/x", "", "", "bucket and a prefix only"},
		{"s3://bucket/a//b", "", "", "empty, . or .."},
		{"s3://bucket/a/../b", "", "", "empty, . or .."},
		{"s3://bucket/x?versionId=1", "", "", "bucket and a prefix only"},
		{"s3:bucket", "", "", "bucket and a prefix only"},
		{"bucket/prefix", "", "", "must start with s3://"},
		{"s3://a..b/x", "", "", "not a bucket name"},
		{"", "", "", "must start with s3://"},
	} {
		b, p, err := ParseS3URL(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || b != tc.bucket || p != tc.prefix {
			t.Errorf("%q: %q %q %v", tc.in, b, p, err)
		}
	}
}

func FuzzParseS3URL(f *testing.F) {
	f.Add("s3://bucket/prefix")
	f.Add("s3://a..b/%2e%2e/x")
	f.Fuzz(func(t *testing.T, in string) {
		b, p, err := ParseS3URL(in)
		if err != nil {
			return
		}
		if !bucketName.MatchString(b) || strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") || strings.Contains("/"+p+"/", "/../") {
			t.Fatalf("%q parsed to %q %q", in, b, p)
		}
	})
}

func TestPathStyleHost(t *testing.T) {
	for host, want := range map[string]bool{"127.0.0.1": true, "::1": true, "localhost": true, "minio.localhost": true,
		"s3.amazonaws.com": false, "ceph.example.org": false} {
		if pathStyleHost(host) != want || usePathStyle(false, host) != want {
			t.Errorf("%s: path style %v", host, !want)
		}
		if !usePathStyle(true, host) {
			t.Errorf("%s: no path style although forced (--s3-path-style)", host)
		}
	}
}

func TestPackSmallBlobs(t *testing.T) {
	p, err := OpenPack(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s3test.SmallBlobs(t, p, nil)
}

// The benchmarks store unique blobs of each size in S3 (versitygw on this
// machine) and in a LocalStore:
//
//	go test -run '^$' -bench 'Put(S3|Local)' -benchtime 20x ./blob/
func BenchmarkPutS3(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20, 64 << 20} {
		b.Run(sizeName(size), func(b *testing.B) {
			e := newS3EnvB(b)
			benchPut(b, e, size)
		})
	}
}

func BenchmarkPutLocal(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20, 64 << 20} {
		b.Run(sizeName(size), func(b *testing.B) {
			s, err := NewLocal(b.TempDir())
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			benchPut(b, s, size)
		})
	}
}

func sizeName(n int) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%dMiB", n>>20)
	}
	return fmt.Sprintf("%dKiB", n>>10)
}

func benchPut(b *testing.B, s shelfmark.BlobStore, size int) {
	in := data(size, 0)
	ctx := context.Background()
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		binary.LittleEndian.PutUint64(in, uint64(i)+uint64(time.Now().UnixNano()))
		if _, err := s.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// newS3EnvB is newS3Env's store for benchmarks, without the proxy.
func newS3EnvB(b *testing.B) *S3Store {
	srv := s3test.Start(b)
	srv.CreateBucket(b, testBucket)
	pack, err := OpenPack(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pack.Close() })
	s, err := NewS3(context.Background(), S3Options{Bucket: testBucket, Endpoint: srv.Endpoint, AccessKey: s3test.AccessKey,
		SecretKey: s3test.SecretKey, Small: pack, SpoolDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// TestS3DeferredConcurrent: goroutines that put deferred small blobs and
// call Sync find their own blobs written when their Sync returns, even
// when another goroutine's flush took them.
func TestS3DeferredConcurrent(t *testing.T) {
	e := newS3Env(t, nil)
	ctx := context.Background()
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		go func() {
			var shas []string
			for i := 0; i < 20; i++ {
				b, err := e.store.Put(ctx, strings.NewReader(fmt.Sprintf("goroutine %d blob %d", g, i)), shelfmark.PutOptions{Deferred: true})
				if err != nil {
					errs <- err
					return
				}
				shas = append(shas, b.Digests[shelfmark.SHA256])
			}
			if err := e.store.Sync(ctx); err != nil {
				errs <- err
				return
			}
			for _, sha := range shas {
				if _, ok, err := e.pack.SmallBlob(ctx, sha); err != nil || !ok {
					errs <- fmt.Errorf("goroutine %d: %s not written when Sync returned: %v", g, sha, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for g := 0; g < 8; g++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestS3SyncWaitsForFlush: a Sync that finds its deferred blobs taken by
// another goroutine's flush still in progress returns only once that
// flush wrote them.
func TestS3SyncWaitsForFlush(t *testing.T) {
	e := newS3Env(t, nil)
	ctx := context.Background()
	entered, release := make(chan struct{}), make(chan struct{})
	first := true
	e.store.pending.flushing = func() {
		if first {
			first = false
			close(entered)
			<-release
		}
	}
	b, err := e.store.Put(ctx, strings.NewReader("taken by another flush"), shelfmark.PutOptions{Deferred: true})
	if err != nil {
		t.Fatal(err)
	}
	aDone := make(chan error, 1)
	go func() { aDone <- e.store.Sync(ctx) }() // blocks in its flush
	<-entered
	bDone := make(chan error, 1)
	go func() { bDone <- e.store.Sync(ctx) }()
	select {
	case err := <-bDone:
		// returned while the other flush had not written: it must not
		// have, unless its blob is written
		if _, ok, _ := e.pack.SmallBlob(ctx, b.Digests[shelfmark.SHA256]); err == nil && !ok {
			t.Fatal("Sync returned before the blob it covers was written")
		}
	case <-time.After(500 * time.Millisecond):
		// still waiting, as it should
	}
	close(release)
	if err := <-aDone; err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := e.pack.SmallBlob(ctx, b.Digests[shelfmark.SHA256]); !ok {
		t.Fatal("not written")
	}
}

// BenchmarkPutDeferred4KiB stores 4 KiB files as bulk ingest does
// (Deferred, a Sync every 64): on S3 they never leave the database.
//
//	go test -run '^$' -bench 'PutDeferred4KiB' -benchtime 2000x ./blob/
func BenchmarkPutDeferred4KiB(b *testing.B) {
	for _, name := range []string{"S3", "Local"} {
		b.Run(name, func(b *testing.B) {
			var s shelfmark.BlobStore
			if name == "S3" {
				s = newS3EnvB(b)
			} else {
				ls, err := NewLocal(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				defer ls.Close()
				s = ls
			}
			in := data(4<<10, 0)
			ctx := context.Background()
			b.SetBytes(int64(len(in)))
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				binary.LittleEndian.PutUint64(in, uint64(i)+uint64(time.Now().UnixNano()))
				if _, err := s.Put(ctx, bytes.NewReader(in), shelfmark.PutOptions{Deferred: true}); err != nil {
					b.Fatal(err)
				}
				if i%64 == 63 {
					if err := s.Sync(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := s.Sync(ctx); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// TestS3StaleSpool: opening the store removes the spool files a crash
// left over an hour ago, and keeps recent ones (an upload in progress).
func TestS3StaleSpool(t *testing.T) {
	spool := t.TempDir()
	old, recent, other := filepath.Join(spool, tmpPrefix+"old"), filepath.Join(spool, tmpPrefix+"recent"), filepath.Join(spool, "other")
	for _, p := range []string{old, recent, other} {
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	then := time.Now().Add(-2 * time.Hour)
	for _, p := range []string{old, other} {
		if err := os.Chtimes(p, then, then); err != nil {
			t.Fatal(err)
		}
	}
	newS3Env(t, func(o *S3Options) { o.SpoolDir = spool })
	for p, want := range map[string]bool{old: false, recent: true, other: true} {
		if _, err := os.Stat(p); (err == nil) != want {
			t.Errorf("%s: exists %v, want %v", filepath.Base(p), err == nil, want)
		}
	}
}

// TestS3PayloadHash: the hash payloadHash signs is the one S3 checks the
// body against, so a body that changed on the way is refused.
func TestS3PayloadHash(t *testing.T) {
	e := newS3Env(t, nil)
	body := []byte("hello")
	for hash, ok := range map[string]bool{shaHex(body): true, shaHex([]byte("other")): false} {
		_, err := e.store.client.PutObject(context.Background(), &s3.PutObjectInput{Bucket: aws.String(testBucket), Key: aws.String("x"),
			Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body)))}, payloadHash(hash))
		if (err == nil) != ok {
			t.Errorf("signed hash %s: %v", hash, err)
		}
	}
}
