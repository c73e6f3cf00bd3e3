package blob

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"

	"github.com/shelfmark/shelfmark"
)

// Defaults of S3Options.
const (
	// DefaultPartSize is the size of the parts of a multipart upload, and
	// the size past which an upload is multipart.
	DefaultPartSize = 16 << 20
	// DefaultS3Timeout bounds each request to the S3 store (one part of a
	// multipart upload, one HEAD, one PUT); a download's body is bounded
	// by the client reading it instead.
	DefaultS3Timeout = 5 * time.Minute
	// DefaultRefresh is the age past which a Put that finds its bytes
	// stored already uploads them again, so that their age, which the
	// collector reads, restarts; it must stay well below the collector's
	// grace period (DefaultGrace).
	DefaultRefresh = 12 * time.Hour
	// partsInFlight is how many parts of one upload are sent at once.
	partsInFlight = 4
)

// S3Options configure NewS3.
type S3Options struct {
	// Bucket and Prefix say where the blobs live: a blob with SHA-256 h
	// (lower-case hex) is the object Prefix/h[0:2]/h. Prefix may be empty.
	Bucket, Prefix string
	// Endpoint is the S3 service's URL (http://127.0.0.1:7070); empty: the
	// SDK's default (AWS_ENDPOINT_URL, or AWS itself). Requests use path
	// style when its host is an IP address or localhost.
	Endpoint string
	// PathStyle names the bucket in the request path
	// (http://host/bucket/key) whatever the endpoint's host, as MinIO and
	// Ceph RGW behind one host name need.
	PathStyle bool
	// Region defaults to AWS_REGION, else us-east-1.
	Region string
	// AccessKey and SecretKey default to the SDK's credential chain
	// (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY among others).
	AccessKey, SecretKey string
	// Small keeps the blobs of up to SmallMax bytes; required.
	Small shelfmark.SmallBlobStore
	// SpoolDir holds the bytes of a large upload while they are checksummed
	// (default: the system's temporary directory).
	SpoolDir string
	// PartSize is the size of multipart upload parts (DefaultPartSize; at
	// least 5 MiB, S3's minimum).
	PartSize int64
	// Timeout bounds each request (DefaultS3Timeout).
	Timeout time.Duration
	// MaxAttempts is how often the SDK tries a failed request (default 3).
	MaxAttempts int
	// Refresh is DefaultRefresh unless set (tests shorten it).
	Refresh time.Duration
	// Observe, when set, is called after every request to the S3 store
	// with the operation's name, its duration and its error.
	Observe func(op string, d time.Duration, err error)
}

// S3Store is a shelfmark.BlobStore over an S3-compatible object store. A
// blob of more than SmallMax bytes with SHA-256 h (lower-case hex) is the
// object <prefix>/h[0:2]/h of the bucket; a smaller one is a row of a
// shelfmark.SmallBlobStore (the metadata database), so that storing it
// costs no request to the object store.
//
// A large upload streams into a spool file in SpoolDir while its digests
// are computed; once verified (size limit, expected digests) it is sent
// under its final key with one PutObject (up to PartSize) or a multipart
// upload, and the spool file is removed. So nothing reaches the bucket
// before the bytes are known good, the object under a final key is always
// whole (S3 makes an object visible only when its PUT or multipart
// completion succeeds), and a failed upload leaves no temporary object
// behind: a failed multipart upload is aborted, and the collector aborts
// the ones a crash left.
//
// An S3Store is safe for concurrent use, also by several processes
// sharing the bucket.
type S3Store struct {
	client  *s3.Client
	presign *s3.PresignClient
	bucket  string
	prefix  string // "" or ends in "/"
	small   shelfmark.SmallBlobStore
	spool   string
	part    int64
	timeout time.Duration
	refresh time.Duration
	observe func(op string, d time.Duration, err error)
	role    string    // what error messages call it ("" : the S3 content store)
	heads   sync.Pool // of *[]byte, SmallMax+1 long

	// pending holds the deferred small blobs until Sync.
	pending *pendingSmall
}

var (
	_ shelfmark.BlobStore        = (*S3Store)(nil)
	_ shelfmark.ReadinessChecker = (*S3Store)(nil)
	_ shelfmark.BlobPresigner    = (*S3Store)(nil)
)

// bucketName is what S3 allows as a bucket name.
var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$`)

// ParseS3URL reads a --storage value s3://bucket/prefix into the bucket
// and the prefix (without slashes at its ends; possibly empty).
func ParseS3URL(raw string) (bucket, prefix string, err error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("%.200q is not a URL: %w", raw, err)
	}
	if u.Scheme != "s3" {
		return "", "", fmt.Errorf("%.200q: the storage URL must start with s3:// (s3://bucket/prefix)", raw)
	}
	if u.User != nil || u.Port() != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return "", "", fmt.Errorf("%.200q: an s3:// URL holds a bucket and a prefix only (s3://bucket/prefix); the endpoint and credentials are separate settings", raw)
	}
	if !bucketName.MatchString(u.Host) || strings.Contains(u.Host, "..") {
		return "", "", fmt.Errorf("%.200q: %.80q is not a bucket name (3 to 63 lower-case letters, digits, dots and hyphens)", raw, u.Host)
	}
	prefix = strings.Trim(u.Path, "/")
	for _, seg := range strings.Split(prefix, "/") {
		if prefix != "" && (seg == "" || seg == "." || seg == "..") {
			return "", "", fmt.Errorf("%.200q: the prefix may not have empty, . or .. segments", raw)
		}
	}
	return u.Host, prefix, nil
}

// NewS3 returns a store over the bucket and checks that the bucket answers
// (HeadBucket): wrong credentials and a missing bucket are errors here,
// not at the first upload.
func NewS3(ctx context.Context, opts S3Options) (*S3Store, error) {
	if opts.Small == nil {
		return nil, errors.New("blob: s3: no store for small blobs given")
	}
	return newS3(ctx, opts)
}

// newS3 is NewS3 without the small blob store, which S3FS does not use.
func newS3(ctx context.Context, opts S3Options) (*S3Store, error) {
	if !bucketName.MatchString(opts.Bucket) {
		return nil, fmt.Errorf("blob: s3: %.80q is not a bucket name", opts.Bucket)
	}
	if opts.PartSize == 0 {
		opts.PartSize = DefaultPartSize
	} else if opts.PartSize < 5<<20 {
		return nil, fmt.Errorf("blob: s3: part size %d is below S3's minimum of 5 MiB", opts.PartSize)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultS3Timeout
	}
	if opts.Refresh <= 0 {
		opts.Refresh = DefaultRefresh
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 3
	}
	if opts.SpoolDir == "" {
		opts.SpoolDir = os.TempDir()
	} else {
		if err := os.MkdirAll(opts.SpoolDir, dirPerm); err != nil {
			return nil, fmt.Errorf("blob: s3: spool directory: %w", err)
		}
		// a directory of its own: the spool files of uploads a crash
		// ended are removed
		if err := removeStale(opts.SpoolDir, time.Now().Add(-tmpMaxAge)); err != nil {
			return nil, err
		}
	}
	loads := []func(*config.LoadOptions) error{
		config.WithRetryMaxAttempts(opts.MaxAttempts),
		// S3-compatible servers do not all know the CRC checksums the SDK
		// sends by default; the store verifies SHA-256 itself.
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
		config.WithHTTPClient(awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
			t.ResponseHeaderTimeout = opts.Timeout
			t.MaxIdleConnsPerHost = 64
		}).WithDialerOptions(func(d *net.Dialer) { d.Timeout = 10 * time.Second })),
	}
	if opts.Region != "" {
		loads = append(loads, config.WithRegion(opts.Region))
	}
	if opts.AccessKey != "" || opts.SecretKey != "" {
		loads = append(loads, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(opts.AccessKey, opts.SecretKey, "")))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loads...)
	if err != nil {
		return nil, fmt.Errorf("blob: s3: loading the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	endpoint := opts.Endpoint
	if endpoint == "" && cfg.BaseEndpoint != nil {
		endpoint = *cfg.BaseEndpoint
	}
	pathStyle := opts.PathStyle
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("blob: s3: the endpoint %.200q is not an http:// or https:// URL", endpoint)
		}
		pathStyle = usePathStyle(opts.PathStyle, u.Hostname())
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if opts.Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.Endpoint)
		}
		o.UsePathStyle = pathStyle
	})
	prefix := strings.Trim(opts.Prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	s := &S3Store{client: client, presign: s3.NewPresignClient(client), bucket: opts.Bucket, prefix: prefix,
		small: opts.Small, spool: opts.SpoolDir, part: opts.PartSize, timeout: opts.Timeout, refresh: opts.Refresh,
		observe: opts.Observe}
	s.pending = newPendingSmall(func(ctx context.Context, blobs []shelfmark.SmallBlob) error {
		if err := s.small.PutSmallBlobs(ctx, blobs); err != nil {
			return full(fmt.Errorf("blob: s3: storing %d deferred small blobs: %w", len(blobs), err))
		}
		return nil
	})
	s.heads.New = func() any {
		b := make([]byte, SmallMax+1)
		return &b
	}
	if err := s.Ready(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// removeStale deletes the spool files in dir last written before cutoff.
func removeStale(dir string, cutoff time.Time) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("blob: s3: listing spool files: %w", err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tmpPrefix) || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil || !info.ModTime().Before(cutoff) {
			continue // gone meanwhile, or recent
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("blob: s3: removing a stale spool file: %w", err)
		}
	}
	return nil
}

// usePathStyle reports whether requests to host name the bucket in the
// path: when asked to (S3Options.PathStyle), or when the host needs it.
func usePathStyle(force bool, host string) bool { return force || pathStyleHost(host) }

// pathStyleHost reports whether requests to host must name the bucket in
// the path: an IP address or localhost has no per-bucket subdomains.
func pathStyleHost(host string) bool {
	return net.ParseIP(host) != nil || host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// Close writes the deferred small blobs. The small blob store is the
// caller's to close.
func (s *S3Store) Close() error { return s.Sync(context.Background()) }

// key is the object key of the large blob sha.
func (s *S3Store) key(sha string) string { return s.prefix + sha[0:2] + "/" + sha }

// shaOfKey returns the SHA-256 a key names, or false for any other key.
func (s *S3Store) shaOfKey(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, s.prefix)
	if !ok || len(rest) != 3+2*32 || rest[2] != '/' {
		return "", false
	}
	sha := rest[3:]
	return sha, validSHA256(sha) && rest[0:2] == sha[0:2]
}

// call runs one request with the store's timeout and reports it.
func (s *S3Store) call(ctx context.Context, op string, f func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	start := time.Now()
	err := f(ctx)
	if s.observe != nil {
		s.observe(op, time.Since(start), err)
	}
	return err
}

// Ready implements shelfmark.ReadinessChecker with one HeadBucket.
func (s *S3Store) Ready(ctx context.Context) error {
	err := s.call(ctx, "HeadBucket", func(ctx context.Context) error {
		_, err := s.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.bucket})
		return err
	})
	if err != nil {
		return s.fail(ctx, "HeadBucket", "", err)
	}
	return nil
}

// Put implements shelfmark.BlobStore. It computes SHA-256 and every
// algorithm of opts.Compute and opts.Expect while the bytes arrive, stops
// as soon as more than opts.MaxSize came (ETOOLARGE) and verifies
// opts.Expect (EDIGESTMISMATCH) before anything is stored. A blob of up to
// SmallMax bytes goes to the small blob store (Deferred: at the next Sync,
// in one statement with the others); a larger one is uploaded under its
// key unless an object is there already (HeadObject), and is durable when
// Put returns, Deferred or not. An S3 failure (unreachable, refused
// credentials, missing bucket, a 5xx answer, a request past the timeout)
// is EUNAVAILABLE, and leaves nothing under the key.
func (s *S3Store) Put(ctx context.Context, r io.Reader, opts shelfmark.PutOptions) (*shelfmark.Blob, error) {
	hp := s.heads.Get().(*[]byte)
	defer s.heads.Put(hp)
	hs, r, head, eof, err := startPut(ctx, r, opts, *hp)
	if err != nil {
		return nil, err
	}
	if eof {
		return s.putSmall(ctx, head, hs, opts)
	}
	f, err := os.CreateTemp(s.spool, tmpPrefix+"*")
	if err != nil {
		return nil, full(fmt.Errorf("blob: s3: creating a spool file: %w", err))
	}
	defer func() {
		_ = f.Close()
		_ = os.Remove(f.Name())
	}()
	size, err := spool(ctx, f, io.MultiReader(bytes.NewReader(head), r), opts.MaxSize, hs)
	if err != nil {
		return nil, full(err)
	}
	b, err := verify(size, hs, opts)
	if err != nil {
		return nil, err
	}
	sha := b.Digests[shelfmark.SHA256]
	if stored, err := s.fresh(ctx, sha, size); err != nil {
		return nil, err
	} else if stored {
		return b, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, cancelled(ctx)
	}
	if size <= s.part {
		err = s.putObject(ctx, sha, f, size)
	} else {
		err = s.putMultipart(ctx, sha, f, size)
	}
	if err != nil {
		return nil, err
	}
	return b, nil
}

// spool copies r to f and the hashes, reading at most limit+1 bytes when
// limit > 0, and returns how many bytes it copied.
func spool(ctx context.Context, f *os.File, r io.Reader, limit int64, hs []namedHash) (int64, error) {
	buf := make([]byte, copyBufSize)
	var size int64
	for {
		if ctx.Err() != nil {
			return size, cancelled(ctx)
		}
		n, err := io.ReadFull(r, buf)
		size += int64(n)
		if limit > 0 && size > limit {
			return size, tooLarge(limit)
		}
		if n > 0 {
			if _, werr := f.Write(buf[:n]); werr != nil {
				return size, fmt.Errorf("blob: s3: writing the spool file: %w", werr)
			}
			for _, h := range hs {
				h.h.Write(buf[:n])
			}
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return size, nil
		} else if err != nil {
			return size, fmt.Errorf("blob: reading the bytes: %w", err)
		}
	}
}

// fresh reports whether the object of sha is stored, size bytes long, and
// was stored less than the refresh age ago: then it need not be uploaded
// again. An object of another size (damaged, or cut short outside
// Shelfmark) is replaced by the upload.
func (s *S3Store) fresh(ctx context.Context, sha string, size int64) (bool, error) {
	out, err := s.head(ctx, s.key(sha))
	if out == nil || err != nil {
		return false, err
	}
	return out.LastModified != nil && time.Since(*out.LastModified) < s.refresh && aws.ToInt64(out.ContentLength) == size, nil
}

// putObject uploads the spooled bytes with one PutObject, which S3 checks
// against their SHA-256.
func (s *S3Store) putObject(ctx context.Context, sha string, f *os.File, size int64) error {
	return s.putObjectAt(ctx, s.key(sha), sha, f, size, false)
}

// putObjectAt uploads size bytes of f, whose SHA-256 is sha, as key with
// one PutObject; with exclusive set only if no object is under key
// (If-None-Match: *; a 412 answer is an error wrapping fs.ErrExist).
func (s *S3Store) putObjectAt(ctx context.Context, key, sha string, f *os.File, size int64, exclusive bool) error {
	sum, _ := hex.DecodeString(sha)
	in := &s3.PutObjectInput{Bucket: &s.bucket, Key: &key,
		Body: io.NewSectionReader(f, 0, size), ContentLength: aws.Int64(size),
		ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum))}
	if exclusive {
		in.IfNoneMatch = aws.String("*")
	}
	err := s.call(ctx, "PutObject", func(ctx context.Context) error {
		_, err := s.client.PutObject(ctx, in, payloadHash(sha))
		return err
	})
	if exclusive && preconditionFailed(err) {
		return fmt.Errorf("blob: s3: %s: %w", key, fs.ErrExist)
	}
	if err != nil {
		return s.fail(ctx, "PutObject", key, err)
	}
	return nil
}

// payloadHash signs a request with the SHA-256 of its body already
// known, so the SDK does not read the body once more to compute it (and
// S3 checks the body against the signed hash).
func payloadHash(sha string) func(*s3.Options) {
	return func(o *s3.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Finalize.Add(middleware.FinalizeMiddlewareFunc("ShelfmarkPayloadHash",
				func(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
					return next.HandleFinalize(v4.SetPayloadHash(ctx, sha), in)
				}), middleware.Before)
		})
	}
}

// putMultipart uploads the spooled bytes in parts of s.part bytes, a few at
// once, and aborts the upload on any failure, so that nothing of it stays.
func (s *S3Store) putMultipart(ctx context.Context, sha string, f *os.File, size int64) error {
	return s.putMultipartAt(ctx, s.key(sha), f, size)
}

// putMultipartAt is putMultipart under any key.
func (s *S3Store) putMultipartAt(ctx context.Context, key string, f *os.File, size int64) error {
	var id string
	err := s.call(ctx, "CreateMultipartUpload", func(ctx context.Context) error {
		out, err := s.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &s.bucket, Key: &key})
		if err == nil {
			id = aws.ToString(out.UploadId)
		}
		return err
	})
	if err != nil {
		return s.fail(ctx, "CreateMultipartUpload", key, err)
	}
	n := int((size + s.part - 1) / s.part)
	parts := make([]types.CompletedPart, n)
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, partsInFlight)
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := 0; i < n; i++ {
		off := int64(i) * s.part
		length := min(s.part, size-off)
		num := int32(i + 1)
		select {
		case sem <- struct{}{}:
		case <-pctx.Done():
		}
		if pctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			err := s.call(pctx, "UploadPart", func(ctx context.Context) error {
				out, err := s.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: &s.bucket, Key: &key, UploadId: &id,
					PartNumber: aws.Int32(num), Body: io.NewSectionReader(f, off, length), ContentLength: aws.Int64(length)})
				if err == nil {
					parts[num-1] = types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(num)}
				}
				return err
			})
			if err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		first = ctx.Err()
	}
	if first == nil {
		sort.Slice(parts, func(i, j int) bool { return *parts[i].PartNumber < *parts[j].PartNumber })
		first = s.call(ctx, "CompleteMultipartUpload", func(ctx context.Context) error {
			_, err := s.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &s.bucket, Key: &key,
				UploadId: &id, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
			return err
		})
		if first == nil {
			return nil
		}
	}
	// Abort even when ctx ended: an unfinished upload keeps its parts
	// (and costs storage) until aborted.
	actx, acancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
	defer acancel()
	abortErr := s.call(actx, "AbortMultipartUpload", func(ctx context.Context) error {
		_, err := s.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &s.bucket, Key: &key, UploadId: &id})
		return err
	})
	err = s.fail(ctx, "multipart upload", key, first)
	if abortErr != nil && !notFoundErr(abortErr) {
		err = fmt.Errorf("%w (aborting the upload failed too, the collector will: %v)", err, abortErr)
	}
	return err
}

// putSmall stores a blob of at most SmallMax bytes, read whole, in the
// small blob store.
func (s *S3Store) putSmall(ctx context.Context, data []byte, hs []namedHash, opts shelfmark.PutOptions) (*shelfmark.Blob, error) {
	b, err := checkSmall(ctx, data, hs, opts)
	if err != nil {
		return nil, err
	}
	sha := b.Digests[shelfmark.SHA256]
	if !opts.Deferred {
		if err := s.small.PutSmallBlobs(ctx, []shelfmark.SmallBlob{{SHA256: sha, Data: data}}); err != nil {
			return nil, full(fmt.Errorf("blob: s3: storing a small blob: %w", err))
		}
		return b, nil
	}
	if err := s.pending.add(ctx, sha, data); err != nil {
		return nil, err
	}
	return b, nil
}

// Sync implements shelfmark.BlobStore: it writes the deferred small blobs
// with one statement. Large blobs are durable when their Put returns.
func (s *S3Store) Sync(ctx context.Context) error { return s.pending.flush(ctx) }

// Open implements shelfmark.BlobStore. A small blob is read whole from
// the small blob store; a large one costs a HeadObject (for its size) and
// then, as it is read, a ranged GetObject from the read offset: seeking
// downloads nothing, and a seek away from where the download is closes it.
// The download ends with ctx (a client that went away).
func (s *S3Store) Open(ctx context.Context, sha256 string) (io.ReadSeekCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, cancelled(ctx)
	}
	if !validSHA256(sha256) {
		return nil, notFound(sha256)
	}
	if data, ok := s.pending.get(sha256); ok {
		return memBlob{bytes.NewReader(data)}, nil
	}
	data, ok, err := s.small.SmallBlob(ctx, sha256)
	if err != nil {
		return nil, fmt.Errorf("blob: s3: reading a small blob: %w", err)
	} else if ok {
		return memBlob{bytes.NewReader(data)}, nil
	}
	key := s.key(sha256)
	out, err := s.head(ctx, key)
	if err != nil {
		return nil, err
	} else if out == nil {
		return nil, notFound(sha256)
	}
	return &s3Reader{s: s, ctx: ctx, key: key, size: aws.ToInt64(out.ContentLength)}, nil
}

// s3Reader reads an object with ranged GETs from its offset.
type s3Reader struct {
	s    *S3Store
	ctx  context.Context
	key  string
	size int64
	off  int64
	body io.ReadCloser
}

// Read implements io.Reader.
func (r *s3Reader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	if r.body == nil {
		rng := fmt.Sprintf("bytes=%d-", r.off)
		start := time.Now()
		out, err := r.s.client.GetObject(r.ctx, &s3.GetObjectInput{Bucket: &r.s.bucket, Key: &r.key, Range: &rng})
		if r.s.observe != nil {
			r.s.observe("GetObject", time.Since(start), err)
		}
		if err != nil {
			return 0, r.s.fail(r.ctx, "GetObject", r.key, err)
		}
		r.body = out.Body
	}
	n, err := r.body.Read(p)
	r.off += int64(n)
	if err == io.EOF && r.off < r.size {
		err = fmt.Errorf("blob: s3: GetObject %s ended at byte %d of %d: %w", r.key, r.off, r.size, io.ErrUnexpectedEOF)
	}
	return n, err
}

// Seek implements io.Seeker without a request.
func (r *s3Reader) Seek(offset int64, whence int) (int64, error) {
	var abs int64
	switch whence {
	case io.SeekStart:
		abs = offset
	case io.SeekCurrent:
		abs = r.off + offset
	case io.SeekEnd:
		abs = r.size + offset
	default:
		return 0, errors.New("blob: s3: bad whence")
	}
	if abs < 0 {
		return 0, errors.New("blob: s3: negative position")
	}
	if abs != r.off && r.body != nil {
		_ = r.body.Close()
		r.body = nil
	}
	r.off = abs
	return abs, nil
}

// Close implements io.Closer.
func (r *s3Reader) Close() error {
	if r.body != nil {
		err := r.body.Close()
		r.body = nil
		return err
	}
	return nil
}

// Presign implements shelfmark.BlobPresigner: a presigned GetObject URL
// for a large blob, "" for a small one.
func (s *S3Store) Presign(ctx context.Context, sha256 string, opts shelfmark.PresignOptions) (string, error) {
	if !validSHA256(sha256) {
		return "", notFound(sha256)
	}
	if _, ok, err := s.small.SmallBlob(ctx, sha256); err != nil {
		return "", fmt.Errorf("blob: s3: reading a small blob: %w", err)
	} else if ok {
		return "", nil
	}
	if _, ok := s.pending.get(sha256); ok {
		return "", nil
	}
	key := s.key(sha256)
	in := &s3.GetObjectInput{Bucket: &s.bucket, Key: &key}
	if opts.ContentType != "" {
		in.ResponseContentType = aws.String(opts.ContentType)
	}
	if opts.ContentDisposition != "" {
		in.ResponseContentDisposition = aws.String(opts.ContentDisposition)
	}
	req, err := s.presign.PresignGetObject(ctx, in, s3.WithPresignExpires(opts.TTL))
	if err != nil {
		return "", fmt.Errorf("blob: s3: presigning %s: %w", key, err)
	}
	return req.URL, nil
}

// NotFound reports whether err, an error of a request to S3 (as
// S3Options.Observe receives it), says the object or the upload does not
// exist: a normal answer to the HeadObject before an upload.
func NotFound(err error) bool { return notFoundErr(err) }

// notFoundErr reports whether err says the object (or the upload) does
// not exist.
func notFoundErr(err error) bool {
	if err == nil {
		return false
	}
	var nk *types.NoSuchKey
	var nf *types.NotFound
	var nu *types.NoSuchUpload
	if errors.As(err, &nk) || errors.As(err, &nf) || errors.As(err, &nu) {
		return true
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound {
		var ae smithy.APIError
		return !errors.As(err, &ae) || ae.ErrorCode() != "NoSuchBucket"
	}
	return false
}

// what names the store in error messages.
func (s *S3Store) what() string {
	if s.role != "" {
		return s.role
	}
	return "S3 content store"
}

// preconditionFailed reports whether err is S3's 412 answer to a
// conditional request.
func preconditionFailed(err error) bool {
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == http.StatusPreconditionFailed
}

// fail turns an error of an S3 request into one a client can act on:
// EUNAVAILABLE, whose message says whether the store refused the
// credentials, lacks the bucket, failed, or did not answer in time; the
// SDK's error stays in the chain for the logs. The cancellation of ctx by
// the caller stays a cancellation.
func (s *S3Store) fail(ctx context.Context, op, key string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("blob: s3: %s %s: %w", op, key, context.Cause(ctx))
	}
	var msg string
	status := 0
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	code := ""
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	switch {
	case code == "NoSuchBucket" || (op == "HeadBucket" && status == http.StatusNotFound):
		msg = fmt.Sprintf("The %s has no bucket %q.", s.what(), s.bucket)
	case code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || code == "AccessDenied" ||
		code == "InvalidToken" || code == "ExpiredToken" || status == http.StatusForbidden || status == http.StatusUnauthorized:
		msg = fmt.Sprintf("The %s refused this server's credentials for bucket %q (%s).", s.what(), s.bucket, firstNonEmpty(code, http.StatusText(status)))
	case errors.Is(err, context.DeadlineExceeded):
		msg = fmt.Sprintf("The %s did not answer within %s.", s.what(), s.timeout)
	case status >= 500:
		msg = fmt.Sprintf("The %s failed (HTTP %d %s).", s.what(), status, code)
	case status != 0:
		msg = fmt.Sprintf("The %s rejected a request (HTTP %d %s).", s.what(), status, code)
	default:
		msg = fmt.Sprintf("The %s cannot be reached.", s.what())
	}
	return fmt.Errorf("blob: s3: %s %s: %w (%w)", op, key, &shelfmark.Error{Code: shelfmark.EUNAVAILABLE, Message: msg}, err)
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// head asks for the object under key (HeadObject): nil without an error
// when there is none.
func (s *S3Store) head(ctx context.Context, key string) (*s3.HeadObjectOutput, error) {
	var out *s3.HeadObjectOutput
	err := s.call(ctx, "HeadObject", func(ctx context.Context) (err error) {
		out, err = s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key})
		return err
	})
	if notFoundErr(err) {
		return nil, nil
	} else if err != nil {
		return nil, s.fail(ctx, "HeadObject", key, err)
	}
	return out, nil
}
