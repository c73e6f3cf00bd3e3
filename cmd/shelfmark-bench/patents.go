package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark/bench"
	"github.com/shelfmark/shelfmark/ingest"
	"github.com/shelfmark/shelfmark/internal/setup"
)

func newBenchPatentsCommand() *cobra.Command {
	var inProcess func(*cobra.Command, []string) error
	var lf labFlags
	var works, workers, batch, shares, scanBytes int
	var cf benchClusterFlags
	cmd := &cobra.Command{
		Use:   "patents",
		Short: "Bulk ingest of generated patents (31–69 statements, a 4 KB XML each): rate over time",
		Long: `Ingests --objects generated patents through the bulk ingest pipeline (as
"shelfmark ingest" does): each work has 31–69 statements (mean 54), one XML
full text of about 4 KB, and about half of them a PDF and a first-page TIFF as
well. Reports works/s overall and per wall-time bucket, its flatness (last
tenth of buckets over the first tenth, flat: ≥ 0.9), and the fraction of two
raw limits measured in the same run: plain inserts of the same rows (--batch
works per durable transaction) and plain write + fsync of the same XML bytes,
one new file each.

With --servers (and --database) the patents go through that many "shelfmark
serve" processes on one PostgreSQL instead, over their bulk API (files to
POST /api/v1/blobs, works to POST /api/v1/groups, as "shelfmark ingest
--server" sends them): the works are split into --shares pipelines run at
once in this process, which go to the servers round-robin (no load
balancer). A list ("--servers 1,2,3") ingests --objects works against each
count in one run, and --storage local,s3 against each content store (s3: a
versitygw on a loopback port). Each configuration gets a new schema
(dropped afterwards) and its raw insert limit; the report gives its rate,
the fraction of that limit, and the CPU time per work of the servers, of
the PostgreSQL processes serving them, of the S3 server and of this
process (the ingest clients). The servers run no background jobs
(--workers=false on serve).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cf.clusterMode(cmd.Flags()) {
				return inProcess(cmd, args)
			}
			if err := setup.ApplyEnv(cmd.Flags()); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if cf.replot != "" {
				rep, err := cf.replotted()
				if err != nil {
					return err
				}
				return cf.finish(out, rep, "", lf.reportDir)
			}
			rep, err := benchPatentsCluster(cmd.Context(), out, &cf, lf.database, lf.durability, shares,
				bench.PatentsConfig{Works: works, Workers: workers, Batch: batch, Seed: 1, ScanBytes: scanBytes})
			if err != nil {
				return err
			}
			return cf.finish(out, rep, lf.jsonPath, lf.reportDir)
		},
	}
	inProcess = lf.run(func(ctx context.Context, cmd *cobra.Command, e *labEnv) error {
		rawRows, err := rawLimit(ctx, lf.database, lf.durability, batch)
		if err != nil {
			return fmt.Errorf("raw insert limit: %w", err)
		}
		rawFiles, err := bench.RawFileLimit(e.dir, 1, 2*time.Second)
		if err != nil {
			return fmt.Errorf("raw file limit: %w", err)
		}
		bar := setup.NewProgressBar(works, "works")
		r, err := bench.RunPatents(ctx, e.repo, e.blobs, bench.PatentsConfig{Works: works, Workers: workers, Batch: batch, Seed: 1, ScanBytes: scanBytes,
			Progress: func(s ingest.Stats) { bar.Set(int(s.Stored + s.Skipped + s.Failed)) }})
		bar.Finish()
		fmt.Fprintln(os.Stderr)
		if r == nil {
			return err
		}
		r.Backend = e.store.Backend()
		r.PeakRSSBytes = bench.PeakRSS(os.Getpid()) // the scenario runs in this process
		r.RawLimitPerS = rawRows
		r.RawLimitWhat = fmt.Sprintf("plain inserts of the same rows (54 statements), %d works per durable transaction", batch)
		var fracRows, fracFiles float64
		if rawRows > 0 {
			fracRows = r.RatePerS / rawRows
		}
		if rawFiles > 0 {
			fracFiles = r.RatePerS / rawFiles // one XML per work: works/s against files/s
		}
		r.FractionLimit = fracRows
		r.Params["raw_file_limit_per_s"], r.Params["raw_file_limit_what"] = rawFiles, "plain write + fsync of the same XML bytes, one new file each"
		r.Params["fraction_of_file_limit"] = fracFiles
		out := cmd.OutOrStdout()
		for i, s := range r.Steps {
			fmt.Fprintf(out, "bucket %2d  %8.0f works/s\n", i+1, s.RatePerS)
		}
		fmt.Fprintf(out, "patents %s: %d works in %.1f s, %.0f works/s, flatness %.2f, %.0f%% of the raw insert limit (%.0f works/s), %.0f%% of the raw file limit (%.0f files/s); peak RSS %.0f MiB; %d errors\n",
			r.Backend, r.Items, r.Seconds, r.RatePerS, r.Flatness, 100*fracRows, rawRows, 100*fracFiles, rawFiles, float64(r.PeakRSSBytes)/(1<<20), r.Errors)
		if err != nil {
			return err
		}
		rateSeries := bench.Series{Name: "works stored per second, by time bucket", Unit: "works/s", XLabel: "seconds"}
		t := 0.0
		for _, s := range r.Steps {
			t += s.Seconds
			rateSeries.X, rateSeries.Y = append(rateSeries.X, t), append(rateSeries.Y, s.RatePerS)
		}
		return finish(out, r, lf.jsonPath, lf.reportDir, rateSeries)
	})
	f := cmd.Flags()
	lf.add(f)
	f.IntVar(&works, "objects", 1000000, "patents to ingest")
	f.IntVar(&workers, "workers", 0, "ingest workers storing files (0: the number of cores)")
	f.IntVar(&batch, "batch", 64, "works per engine call (and per raw-limit transaction)")
	f.IntVar(&shares, "shares", 0, "with --servers: ingest pipelines run at once, spread over the servers (0: the largest server count), the same for every configuration")
	f.IntVar(&scanBytes, "scan-bytes", 0, "give each work one more file of this many bytes, unique to it (the others are small or shared, and an S3 store keeps files of at most 64 KiB in the database)")
	cf.add(f)
	setup.AnnotateEnv(f)
	return cmd
}
