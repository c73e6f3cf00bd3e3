package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/backup"
	"github.com/shelfmark/shelfmark/internal/setup"
)

func newBackupCommand() *cobra.Command {
	var (
		db           jobsDB
		content      setup.BlobFlags
		preservation string
	)
	cmd := &cobra.Command{
		Use:   "backup DIR|s3://bucket/prefix",
		Short: "Copy the repository, online and incrementally, into a backup",
		Long: `Copy the repository into DIR (or an S3 prefix, reached with the --s3-*
settings) while servers run: the SQLite database as of one moment (SQLite's
online backup API), then every blob that copy refers to, then the
preservation copy. Blobs and preservation files are kept in a pool named by
their digests that successive backups share: only what is new is copied.
Each backup is a directory DIR/backups/<time> whose manifest, backup.json,
is written last; a run that is interrupted leaves no manifest, and restore
refuses it. Restore with shelfmark restore DIR.

With --database (PostgreSQL) the database is not copied: back it up with a
base backup and WAL archiving (docs/backup.md); this command copies the
content store and the preservation copy, taken after the base backup began.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := setup.ApplyEnv(cmd.Flags()); err != nil {
				return err
			}
			ctx := cmd.Context()
			src := backup.Source{Backend: "sqlite"}
			var store shelfmark.Storage
			if db.database == "" {
				if err := requireDir(db.data); err != nil {
					return err
				}
				src.SQLite = filepath.Join(db.data, "shelfmark.db")
			} else {
				s, err := setup.OpenStorage(ctx, db.database, db.data, "safe", 2)
				if err != nil {
					return fmt.Errorf("open database: %w", err)
				}
				defer s.Close()
				store, src.Backend = s, s.Backend()
			}
			blobs, err := setup.OpenBlobs(ctx, content, db.data, store)
			if err != nil {
				return err
			}
			defer blobs.Close()
			bs, ok := blobs.(backup.BlobSource)
			if !ok {
				return errors.New("this content store cannot be listed")
			}
			src.Blobs = bs
			if src.OCFL, err = setup.PreservationFS(ctx, preservation, db.data, content); err != nil {
				return err
			}
			dst, err := setup.BackupFS(ctx, args[0], content, os.TempDir(), true)
			if err != nil {
				return err
			}
			var bars phaseBars
			// the database's snapshot goes beside the database (the
			// system's temporary directory may be memory)
			opts := backup.Options{Version: shelfmark.Version, Progress: bars.update, TempDir: filepath.Join(db.data, "tmp")}
			dir, m, err := backup.Run(ctx, src, dst, opts)
			bars.finish()
			if err != nil {
				if dir != "" {
					return fmt.Errorf("backup %s is not whole: %w", dir, err)
				}
				return err
			}
			printBackup(cmd.OutOrStdout(), args[0], dir, m)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&db.data, "data", "shelfmark-data", "directory of the repository (its SQLite database without --database, its content store, its preservation copy)")
	f.StringVar(&db.database, "database", "", "PostgreSQL URL (postgres://user@host/db): copy only the content store and the preservation copy")
	f.StringVar(&preservation, "preservation", "", `the preservation copy serve keeps (default: DATA/ocfl when it exists); "off": do not copy one`)
	content.Register(f)
	setup.AnnotateEnv(f)
	return cmd
}

// phaseBars draws each phase of a backup or a restore (the database's
// pages, the blobs, the preservation copy's objects or files) as a
// progress bar on stderr: setup.NewProgressBar, a bar on a terminal and a
// plain line every few seconds otherwise.
type phaseBars struct {
	phase string
	bar   *progressbar.ProgressBar
}

// update shows p, starting a new bar when the phase changes.
func (b *phaseBars) update(p backup.Progress) {
	if b.bar == nil || p.Phase != b.phase {
		b.finish()
		what := p.Phase
		if what == "database" {
			what = "database pages"
		}
		b.phase, b.bar = p.Phase, setup.NewProgressBar(-1, what)
	}
	if p.Total >= 0 {
		b.bar.ChangeMax64(p.Total)
	}
	if p.Phase != "database" {
		b.bar.Describe(fmt.Sprintf("%s (%d copied)", p.Phase, p.Copied))
	}
	_ = b.bar.Set64(p.Done)
}

// finish ends the current bar.
func (b *phaseBars) finish() {
	if b.bar != nil {
		_ = b.bar.Finish()
		b.bar = nil
	}
}

// printBackup prints what a backup holds and what it copied.
func printBackup(w io.Writer, dest, dir string, m *backup.Manifest) {
	db := "database: PostgreSQL, not copied (base backup and WAL archive: docs/backup.md)"
	if m.Database.File != "" {
		db = fmt.Sprintf("database: %d bytes", m.Database.Size)
	}
	fmt.Fprintf(w, "backup %s/%s whole: %s; %d blobs (%d copied); %d preservation files (%d copied); %d bytes copied\n",
		dest, dir, db, m.Blobs.Files, m.Copied.Blobs, m.OCFL.Files, m.Copied.OCFLFiles, m.Copied.Bytes)
}
