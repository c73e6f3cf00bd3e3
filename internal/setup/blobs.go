package setup

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
)

// BlobFlags are the content store's settings, shared by serve, worker,
// ingest and blobs gc: local files under --data (the default), or an
// S3-compatible object store.
type BlobFlags struct {
	storage                                string
	endpoint, region, accessKey, secretKey string
	redirect, pathStyle                    bool
	timeout                                time.Duration
}

// Register adds the content store flags (--storage, --s3-*) to f.
func (b *BlobFlags) Register(f *pflag.FlagSet) {
	f.StringVar(&b.storage, "storage", "", "where file bytes live: empty for local files under --data/blobs, or s3://bucket/prefix for an S3-compatible object store (objects <prefix>/<sha256[0:2]>/<sha256>; files of at most 64 KiB stay in the database)")
	f.StringVar(&b.endpoint, "s3-endpoint", "", "S3 endpoint URL (http://127.0.0.1:7070); default: AWS_ENDPOINT_URL, else AWS; path-style addressing when the host is an IP address or localhost")
	f.BoolVar(&b.pathStyle, "s3-path-style", false, "name the bucket in the request path (http://host/bucket/key) whatever the endpoint's host, as MinIO or Ceph RGW under one host name need; always on for an IP address or localhost")
	f.StringVar(&b.region, "s3-region", "", "S3 region; default: AWS_REGION, else us-east-1")
	f.StringVar(&b.accessKey, "s3-access-key", "", "S3 access key id; default: AWS_ACCESS_KEY_ID and the SDK's other sources")
	f.StringVar(&b.secretKey, "s3-secret-key", "", "S3 secret key (better given in the environment); default: AWS_SECRET_ACCESS_KEY")
	f.DurationVar(&b.timeout, "s3-timeout", blob.DefaultS3Timeout, "time limit of one request to the S3 store (one PUT, one part of a multipart upload, one HEAD); past it the upload fails with 503")
	f.BoolVar(&b.redirect, "s3-redirect", false, "answer full downloads of files stored in S3 with a redirect to a presigned URL (valid 15 minutes) instead of streaming them through the server")
}

// ContentStore is what the commands need of a content store: LocalStore
// and S3Store both are one.
type ContentStore interface {
	shelfmark.BlobStore
	Collect(ctx context.Context, refs shelfmark.BlobReferences, opts blob.CollectOptions) (blob.CollectStats, error)
	Close() error
}

// OpenBlobs opens the content store fl names: the local one under
// data/blobs, or the S3 store, whose small blobs live in the metadata
// database when it keeps them (PostgreSQL), else in the pack database
// under data/blobs.
func OpenBlobs(ctx context.Context, fl BlobFlags, data string, store shelfmark.Storage) (ContentStore, error) {
	if fl.storage == "" {
		if fl.redirect {
			return nil, errors.New("--s3-redirect needs --storage s3://…")
		}
		s, err := blob.NewLocal(filepath.Join(data, "blobs"))
		if err != nil {
			return nil, fmt.Errorf("open content store: %w", err)
		}
		return s, nil
	}
	bucket, prefix, err := blob.ParseS3URL(fl.storage)
	if err != nil {
		return nil, fmt.Errorf("--storage: %w", err)
	}
	small, ok := store.(shelfmark.SmallBlobStore)
	var pack *blob.Pack
	if !ok {
		if pack, err = blob.OpenPack(filepath.Join(data, "blobs")); err != nil {
			return nil, fmt.Errorf("open content store: %w", err)
		}
		small = pack
	}
	m := newS3Metrics()
	s, err := blob.NewS3(ctx, blob.S3Options{Bucket: bucket, Prefix: prefix, Endpoint: fl.endpoint, PathStyle: fl.pathStyle, Region: fl.region,
		AccessKey: fl.accessKey, SecretKey: fl.secretKey, Small: small, SpoolDir: filepath.Join(data, "blobs", "spool"),
		Timeout: fl.timeout, Observe: m.observe})
	if err != nil {
		if pack != nil {
			pack.Close()
		}
		return nil, fmt.Errorf("open content store %s: %w", fl.storage, err)
	}
	return &s3Content{S3Store: s, pack: pack, metrics: m}, nil
}

// s3Content is an S3 store and the pack database it may own.
type s3Content struct {
	*blob.S3Store
	pack    *blob.Pack
	metrics *s3Metrics
}

// s3Metrics count the requests to the S3 store by operation and outcome,
// with their latency.
type s3Metrics struct {
	seconds  *prometheus.HistogramVec
	requests *prometheus.CounterVec
}

func newS3Metrics() *s3Metrics {
	return &s3Metrics{
		seconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "shelfmark_s3_request_seconds",
			Help:    "Latency of requests to the S3 content store by operation.",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"op"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "shelfmark_s3_requests_total",
			Help: "Requests to the S3 content store by operation and result (ok, not_found, error)."}, []string{"op", "result"}),
	}
}

func (m *s3Metrics) observe(op string, d time.Duration, err error) {
	result := "ok"
	if blob.NotFound(err) {
		result = "not_found"
	} else if err != nil {
		result = "error"
	}
	m.seconds.WithLabelValues(op).Observe(d.Seconds())
	m.requests.WithLabelValues(op, result).Inc()
}

// RegisterBlobMetrics adds the S3 store's metrics to reg (a local store
// has none).
func RegisterBlobMetrics(blobs ContentStore, reg prometheus.Registerer) {
	if s, ok := blobs.(*s3Content); ok {
		_ = reg.Register(s.metrics.seconds)
		_ = reg.Register(s.metrics.requests)
	}
}

// Close implements ContentStore.
func (s *s3Content) Close() error {
	err := s.S3Store.Close()
	if s.pack != nil {
		err = errors.Join(err, s.pack.Close())
	}
	return err
}

// presignTTL is how long a presigned download URL of --s3-redirect stays
// valid.
const presignTTL = 15 * time.Minute

// redirectTTL is the http server's BlobRedirect: presignTTL with
// --s3-redirect, else 0 (stream).
func (b BlobFlags) redirectTTL() time.Duration {
	if b.redirect {
		return presignTTL
	}
	return 0
}
