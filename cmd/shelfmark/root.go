package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/shelfmark/shelfmark"
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
	root.AddCommand(newServeCommand(), newWorkerCommand(), newJobsCommand(), newIngestCommand(), newVersionCommand(), newBenchCommand(), newBlobsCommand(),
		newUserCommand(), newGroupCommand(), newTokenCommand(), newAuditCommand())
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

// envName is the environment variable of a flag.
func envName(flag string) string {
	if flag == "database" {
		return "SHELFMARK_DATABASE_URL"
	}
	return "SHELFMARK_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// applyEnv sets every flag not given on the command line from its
// environment variable, and notes the variable in the flag's help.
func applyEnv(fs *pflag.FlagSet) error {
	var err error
	fs.VisitAll(func(f *pflag.Flag) {
		name := envName(f.Name)
		if v, ok := os.LookupEnv(name); ok && !f.Changed && err == nil {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %w", name, v, e)
			}
		}
	})
	return err
}

// annotateEnv appends each flag's environment variable to its usage.
func annotateEnv(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name != "help" {
			f.Usage += " [" + envName(f.Name) + "]"
		}
	})
}

// parseSize reads sizes such as 4GiB, 512MiB, 1000000 or 10GB.
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a size (for example 4GiB or 500MB)", s)
	}
	return n * mult, nil
}
