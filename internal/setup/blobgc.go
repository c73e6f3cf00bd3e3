package setup

import (
	"context"
	"log/slog"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
)

// blobCollector collects the content store's unreferenced blobs at every
// interval while serve runs (the first time one interval after start),
// forgetting the upload records past the grace period first.
type blobCollector struct {
	blobs ContentStore
	store shelfmark.Storage
	refs  shelfmark.BlobReferences
	every time.Duration
	log   *slog.Logger
}

// Run implements runner.
func (c blobCollector) Run(ctx context.Context) error {
	t := time.NewTicker(c.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if n, err := shelfmark.PruneUploads(ctx, c.store, time.Now().Add(-blob.DefaultGrace)); err != nil {
			c.log.Warn("forgetting old upload records failed", "err", err)
		} else if n > 0 {
			c.log.Info("old upload records forgotten", "uploads", n)
		}
		st, err := c.blobs.Collect(ctx, c.refs, blob.CollectOptions{})
		if err != nil {
			c.log.Warn("collecting unreferenced blobs failed", "err", err)
			continue
		}
		if st.Removed > 0 {
			c.log.Info("unreferenced blobs removed", "blobs", st.Removed, "bytes", st.Bytes)
		}
	}
}
