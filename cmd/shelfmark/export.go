package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/export"
	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/ocfl"
)

func newExportCommand() *cobra.Command {
	var (
		data, database, bagDir, ocflDir, preservation, org string
		content                                            setup.BlobFlags
	)
	cmd := &cobra.Command{
		Use:   "export ID... (--bagit DIR | --ocfl DIR)",
		Short: "Write works and collections as BagIt bags or as a new OCFL storage root",
		Long: `Write works and collections of the repository (--data / --database) as packages
that need no Shelfmark to be read:

  shelfmark export ID... --bagit DIR   one BagIt 1.0 bag per id, in DIR/ID: the originals
                                       (data/files/SET-ID/NAME), the metadata as Turtle
                                       (data/metadata.ttl) and Dublin Core (data/dc.xml), and
                                       the record of order, memberships and access
                                       (data/object.json); manifests and tag manifests in
                                       SHA-512 and SHA-256. "shelfmark ingest DIR/ID" reads
                                       one back as the work it was.
  shelfmark export ID... --ocfl DIR    a new OCFL 1.1 storage root at DIR holding the ids'
                                       objects with every version the preservation copy
                                       (--preservation) has of them; an object it does not
                                       hold yet is written from the database as one version

Each bag and the storage root are written in a temporary directory and
renamed into place: an existing DIR/ID or --ocfl DIR is never replaced.
Every original's bytes are checked against the digests the repository
recorded as they are copied.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := setup.ApplyEnv(cmd.Flags()); err != nil {
				return err
			}
			if (bagDir == "") == (ocflDir == "") {
				return fmt.Errorf("give one of --bagit DIR and --ocfl DIR")
			}
			ctx := shelfmark.WithCaller(cmd.Context(), shelfmark.SystemCaller("cli"))
			engine, blobs, closeLocal, err := openLocal(ctx, database, data, "safe", content, setup.StoreTuning{})
			if err != nil {
				return err
			}
			defer closeLocal()
			ids := make([]shelfmark.ID, len(args))
			for i, a := range args {
				ids[i] = shelfmark.ID(strings.TrimSpace(a))
				if !engine.IDs().Valid(ids[i]) {
					return fmt.Errorf("%q is not an id of this repository", a)
				}
			}
			opts := export.Options{Organization: org}
			if ocflDir != "" {
				if opts.Preservation, err = openPreservation(ctx, data, preservation); err != nil {
					return err
				}
			}
			ex := export.New(engine.Storage(), blobs, engine.IDs(), opts)
			out := cmd.OutOrStdout()
			if ocflDir != "" {
				res, err := ex.OCFL(ctx, ids, ocflDir)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "export --ocfl %s: %d objects copied with all their versions from the preservation copy, %d written from the database (not preserved yet)\n",
					res.Dir, len(res.Copied), len(res.Written))
				for _, id := range res.Written {
					fmt.Fprintf(out, "  %s: written from the database as one version\n", id)
				}
				return nil
			}
			failed := 0
			for _, id := range ids {
				res, err := ex.Bag(ctx, id, bagDir)
				if err != nil {
					fmt.Fprintf(out, "  failed %s: %s\n", id, shelfmark.ErrorMessage(err))
					failed++
					continue
				}
				fmt.Fprintf(out, "%s: %d files, %.1f MiB\n", res.Dir, res.Files, float64(res.Octets)/(1<<20))
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d exports failed", failed, len(ids))
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "shelfmark-data", "directory of the SQLite database and the content store (as for serve)")
	f.StringVar(&database, "database", "", "PostgreSQL URL; empty means SQLite in --data")
	f.StringVar(&bagDir, "bagit", "", "write one BagIt bag per id into this directory (DIR/ID)")
	f.StringVar(&ocflDir, "ocfl", "", "write a new OCFL storage root at this directory (it must not exist)")
	f.StringVar(&preservation, "preservation", "", `the repository's preservation copy, as given to serve (default: DATA/ocfl when it exists); "off": write every object from the database`)
	f.StringVar(&org, "organization", export.DefaultOrganization, "the bags' Source-Organization")
	content.Register(f)
	setup.AnnotateEnv(f)
	return cmd
}

// openPreservation opens the preservation copy as serve names it (flag
// "" is DATA/ocfl), or returns nil when it is off or, by default, absent.
// It never makes one.
func openPreservation(ctx context.Context, data, flag string) (*ocfl.Root, error) {
	dir := flag
	switch {
	case flag == "off":
		return nil, nil
	case flag == "":
		dir = filepath.Join(data, "ocfl")
		if _, err := os.Stat(filepath.Join(dir, "0=ocfl_1.1")); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
	case strings.Contains(flag, "://"):
		return nil, fmt.Errorf("--preservation %s: only a directory is supported yet", flag)
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("--preservation: %w", err)
	}
	fsys, err := ocfl.NewDirFS(dir)
	if err != nil {
		return nil, fmt.Errorf("--preservation %s: %w", dir, err)
	}
	root, err := ocfl.OpenRoot(ctx, fsys)
	if err != nil {
		return nil, fmt.Errorf("--preservation %s: %w", dir, err)
	}
	return root, nil
}
