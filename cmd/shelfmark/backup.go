package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

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
			dir, m, err := backup.Run(ctx, src, dst, backup.Options{Version: shelfmark.Version,
				Progress: backupProgress(cmd.ErrOrStderr(), time.Second)})
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

// backupProgress prints a run's progress to w at most once per every, and
// at the end of each phase.
func backupProgress(w io.Writer, every time.Duration) func(backup.Progress) {
	last := time.Now()
	return func(p backup.Progress) {
		end := p.Total >= 0 && p.Done >= p.Total
		if !end && time.Since(last) < every {
			return
		}
		last = time.Now()
		switch {
		case p.Phase == "database":
			fmt.Fprintf(w, "%s: %d/%d pages\n", p.Phase, p.Done, p.Total)
		case p.Total < 0:
			fmt.Fprintf(w, "%s: %d so far, %d copied\n", p.Phase, p.Done, p.Copied)
		default:
			fmt.Fprintf(w, "%s: %d/%d (%.0f%%), %d copied\n", p.Phase, p.Done, p.Total, 100*float64(p.Done)/float64(max(p.Total, 1)), p.Copied)
		}
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
