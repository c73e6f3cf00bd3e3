// Command shelfmark-bench is Shelfmark's benchmark lab: every scenario of
// docs/design.md's measurements (rest, patents, collection, book, oai,
// soak, search, ui, iiif, webindex, scale, storm, ...) as a subcommand, each
// writing its figures as JSON and an HTML report. It is a binary of its
// own so that the shelfmark server carries none of it.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "shelfmark-bench:", err)
		os.Exit(1)
	}
}

// newRootCommand is the lab: one subcommand per scenario.
func newRootCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "shelfmark-bench",
		Short: "Measure the repository by replaying the field reports' experiments",
		Long: `The benchmark lab of Shelfmark. Each scenario prints a line per step and a
one-line summary, and writes every figure to --json FILE. The raw limit of
the same work is measured in the same run, and the result is stated as a
fraction of it.

Scenarios that run "shelfmark serve" as a process of its own take the
shelfmark binary named by SHELFMARK_BINARY, else the one beside this one
(make bench builds both into bin/), else shelfmark on the PATH.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	var cpuProfile, memProfile string
	var profFile *os.File
	cmd.PersistentFlags().StringVar(&cpuProfile, "cpuprofile", "", "write a Go CPU profile of the scenario to this file (for go tool pprof)")
	cmd.PersistentFlags().StringVar(&memProfile, "memprofile", "", "write a Go memory profile of the scenario to this file at its end (for go tool pprof; -sample_index=alloc_space shows where the scenario's garbage was made)")
	cmd.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if memProfile != "" {
			runtime.MemProfileRate = 64 << 10 // eight times the default's samples: a request's garbage shows
		}
		if cpuProfile == "" {
			return nil
		}
		f, err := os.Create(cpuProfile)
		if err != nil {
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("--cpuprofile: %w", err)
		}
		profFile = f
		return nil
	}
	cmd.PersistentPostRunE = func(cmd *cobra.Command, args []string) error {
		if memProfile != "" {
			if err := writeMemProfile(memProfile); err != nil {
				return err
			}
		}
		if profFile == nil {
			return nil
		}
		pprof.StopCPUProfile()
		return profFile.Close()
	}
	cmd.AddCommand(newBenchRestCommand(), newBenchBookCommand(), newBenchCollectionCommand(), newBenchPatentsCommand(), newBenchOAICommand(), newBenchCharacterizeCommand(), newBenchIsolationCommand(), newBenchSoakCommand(), newBenchSearchCommand(), newBenchUICommand(), newBenchIIIFCommand(), newBenchWebIndexCommand(), newBenchScaleCommand(), newBenchRestServerCommand(), newBenchWebQueriesCommand(), newBenchFixityCommand(), newBenchRebuildCommand(), newBenchStormCommand())
	return cmd
}

// writeMemProfile writes the allocation profile of the run so far to path.
func writeMemProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("--memprofile: %w", err)
	}
	return f.Close()
}
