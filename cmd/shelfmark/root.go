package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/setup"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "shelfmark",
		Short: "Shelfmark: a digital repository that stays fast as it grows",
		Long: `Shelfmark stores collections, works, file sets and files with RDF metadata,
and serves them over a REST API.

Start it with zero configuration (SQLite and files in ./shelfmark-data):

  shelfmark serve

Every flag can also be set with an environment variable: --database is
SHELFMARK_DATABASE_URL, other flags are SHELFMARK_ and the flag name in
capitals with - as _ (for example --max-upload is SHELFMARK_MAX_UPLOAD).`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newServeCommand(), newWorkerCommand(), newJobsCommand(), newIngestCommand(), newVersionCommand(), newBlobsCommand(),
		newUserCommand(), newGroupCommand(), newTokenCommand(), newAuditCommand(), newExportCommand(), newPurgeCommand(),
		newFixityCommand(), newRebuildCommand(), newBackupCommand(), newRestoreCommand())
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), "shelfmark", shelfmark.Version)
			return err
		},
	}
}

// newServeCommand is "shelfmark serve" (internal/setup holds it, as the
// lab's rest-server serves the same way).
func newServeCommand() *cobra.Command {
	cmd, _ := setup.ServeCommand()
	return cmd
}
