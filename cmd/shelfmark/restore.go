package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark/backup"
	"github.com/shelfmark/shelfmark/internal/setup"
)

func newRestoreCommand() *cobra.Command {
	var (
		data    string
		dir     string
		force   bool
		content setup.BlobFlags
	)
	cmd := &cobra.Command{
		Use:   "restore FROM [--data DIR]",
		Short: "Bring a backup back into a fresh data directory",
		Long: `Bring a backup written by shelfmark backup (a directory or
s3://bucket/prefix, reached with the --s3-* settings) back into the data
directory --data: the database, the content store (local files) and the
preservation copy, each file verified against its digest as it is copied.
The newest whole backup is restored, or the one --backup names
(backups/<time>); a backup whose run was interrupted has no manifest and is
refused. The data directory must be empty unless --force. Then start
shelfmark serve --data DIR.

A backup of a PostgreSQL repository holds no database: restore the content
store and the preservation copy here, and the database from its base backup
and WAL archive (docs/backup.md).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := setup.ApplyEnv(cmd.Flags()); err != nil {
				return err
			}
			ctx := cmd.Context()
			from, err := setup.BackupFS(ctx, args[0], content, os.TempDir(), false)
			if err != nil {
				return err
			}
			var bars phaseBars
			got, m, err := backup.Restore(ctx, from, data, backup.RestoreOptions{Dir: dir, Force: force, Progress: bars.update})
			bars.finish()
			if err != nil {
				return fmt.Errorf("restore %s: %w", args[0], err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "restored %s/%s (taken %s by shelfmark %s) into %s: %d blobs, %d preservation files\n",
				args[0], got, m.Started.Format(time.RFC3339), m.Version, data, m.Blobs.Files, m.OCFL.Files)
			if m.Database.File == "" {
				fmt.Fprintln(out, "the database is PostgreSQL: restore it from its base backup and WAL archive (docs/backup.md)")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "shelfmark-data", "the new data directory (must be empty unless --force)")
	f.StringVar(&dir, "backup", "", "the backup to restore (backups/<time>); default: the newest whole one")
	f.BoolVar(&force, "force", false, "restore into a data directory that is not empty")
	content.Register(f)
	setup.AnnotateEnv(f)
	return cmd
}
