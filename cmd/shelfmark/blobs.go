package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
)

func newBlobsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "blobs",
		Short: "Look after the content store",
	}
	var db jobsDB
	var dryRun bool
	var grace time.Duration
	var content blobFlags
	gc := &cobra.Command{
		Use:   "gc",
		Short: "Remove stored bytes no file refers to",
		Long: `Remove the stored bytes that no file refers to: bytes sent to /api/v1/blobs
and never named by a file, and those of uploads killed between storing and
committing. Bytes stored (or stored again) less than --grace ago are kept,
so uploads in progress are never taken; bytes of deleted resources are kept
(their tombstones still describe them). The records of uploads older than
--grace that no file names are forgotten first (their users may no longer
name those bytes). Safe while servers run.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyEnv(cmd.Flags()); err != nil {
				return err
			}
			ctx := cmd.Context()
			if db.database == "" {
				if err := requireDir(db.data); err != nil {
					return err
				}
			}
			store, err := openStorage(ctx, db.database, db.data, "safe", 2)
			if err != nil {
				return fmt.Errorf("open database: %w", err)
			}
			defer store.Close()
			blobs, err := openBlobs(ctx, content, db.data, store)
			if err != nil {
				return err
			}
			defer blobs.Close()
			return collectBlobs(ctx, cmd.OutOrStdout(), store, blobs, blob.CollectOptions{Grace: grace, DryRun: dryRun})
		},
	}
	f := gc.Flags()
	f.StringVar(&db.data, "data", "shelfmark-data", "directory of the content store (and of the SQLite database without --database)")
	f.StringVar(&db.database, "database", "", "PostgreSQL URL (postgres://user@host/db)")
	f.BoolVar(&dryRun, "dry-run", false, "count what would be removed, remove nothing")
	f.DurationVar(&grace, "grace", blob.DefaultGrace, "keep bytes stored less than this long ago")
	content.register(f)
	annotateEnv(f)
	cmd.AddCommand(gc)
	return cmd
}

// collectBlobs runs one collection and prints what it found.
func collectBlobs(ctx context.Context, out io.Writer, store shelfmark.Storage, blobs contentStore, opts blob.CollectOptions) error {
	refs, ok := store.(shelfmark.BlobReferences)
	if !ok {
		return fmt.Errorf("the %T database cannot tell which bytes files refer to", store)
	}
	if !opts.DryRun {
		if _, err := shelfmark.PruneUploads(ctx, store, time.Now().Add(-graceOf(opts))); err != nil {
			return fmt.Errorf("forget old uploads: %w", err)
		}
	}
	st, err := blobs.Collect(ctx, refs, opts)
	if err != nil {
		return err
	}
	verb := "removed"
	if opts.DryRun {
		verb = "would remove"
	}
	_, err = fmt.Fprintf(out, "%d blobs stored before the grace period, %d referenced by no file (%d bytes); %s %d\n",
		st.Examined, st.Orphans, st.Bytes, verb, map[bool]int{false: st.Removed, true: st.Orphans}[opts.DryRun])
	return err
}

// graceOf is the grace period a collection keeps.
func graceOf(opts blob.CollectOptions) time.Duration {
	if opts.Grace > 0 {
		return opts.Grace
	}
	return blob.DefaultGrace
}

// blobCollector collects the content store's unreferenced blobs at every
// interval while serve runs (the first time one interval after start),
// forgetting the upload records past the grace period first.
type blobCollector struct {
	blobs contentStore
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
