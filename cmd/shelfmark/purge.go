package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
)

func newPurgeCommand() *cobra.Command {
	var (
		data, database, reason, preservation string
		content                              setup.BlobFlags
	)
	cmd := &cobra.Command{
		Use:   "purge ID --reason TEXT",
		Short: "Remove a work or collection and all its history, for a takedown (cannot be undone)",
		Long: `Remove the work or collection ID from the repository (--data / --database) and
everything it has been, for a takedown. Deleting keeps a tombstone and the
earlier versions in the preservation copy; purging is the only way to remove
them:

  - its rows, and those of its file sets, files and child works (deleted ones
    too) and of the derivatives made from them: metadata, memberships,
    source keys, jobs, grants, owners, search documents;
  - its OAI-PMH records become deleted records (no metadata, no sets): the
    repository's deletedRecord policy is persistent, so harvesters learn it
    is gone; a collection's OAI set goes;
  - the bytes in the content store that no other file holds;
  - its objects in the preservation copy (--preservation, as given to serve).

The purge is recorded in the audit trail with --reason (required), and the id
then answers 404 everywhere. Run it against the same database, content store
and preservation copy as the servers.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := setup.ApplyEnv(cmd.Flags()); err != nil {
				return err
			}
			ctx := shelfmark.WithCaller(cmd.Context(), shelfmark.SystemCaller("cli"))
			engine, blobs, closeLocal, err := openLocal(ctx, database, data, "safe", content, setup.StoreTuning{})
			if err != nil {
				return err
			}
			defer closeLocal()
			root, err := openPreservation(ctx, data, preservation)
			if err != nil {
				return err
			}
			res, err := purge(ctx, engine, blobs, root, shelfmark.ID(args[0]), reason)
			if res != nil {
				printPurge(cmd.OutOrStdout(), res, root != nil, err == nil)
			}
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "shelfmark-data", "directory of the SQLite database and the content store (as for serve)")
	f.StringVar(&database, "database", "", "PostgreSQL URL; empty means SQLite in --data")
	f.StringVar(&reason, "reason", "", "why the work is purged (required; kept in the audit trail)")
	f.StringVar(&preservation, "preservation", "", `the preservation copy, as given to serve (default: DATA/ocfl when it exists); "off": none`)
	content.Register(f)
	setup.AnnotateEnv(f)
	return cmd
}

// purge removes id from the engine's storage, the bytes nothing else holds
// from blobs, and its objects from root (when not nil).
func purge(ctx context.Context, engine *shelfmark.Repository, blobs shelfmark.BlobStore, root *ocfl.Root, id shelfmark.ID, reason string) (*shelfmark.PurgeResult, error) {
	opts := shelfmark.PurgeOptions{Blobs: blobs}
	if root != nil {
		opts.Objects = func(ctx context.Context, ids []shelfmark.ID) error {
			for _, id := range ids {
				if err := root.Purge(ctx, preserve.ObjectID(id)); err != nil {
					return err
				}
			}
			return nil
		}
	}
	res, err := engine.Purge(ctx, id, reason, opts)
	if shelfmark.ErrorCode(err) == shelfmark.ENOTFOUND && root != nil && engine.IDs().Valid(id) {
		// purged before: a preserver that was writing a version of it at
		// that moment may have left its object; remove it again
		if perr := root.Purge(ctx, preserve.ObjectID(id)); perr != nil {
			return nil, fmt.Errorf("%w; removing its object from the preservation copy: %v", err, perr)
		}
		return nil, fmt.Errorf("%w (not in the database: purged before? its object, if one was left in the preservation copy, is removed now)", err)
	}
	return res, err
}

// printPurge says what a purge removed.
func printPurge(w io.Writer, res *shelfmark.PurgeResult, preserved, whole bool) {
	fmt.Fprintf(w, "purged %s: %d resources, %d OAI-PMH records now deleted records, %d of %d stored files' bytes removed (the rest are held by other files)\n",
		res.ID, res.Resources, res.OAIDeleted, res.Blobs, res.Digests)
	switch {
	case !whole:
		fmt.Fprintf(w, "  not finished (see the error); the objects to remove from the preservation copy: %v\n", res.Objects)
	case preserved:
		fmt.Fprintf(w, "  %d objects removed from the preservation copy\n", len(res.Objects))
	default:
		fmt.Fprintln(w, "  no preservation copy (--preservation off, or none in DATA/ocfl)")
	}
}
