package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench"
	"github.com/shelfmark/shelfmark/internal/setup"
)

// newBenchWebQueriesCommand is "shelfmark-bench webindex-queries", hidden:
// the query clients of bench webindex in a process of their own, as a
// server answers readers beside "shelfmark ingest-warc". It opens the
// store the scenario ingests into, asks its queries (bench.RunWebQueries)
// and writes a line for each (bench.WriteWebQuery) until its standard
// input ends.
func newBenchWebQueriesCommand() *cobra.Command {
	var database, data, durability string
	var t bench.WebQueryTargets
	var rate float64
	var startNanos int64
	cmd := &cobra.Command{
		Use:    "webindex-queries",
		Short:  "the query clients of bench webindex, in a process of their own (run by bench webindex)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runWebQueries(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout(), database, data, durability, t, rate, time.Unix(0, startNanos))
		},
	}
	f := cmd.Flags()
	f.StringVar(&database, "database", "", "PostgreSQL URL of the store (empty: SQLite in --data)")
	f.StringVar(&data, "data", "", "the store's data directory (SQLite)")
	f.StringVar(&durability, "durability", "safe", "safe or relaxed, as the store was opened")
	f.Float64Var(&rate, "rate", 20, "queries per second of each kind")
	f.Int64Var(&startNanos, "start", 0, "the scenario's start, in Unix nanoseconds: each query's time is reported from it")
	f.StringArrayVar(&t.Domains, "domain", nil, "a domain whose top 10 pages are asked for (repeated: in turn)")
	f.StringArrayVar(&t.SURTs, "surt", nil, "a URL (SURT) whose links are asked for (repeated: in turn)")
	return cmd
}

// runWebQueries opens the store and asks the queries until in ends,
// writing their lines to out.
func runWebQueries(ctx context.Context, in io.Reader, out io.Writer, database, data, durability string, t bench.WebQueryTargets, rate float64, start time.Time) error {
	if len(t.Domains) == 0 || len(t.SURTs) == 0 {
		return fmt.Errorf("webindex-queries: at least one --domain and one --surt")
	}
	if database == "" && data == "" {
		return fmt.Errorf("webindex-queries: --database or --data")
	}
	store, err := setup.OpenStorage(ctx, database, data, durability, 0)
	if err != nil {
		return fmt.Errorf("webindex-queries: %w", err)
	}
	defer store.Close()
	ids, err := shelfmark.LoadIDCodec(ctx, store)
	if err != nil {
		return fmt.Errorf("webindex-queries: %w", err)
	}
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: ids})
	defer repo.Close()
	stop := make(chan struct{})
	go func() {
		io.Copy(io.Discard, in) // until the scenario closes it
		close(stop)
	}()
	w := bufio.NewWriter(out)
	var werr error
	ctx = shelfmark.WithCaller(ctx, shelfmark.SystemCaller("bench"))
	bench.RunWebQueries(ctx, stop, repo, t, rate, start, func(r bench.WebQueryResult) {
		if werr == nil {
			if werr = bench.WriteWebQuery(w, r); werr == nil {
				werr = w.Flush()
			}
		}
	})
	return werr
}

// webQueryCommand is the command bench webindex runs for its queries: this
// program's webindex-queries on the store the scenario opened.
func webQueryCommand(database, data, durability string) ([]string, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("the query process: %w", err)
	}
	return []string{self, "webindex-queries", "--database", database, "--data", data, "--durability", durability}, nil
}
