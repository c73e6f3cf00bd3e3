package setup

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
)

// preservationFlags are the settings of the preservation copy.
type preservationFlags struct {
	root     string
	window   time.Duration
	parallel int
}

func (p *preservationFlags) register(f *pflag.FlagSet) {
	f.StringVar(&p.root, "preservation", "", `the OCFL 1.1 storage root that keeps a version of every work and collection after each change: a directory (default: DATA/ocfl) or s3://bucket/prefix (reached with the --s3-* settings); "off": no preservation copy`)
	f.DurationVar(&p.window, "preservation-window", preserve.DefaultWindow, "how old a change must be before it is preserved: the changes of one window make one version of an object")
	f.IntVar(&p.parallel, "preservation-parallel", 0, fmt.Sprintf("objects written at once (0: %d to a directory, where more take CPU from requests and ingest; %d to S3, whose round trips overlap)", preserve.DefaultLocalParallel, preserve.DefaultParallel))
}

// preserver returns the preservation loop of a server, or nil when the
// copy is off. The storage root is made on first use: a directory, or an
// s3://bucket/prefix reached with the content store's --s3-* settings.
func (p *preservationFlags) preserver(ctx context.Context, data string, content BlobFlags, store shelfmark.Storage, blobs shelfmark.BlobStore, ids *shelfmark.IDCodec, log *slog.Logger) (*preserve.Preserver, error) {
	fsys, err := p.fs(ctx, data, content)
	if fsys == nil || err != nil {
		return nil, err
	}
	root, err := ocfl.InitRoot(ctx, fsys) // made on first use, opened after
	if err != nil {
		return nil, fmt.Errorf("--preservation %s: %w", p.root, err)
	}
	return preserve.New(store, blobs, root, ids, preserve.Options{Window: p.window, Parallel: p.parallel, Logger: log}), nil
}

// fs opens the FS of the storage root (nil when the copy is off).
func (p *preservationFlags) fs(ctx context.Context, data string, content BlobFlags) (ocfl.FS, error) {
	dir := p.root
	switch {
	case dir == "off":
		return nil, nil
	case dir == "":
		dir = filepath.Join(data, "ocfl")
	case strings.HasPrefix(dir, "s3://"):
		bucket, prefix, err := blob.ParseS3URL(dir)
		if err != nil {
			return nil, fmt.Errorf("--preservation: %w", err)
		}
		fsys, err := blob.NewS3FS(ctx, blob.S3Options{Bucket: bucket, Prefix: prefix, Endpoint: content.endpoint,
			PathStyle: content.pathStyle, Region: content.region, AccessKey: content.accessKey, SecretKey: content.secretKey,
			SpoolDir: filepath.Join(data, "ocfl-spool"), Timeout: content.timeout})
		if err != nil {
			return nil, fmt.Errorf("--preservation %s: %w", dir, err)
		}
		return fsys, nil
	case strings.Contains(dir, "://"):
		return nil, fmt.Errorf("--preservation %s: a directory or s3://bucket/prefix", dir)
	}
	fsys, err := ocfl.NewDirFS(dir)
	if err != nil {
		return nil, fmt.Errorf("--preservation %s: %w", dir, err)
	}
	return fsys, nil
}

// registerPreservationMetrics reports the preservation copy in /metrics:
// the lag (read from the database at each scrape, the same on every
// server) and this process's versions and failed catch-ups.
func registerPreservationMetrics(p *preserve.Preserver, reg prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "shelfmark_preservation_lag_seconds",
			Help: "How old the oldest change not yet in the preservation copy is, in seconds (0 when none waits; -1 when the database does not answer)."}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			lag, err := p.Lag(ctx)
			if err != nil {
				return -1
			}
			return lag.Seconds()
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "shelfmark_preservation_versions_total",
			Help: "Object versions this process wrote to the preservation copy."}, func() float64 { return float64(p.Stats().Versions) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "shelfmark_preservation_failures_total",
			Help: "Catch-ups of the preservation copy that failed in this process (each is retried)."}, func() float64 { return float64(p.Stats().Failures) }),
	} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register preservation metrics: %w", err)
		}
	}
	return nil
}
