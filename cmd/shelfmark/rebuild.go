package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
)

func newRebuildCommand() *cobra.Command {
	var (
		db       jobsDB
		from     string
		batch    int
		parallel int
		content  setup.BlobFlags
	)
	cmd := &cobra.Command{
		Use:   "rebuild --from ROOT",
		Short: "Make a new repository from its preservation copy alone",
		Long: `Make a new repository (database and content store) from a preservation copy
(an OCFL storage root written by shelfmark serve) alone: every work and
collection with its metadata, file sets, files, order, memberships, access,
depositors, grants on collections and source keys, the tombstones of what was
deleted, and the originals' bytes, each checked against the copy's digests.
Every resource keeps its id. Derivatives are made again by the background
pipeline (a characterization job is queued for each original); the search
and OAI-PMH indexes build themselves when the repository is served.

The database must be new (an empty --data directory, or an empty PostgreSQL
database). Objects are written in batches, each in one transaction: when a
rebuild is interrupted, run the same command again and it goes on where it
stopped. A damaged object (an inventory that does not match its digest, a
missing content file, a record that cannot be read) is reported with its
reason and left out; the command then exits with status 1, having rebuilt the
rest.

Serve the rebuilt repository with --preservation ROOT (the same storage root):
it continues the copy where it ends, writing no object again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := setup.ApplyEnv(cmd.Flags()); err != nil {
				return err
			}
			if from == "" {
				return errors.New("--from: give the storage root to rebuild from")
			}
			if strings.Contains(from, "://") {
				return fmt.Errorf("--from %s: only a directory is supported yet", from)
			}
			ctx := cmd.Context()
			if _, err := os.Stat(from); err != nil {
				return fmt.Errorf("--from: %w", err)
			}
			fsys, err := ocfl.NewDirFS(from)
			if err != nil {
				return fmt.Errorf("--from %s: %w", from, err)
			}
			root, err := ocfl.OpenRoot(ctx, fsys)
			if err != nil {
				return fmt.Errorf("--from %s: %w", from, err)
			}
			if db.database == "" {
				if err := os.MkdirAll(db.data, 0o755); err != nil {
					return fmt.Errorf("--data: %w", err)
				}
			}
			store, err := setup.OpenStorage(ctx, db.database, db.data, "safe", parallel+2)
			if err != nil {
				return fmt.Errorf("open database: %w", err)
			}
			defer store.Close()
			blobs, err := setup.OpenBlobs(ctx, content, db.data, store)
			if err != nil {
				return err
			}
			defer blobs.Close()
			errOut := cmd.ErrOrStderr()
			rep, err := preserve.Rebuild(ctx, root, store, blobs, preserve.RebuildOptions{Batch: batch, Parallel: parallel,
				Progress: progressPrinter(errOut, time.Second)})
			if rep != nil {
				printRebuild(cmd.OutOrStdout(), rep)
			}
			if err != nil {
				return err
			}
			if len(rep.Skipped) > 0 {
				return fmt.Errorf("%d damaged objects were left out (listed above)", len(rep.Skipped))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&from, "from", "", "the OCFL storage root to rebuild from (a directory)")
	f.StringVar(&db.data, "data", "shelfmark-data", "directory of the new content store (and of the SQLite database without --database)")
	f.StringVar(&db.database, "database", "", "PostgreSQL URL (postgres://user@host/db) of the new database")
	f.IntVar(&batch, "batch", preserve.DefaultRebuildBatch, "objects written per transaction")
	f.IntVar(&parallel, "parallel", preserve.DefaultRebuildParallel, "objects read at once")
	content.Register(f)
	setup.AnnotateEnv(f)
	return cmd
}

// progressPrinter prints a rebuild's progress to w at most once per
// every (and at the end): objects done of the total, the rate, and the
// damaged objects met so far.
func progressPrinter(w io.Writer, every time.Duration) func(preserve.RebuildProgress) {
	var last time.Duration
	return func(p preserve.RebuildProgress) {
		if p.Done < p.Total && p.Elapsed-last < every {
			return
		}
		last = p.Elapsed
		rate := 0.0
		if s := p.Elapsed.Seconds(); s > 0 {
			rate = float64(p.Done) / s
		}
		if !p.Listed {
			fmt.Fprintf(w, "rebuild: %d objects of the %d listed so far, %.0f objects/s, %d damaged\n", p.Done, p.Total, rate, p.Skipped)
			return
		}
		fmt.Fprintf(w, "rebuild: %d/%d objects (%.0f%%), %.0f objects/s, %d damaged\n",
			p.Done, p.Total, 100*float64(p.Done)/float64(max(p.Total, 1)), rate, p.Skipped)
	}
}

// printRebuild prints what a rebuild did, with every damaged object and
// its reason.
func printRebuild(w io.Writer, rep *preserve.RebuildReport) {
	for _, s := range rep.Skipped {
		id := s.ID
		if id == "" {
			id = "(unreadable object)"
		}
		fmt.Fprintf(w, "damaged, left out: %s: %s\n", id, s.Reason)
	}
	fmt.Fprintf(w, "%d objects: %d written, %d written by an earlier run, %d damaged; %d resources, %d originals (%d bytes); changes continue after %d\n",
		rep.Objects+countUnreadable(rep), rep.Written, rep.Resumed, len(rep.Skipped), rep.Resources, rep.Originals, rep.Bytes, rep.Seq)
}

// countUnreadable is how many skipped objects had no readable id (they
// are not in rep.Objects).
func countUnreadable(rep *preserve.RebuildReport) int {
	n := 0
	for _, s := range rep.Skipped {
		if s.ID == "" {
			n++
		}
	}
	return n
}
