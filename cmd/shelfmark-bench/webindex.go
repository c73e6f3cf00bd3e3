package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark/bench"
	"github.com/shelfmark/shelfmark/ingest"
	"github.com/shelfmark/shelfmark/internal/setup"
)

func newBenchWebIndexCommand() *cobra.Command {
	var lf labFlags
	var c bench.WebIndexConfig
	var chart, replot string
	var apart bool
	var run func(*cobra.Command, []string) error
	cmd := &cobra.Command{
		Use:   "webindex",
		Short: "WARC ingest and the link index: links/s over a generated crawl, re-captures included, with queries",
		Long: `Generates a crawl of --pages captures as gzipped WARC files (--pages-per-file
each; not timed, but reported; with --dir they are kept and reused by a later
run with the same settings): about 13 links per page, domains and pages linked
to by popularity (a few very popular URLs and domains, a long tail), some links
to pages never captured, relative and absolute hrefs; the last --recapture
share of the pages capture earlier pages again, later, with some links dropped
and some added, so the index replaces links as well as adding them.

Then times the WARC reader alone over the files (one goroutine, no database),
and ingests them as "shelfmark ingest" does into a fresh store while two
clients ask, --query-rate times a second each, for the top 10 pages of a
popular domain and for the inbound links of a popular URL. The clients run
in a process of their own (this program, run again), as a server answers
readers beside "shelfmark ingest-warc"; --queries-apart=false runs them in
the ingesting process, where on PostgreSQL each of a query's round trips
can wait for the ingest's goroutines to leave the runtime a processor.

Reports links/s (the items) and pages/s overall and per time bucket, the
flatness (last tenth over first tenth, flat: ≥ 0.9), the rates before and
after the re-captures begin, the queries' p50/p95/p99/max, peak RSS, and the
raw limit: plain batched INSERTs of the same rows (domains, URLs, captures,
links) into scratch tables of the same definitions on the same backend for
--raw-seconds, in links/s. The raw limit is then measured again at the
index's size: the rows of new pages drawn as the crawl draws its first
captures, inserted the same way into the index's own tables once they hold
the whole crawl (links to the URLs the index holds keep their ids), timed
for --raw-seconds of inserting, and taken out again.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if replot == "" {
				// the ingest runs in this process as shelfmark ingest
				// runs it, with its collector's pace
				setup.TuneGC(os.Getenv, setup.MachineMemory)
				return run(cmd, args)
			}
			r, err := bench.ReadWebIndexReport(replot)
			if err != nil {
				return err
			}
			return webIndexOutputs(cmd.OutOrStdout(), r, "", lf.reportDir, chart)
		},
	}
	run = lf.run(func(ctx context.Context, cmd *cobra.Command, e *labEnv) error {
		var bars stageBars
		c.Database, c.StorePath, c.Relaxed = lf.database, filepath.Join(e.dir, "data", "shelfmark.db"), lf.durability == "relaxed"
		c.WriteCache, c.MergeLinks, c.CheckpointEvery = lf.tuning.WriteCache, lf.tuning.WebMergeLinks, lf.tuning.CheckpointEvery
		c.Progress = bars.progress
		c.Seed = 1
		if apart {
			cmd, err := webQueryCommand(lf.database, filepath.Join(e.dir, "data"), lf.durability)
			if err != nil {
				return err
			}
			c.QueryCommand = cmd
		}
		r, err := bench.RunWebIndex(ctx, e.repo, e.blobs, c)
		bars.finish()
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		for i, s := range r.Steps {
			b := r.Timeline[i]
			phase := ""
			if b.Recapture {
				phase = "  re-captures"
			}
			lat := ""
			if b.TopMS != nil && b.LinksMS != nil {
				lat = fmt.Sprintf("  top p99 %6.2f ms  inbound p99 %6.2f ms", b.TopMS.P99, b.LinksMS.P99)
				if b.ReadMS != nil {
					lat += fmt.Sprintf("  one-row read p99 %6.2f ms", b.ReadMS.P99)
				}
			}
			fmt.Fprintf(out, "bucket %2d  %8.0f links/s  %7.0f pages/s%s%s\n", i+1, s.RatePerS, b.PagesPerS, lat, phase)
		}
		if r.Rows != nil {
			fmt.Fprintf(out, "index rows: %d domains, %d URLs, %d captures, %d links\n", r.Rows.Domains, r.Rows.URLs, r.Rows.Captures, r.Rows.Links)
			if b := r.BytesPerLink(); b > 0 {
				fmt.Fprintf(out, "index on disk: %.2f GiB, %.0f bytes per link indexed; %.0f links (%.0f pages) would take %.2f TiB\n",
					float64(r.Rows.Bytes)/(1<<30), b, projectLinks, projectPages, b*projectLinks/(1<<40))
			}
		}
		if r.GenerateSeconds > 0 {
			fmt.Fprintf(out, "generated %d WARC files (%.0f MiB) in %.1f s\n", r.WARCFiles, float64(r.WARCBytes)/(1<<20), r.GenerateSeconds)
		}
		if r.Raw != nil {
			fmt.Fprintf(out, "raw limit: %d pages (%d link rows, %d URL rows) in %.1f s: %.0f pages/s, %.0f links/s, %.0f link rows/s\n",
				r.Raw.Pages, r.Raw.LinkRows, r.Raw.URLRows, r.Raw.Seconds, r.Raw.PagesPerS, r.Raw.LinksPerS, r.Raw.LinkRowsPerS)
		}
		if a := r.RawAtSize; a != nil {
			fmt.Fprintf(out, "raw limit at the index's size: %d pages (%d link rows, %d of them to URLs the index held; %d URL rows) in %.1f s: %.0f pages/s, %.0f links/s, %.0f link rows/s\n",
				a.Pages, a.LinkRows, a.HeldLinks, a.URLRows, a.Seconds, a.PagesPerS, a.LinksPerS, a.LinkRowsPerS)
		}
		fmt.Fprintln(out, r.Summary())
		if r.Errors > 0 {
			fmt.Fprintf(os.Stderr, "webindex: %d errors (see the report)\n", r.Errors)
		}
		return webIndexOutputs(out, r, lf.jsonPath, lf.reportDir, chart)
	})
	f := cmd.Flags()
	lf.add(f)
	f.Int64Var(&lf.tuning.WriteCache, "write-cache", ingest.WARCWriteCache, "SQLite: bytes of the write connection's page cache (default: what \"shelfmark ingest\" takes for web archives)")
	f.IntVar(&lf.tuning.WebMergeLinks, "merge-links", ingest.WARCMergeLinks, "SQLite: logged link changes that start a merge of the link log (default: what \"shelfmark ingest\" takes for web archives)")
	f.Int64Var(&lf.tuning.CheckpointEvery, "checkpoint-every", ingest.WARCCheckpointEvery, "SQLite: bytes of write-ahead log gathered before it is copied into the database (0: after every commit; default: what \"shelfmark ingest\" takes for web archives)")
	f.IntVar(&c.Pages, "pages", 1000000, "captures in the generated crawl, re-captures included")
	f.IntVar(&c.PagesPerFile, "pages-per-file", 100000, "pages per WARC file")
	f.Float64Var(&c.Recapture, "recapture", 0.15, "share of the pages that capture an earlier page again (negative: none)")
	f.IntVar(&c.Domains, "domains", 0, "domains in the crawl (0: one per 20 pages, 50 to 50,000)")
	f.StringVar(&c.Dir, "dir", "", "write the WARC files here and keep them; reused when they are of the same settings (default: a temporary directory)")
	f.IntVar(&c.Batch, "batch", 1000, "records per batch (and pages per raw-limit transaction)")
	f.IntVar(&c.Merge, "merge", 0, "batches waiting for the database that one index transaction may take (0: the ingest's default)")
	f.IntVar(&c.Buckets, "buckets", 40, "time buckets of the rate over time")
	f.Float64Var(&c.QRate, "query-rate", 20, "queries per second of each kind while ingesting")
	f.BoolVar(&apart, "queries-apart", true, "ask the queries from a process of their own, as a server answers readers beside \"shelfmark ingest-warc\" (false: from the ingesting process)")
	f.BoolVar(&c.ParseOnly, "parse-only", true, "time the WARC reader alone over the files before the ingest")
	f.Float64Var(&c.RawSeconds, "raw-seconds", 10, "how long the raw limit inserts (negative: skip it)")
	f.IntVar(&c.RawBatch, "raw-batch", 0, "pages per raw-limit transaction (0: --batch)")
	f.StringVar(&chart, "chart", "", "write the links/s chart as a standalone SVG file")
	f.StringVar(&replot, "replot", "", "run nothing: draw --report and --chart again from this JSON report of an earlier run")
	setup.AnnotateEnv(f)
	return cmd
}

// The crawl the report projects its bytes per link onto: a web-scale
// crawl of 273.6 million pages and 3.54 billion links.
const (
	projectPages = 273.6e6
	projectLinks = 3.54e9
)

// webIndexOutputs writes the JSON report, the HTML report and the chart
// asked for.
func webIndexOutputs(out io.Writer, r *bench.WebIndexReport, jsonPath, reportDir, chart string) error {
	if jsonPath != "" {
		if err := r.WriteJSON(jsonPath); err != nil {
			return err
		}
	}
	if reportDir != "" {
		if err := r.WriteHTML(reportDir); err != nil {
			return err
		}
		fmt.Fprintf(out, "report: %s\n", filepath.Join(reportDir, "index.html"))
	}
	if chart != "" {
		if err := r.WriteLinksSVG(chart); err != nil {
			return fmt.Errorf("--chart: %w", err)
		}
	}
	return nil
}
