package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark/bench"
	"github.com/shelfmark/shelfmark/internal/setup"
)

func newBenchOAICommand() *cobra.Command {
	var lf labFlags
	var records, pageSize, triples int
	cmd := &cobra.Command{
		Use:   "oai",
		Short: "A full OAI-PMH ListRecords harvest: records/s, with gzip, page latency by depth, and again while ingesting",
		Long: `Stores --objects works (54 statements each, spread over 10 collections), renders
their OAI-PMH records, then harvests ListRecords (oai_dc) to the end with a
built-in client over HTTP on 127.0.0.1, --page-size records per page, one
request at a time as harvesters do. Reports records/s (target ≥ 30,000), the
latency of the first, middle and last 1% of pages (last ≤ 1.2× first); the
same harvest again asking for gzip (records/s and bytes on the wire against
uncompressed); page 1 of the list against the page at 99% of its depth,
fetched in turns; and a harvest while works are being ingested (p99 ≤ 100
ms). The raw limit is the same rows read page by page through the storage
interface in process.`,
		Args: cobra.NoArgs,
		RunE: lf.run(func(ctx context.Context, cmd *cobra.Command, e *labEnv) error {
			var bars stageBars
			res, err := bench.RunOAI(ctx, e.repo, e.store, e.blobs, bench.OAIConfig{Records: records, PageSize: pageSize, Triples: triples, Seed: 1,
				Progress: bars.progress})
			bars.finish()
			if err != nil {
				return err
			}
			r := res.Report
			out := cmd.OutOrStdout()
			for i, s := range r.Steps {
				fmt.Fprintf(out, "bucket %2d  %8.0f records/s  RSS %6.0f MiB\n", i+1, s.RatePerS, float64(s.PeakRSS)/(1<<20))
			}
			fmt.Fprintf(out, "stored %d works at %.0f/s; rendered their records at %.0f/s\n", r.Items, res.FillPerS, res.ProjectPerS)
			fmt.Fprintf(out, "oai %s: %d records in %.1f s, %.0f records/s (%.0f%% of reading the rows in process, %.0f/s), flatness %.2f; page p50 %.2f ms p99 %.2f ms max %.2f ms; first pages p50 %.2f ms, middle %.2f ms, last %.2f ms (last/first %.2f)\n",
				r.Backend, r.Items, r.Seconds, r.RatePerS, 100*r.FractionLimit, r.RawLimitPerS, r.Flatness, r.LatencyMS.P50, r.LatencyMS.P99, r.LatencyMS.Max,
				res.First.P50, res.Middle.P50, res.Last.P50, res.LastOverFirst)
			if z := res.Gzip; z != nil {
				fmt.Fprintf(out, "oai %s with gzip: %d records in %.1f s, %.0f records/s; %.1f MB on the wire against %.1f MB uncompressed (%.1f%%); page p50 %.2f ms p99 %.2f ms\n",
					r.Backend, z.Items, z.Seconds, z.RatePerS, float64(res.GzipBytes)/1e6, float64(res.Bytes)/1e6, 100*float64(res.GzipBytes)/float64(max(1, res.Bytes)),
					z.LatencyMS.P50, z.LatencyMS.P99)
			}
			if res.DeepPage > 0 {
				fmt.Fprintf(out, "oai %s page 1 (list range and completeListSize) p50 %.2f ms p99 %.2f ms; page %d p50 %.2f ms p99 %.2f ms (page 1/deep %.2f)\n",
					r.Backend, res.Page1.P50, res.Page1.P99, res.DeepPage, res.Deep.P50, res.Deep.P99, res.Page1.P50/max(res.Deep.P50, 1e-9))
			}
			if g := bench.RSSGrowth(r.Steps); g > 0 {
				fmt.Fprintf(out, "oai %s memory: %.0f MiB in the harvest's first bucket, %.0f MiB in its last (%.2f×)\n",
					r.Backend, float64(r.Steps[0].PeakRSS)/(1<<20), float64(r.Steps[len(r.Steps)-1].PeakRSS)/(1<<20), g)
				r.Params["rss_growth"] = g
			}
			d := res.During
			fmt.Fprintf(out, "oai %s while ingesting %.0f works/s: %d records in %.1f s, %.0f records/s; page p50 %.2f ms p95 %.2f ms p99 %.2f ms max %.2f ms\n",
				r.Backend, res.DuringIngestPerS, d.Items, d.Seconds, d.RatePerS, d.LatencyMS.P50, d.LatencyMS.P95, d.LatencyMS.P99, d.LatencyMS.Max)
			pages := bench.Series{Name: "page latency by depth, quiet harvest", Unit: "ms", XLabel: "page"}
			for i, v := range res.PageMS {
				pages.X, pages.Y = append(pages.X, float64(i+1)), append(pages.Y, v)
			}
			during := bench.Series{Name: "page latency by depth, harvest while ingesting", Unit: "ms", XLabel: "page"}
			for i, v := range res.DuringPageMS {
				during.X, during.Y = append(during.X, float64(i+1)), append(during.Y, v)
			}
			rate := bench.Series{Name: "records harvested per second, by time bucket", Unit: "records/s", XLabel: "seconds"}
			rss := bench.Series{Name: "resident memory by time bucket, quiet harvest", Unit: "MiB", XLabel: "seconds"}
			t := 0.0
			for _, s := range r.Steps {
				t += s.Seconds
				rate.X, rate.Y = append(rate.X, t), append(rate.Y, s.RatePerS)
				rss.X, rss.Y = append(rss.X, t), append(rss.Y, float64(s.PeakRSS)/(1<<20))
			}
			r.PeakRSSBytes = bench.PeakRSS(os.Getpid()) // the scenario runs in this process
			return finish(out, r, lf.jsonPath, lf.reportDir, rate, pages, during, rss)
		}),
	}
	f := cmd.Flags()
	lf.add(f)
	f.IntVar(&records, "objects", 1000000, "works to store and harvest")
	f.IntVar(&pageSize, "page-size", 100, "records per ListRecords page")
	f.IntVar(&triples, "triples", 54, "statements per work (the first 15 are one of each Dublin Core element, the rest references); fewer make smaller records")
	setup.AnnotateEnv(f)
	return cmd
}
