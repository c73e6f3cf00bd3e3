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
	"github.com/shelfmark/shelfmark/fixity"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
)

// FixityFlags are the settings of the scheduled fixity checks.
type FixityFlags struct {
	Cycle time.Duration
	Rate  int64
}

// Register adds the fixity flags to f.
func (x *FixityFlags) Register(f *pflag.FlagSet) {
	f.DurationVar(&x.Cycle, "fixity-cycle", fixity.DefaultCycle, "time between the starts of two fixity passes over every original in the content store and the preservation copy; 0: no scheduled passes")
	f.Int64Var(&x.Rate, "fixity-rate", fixity.DefaultRate, "bytes a second a fixity pass reads at most (0: the default); a negative value: as fast as the disks go")
}

// options are the checker's options of x.
func (x *FixityFlags) options(log *slog.Logger) fixity.Options {
	return fixity.Options{Cycle: x.Cycle, Rate: x.Rate, Logger: log}
}

// startFixity adds the elected loop "fixity" (unless --fixity-cycle is 0)
// and the fixity metrics, and gives the server the object versions of the
// preservation copy (keeper; nil when the copy is off) for the resources'
// events.
func (x *FixityFlags) start(store shelfmark.Storage, blobs shelfmark.BlobStore, keeper *preserve.Preserver, ids *shelfmark.IDCodec,
	loops map[string]runner, reg prometheus.Registerer, log *slog.Logger) error {
	var root *ocfl.Root
	if keeper != nil {
		root = keeper.Root()
	}
	c, err := fixity.New(store, blobs, root, ids, x.options(log))
	if err != nil {
		log.Warn("no fixity checks", "err", err)
		return nil
	}
	if x.Cycle > 0 {
		loops["fixity"] = c
	}
	return registerFixityMetrics(store.(shelfmark.PreservationEvents), c, reg)
}

// registerFixityMetrics reports in /metrics the files fixity found
// damaged (read from the database at each scrape, the same on every
// server) and the bytes this process's checks read.
func registerFixityMetrics(pe shelfmark.PreservationEvents, c *fixity.Checker, reg prometheus.Registerer) error {
	for _, m := range []prometheus.Collector{
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "shelfmark_fixity_damaged_files",
			Help: "Stored files (originals, or an object's own files in the preservation copy) of which fixity checks found no whole copy (-1 when the database does not answer)."}, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, err := pe.CountDamaged(ctx)
			if err != nil {
				return -1
			}
			return float64(n)
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "shelfmark_fixity_bytes_total",
			Help: "Bytes this process's fixity checks read."}, func() float64 { return float64(c.Stats().Bytes) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "shelfmark_fixity_failures_total",
			Help: "Fixity passes that stopped on an error in this process (each resumes)."}, func() float64 { return float64(c.Stats().Failures) }),
	} {
		if err := reg.Register(m); err != nil {
			return fmt.Errorf("register fixity metrics: %w", err)
		}
	}
	return nil
}

// OpenFixity opens a checker over store's originals in blobs and the
// preservation copy at dir (as --preservation names it: "" is
// DATA/ocfl, "off" none), for the fixity command.
func OpenFixity(ctx context.Context, store shelfmark.Storage, blobs shelfmark.BlobStore, data, dir string, opts fixity.Options) (*fixity.Checker, error) {
	var root *ocfl.Root
	switch {
	case dir == "off":
	case strings.Contains(dir, "://"):
		return nil, fmt.Errorf("--preservation %s: only a directory is supported yet", dir)
	default:
		if dir == "" {
			dir = filepath.Join(data, "ocfl")
		}
		fsys, err := ocfl.NewDirFS(dir)
		if err != nil {
			return nil, fmt.Errorf("--preservation %s: %w", dir, err)
		}
		if root, err = ocfl.OpenRoot(ctx, fsys); err != nil {
			return nil, fmt.Errorf("--preservation %s: %w", dir, err)
		}
	}
	ids, err := shelfmark.LoadIDCodec(ctx, store)
	if err != nil {
		return nil, err
	}
	return fixity.New(store, blobs, root, ids, opts)
}
