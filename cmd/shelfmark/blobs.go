package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/internal/setup"
)

func newBlobsCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "blobs",
		Short: "Look after the content store",
	}
	var db jobsDB
	var dryRun bool
	var grace time.Duration
	var content setup.BlobFlags
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
			if err := setup.ApplyEnv(cmd.Flags()); err != nil {
				return err
			}
			ctx := cmd.Context()
			if db.database == "" {
				if err := requireDir(db.data); err != nil {
					return err
				}
			}
			store, err := setup.OpenStorage(ctx, db.database, db.data, "safe", 2)
			if err != nil {
				return fmt.Errorf("open database: %w", err)
			}
			defer store.Close()
			blobs, err := setup.OpenBlobs(ctx, content, db.data, store)
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
	content.Register(f)
	setup.AnnotateEnv(f)
	cmd.AddCommand(gc)
	return cmd
}

// collectBlobs runs one collection and prints what it found.
func collectBlobs(ctx context.Context, out io.Writer, store shelfmark.Storage, blobs setup.ContentStore, opts blob.CollectOptions) error {
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
