package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark/bench"
	"github.com/shelfmark/shelfmark/internal/setup"
)

func newBenchSearchCommand() *cobra.Command {
	var lf labFlags
	var cfg bench.SearchConfig
	cmd := &cobra.Command{
		Use:   "search",
		Short: "Full-text search over many works: first-page latency of a common, a medium and a rare word, with facets",
		Long: `Stores --objects works whose titles and descriptions hold one word common to
all of them ("` + bench.SearchCommonWord + `"), a word of medium frequency and rare words, indexes
them with the search indexer, then times the first page (with total and facet
counts) of --queries queries of each kind, and a page deep in the common word's
results, through the storage interface in process as GET /api/v1/search does.
Reports p50/p95/p99/max per kind (target: the common word's first page ≤ 100 ms
p99 at 1,000,000 works) and whether the totals were estimates. The raw limit is
the rate of the rare words' first pages on the same index.`,
		Args: cobra.NoArgs,
		RunE: lf.run(func(ctx context.Context, cmd *cobra.Command, e *labEnv) error {
			var bars stageBars
			cfg.Seed = 1
			cfg.Progress = bars.progress
			res, err := bench.RunSearch(ctx, e.repo, e.store, cfg)
			bars.finish()
			if err != nil {
				return err
			}
			r := res.Report
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "stored %d works at %.0f/s; indexed them at %.0f/s\n", r.Params["works"], res.FillPerS, res.IndexPerS)
			for _, k := range res.Kinds {
				total := ""
				if k.Matches > 0 {
					approx := "exact"
					if k.Estimated {
						approx = "estimated"
					}
					total = fmt.Sprintf("; total %d (%s) for %d public matches", k.Total, approx, k.Matches)
				}
				fmt.Fprintf(out, "%-55s p50 %6.2f ms  p95 %6.2f ms  p99 %6.2f ms  max %6.2f ms (CPU of this process p50 %.2f ms, p99 %.2f ms)%s\n",
					k.Name, k.Latency.P50, k.Latency.P95, k.Latency.P99, k.Latency.Max, k.CPU.P50, k.CPU.P99, total)
			}
			fmt.Fprintf(out, "search %s: %d works, common word first page p50 %.2f ms p99 %.2f ms max %.2f ms, %.0f queries/s (%.0f%% of rare words' %.0f/s); %d errors\n",
				r.Backend, cfg.Works, r.LatencyMS.P50, r.LatencyMS.P99, r.LatencyMS.Max, r.Steps[0].RatePerS, 100*r.FractionLimit, r.RawLimitPerS, r.Errors)
			var series []bench.Series
			for _, k := range res.Kinds {
				series = append(series, bench.Series{Name: k.Name + ": p50, p95, p99, max", Unit: "ms", XLabel: "percentile",
					X: []float64{50, 95, 99, 100}, Y: []float64{k.Latency.P50, k.Latency.P95, k.Latency.P99, k.Latency.Max}})
			}
			r.PeakRSSBytes = bench.PeakRSS(os.Getpid()) // the scenario runs in this process
			return finish(out, r, lf.jsonPath, lf.reportDir, series...)
		}),
	}
	f := cmd.Flags()
	lf.add(f)
	f.IntVar(&cfg.Works, "objects", 1000000, "works to store and index")
	f.IntVar(&cfg.Queries, "queries", 200, "queries of each kind")
	f.IntVar(&cfg.Limit, "limit", 20, "hits per page")
	setup.AnnotateEnv(f)
	return cmd
}
