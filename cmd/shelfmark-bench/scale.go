package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/internal/setup"
)

func newBenchScaleCommand() *cobra.Command {
	var lf labFlags
	var works, checkpoint, batch, workers, samples int
	var data, fileBytes, replot, resume string
	cmd := &cobra.Command{
		Use:   "scale",
		Short: "Millions of patents into PostgreSQL: rate, CPU and bytes per work, and query latency at every checkpoint",
		Long: `Ingests --objects generated patents (31–69 statements, mean 54, and one XML full
text of about 4 KB each; no PDFs or images) into one collection through the
bulk ingest pipeline. Every --checkpoint works it brings the OAI-PMH view and
the search index up to date (timed apart from the ingest), then records:

  - the ingest rate over the interval, and CPU seconds per 1,000 works of this
    process and of the PostgreSQL server's processes (read from /proc when the
    server runs on this machine);
  - the size of every table and index (pg_relation_size, pg_indexes_size,
    pg_total_relation_size, pg_class.reltuples) and of the content store, as
    bytes per work;
  - p50/p99 over --samples runs of six queries through the engine in process:
    fetch a random work by id, a page of 100 members at a random depth in the
    second half of the collection (keyset), OAI-PMH ListRecords page 1 and a
    page at a resumption token deep in the list (the provider's handler,
    without network), and two searches (one work's identifier; a word in every
    work), first page with facets.

The JSON report (--json) and the HTML report with charts (--report, which also
gets scale-*.svg charts) are written after every checkpoint, so a run cut
short keeps what it measured. --file-bytes shared stores each work's XML as
one of 256 texts (one files row per work still, with its own name, but 256
blobs), so millions of works fit on a small disk. Meant for PostgreSQL
(--database); without it, it runs on SQLite in --data. --replot FILE runs
nothing and writes --report (and --json) again from the JSON report of an
earlier run, complete or cut short. --resume FILE goes on with a run cut short,
on the same --database and --data, from the last checkpoint of its JSON
report (the works stored after that checkpoint are skipped as already
ingested); the new report keeps the earlier checkpoints.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			// the engine ingests in this process as shelfmark ingest does
			setup.TuneGC(os.Getenv, setup.MachineMemory)
			if err := setup.ApplyEnv(cmd.Flags()); err != nil {
				return err
			}
			if replot != "" {
				return replotScale(cmd.OutOrStdout(), replot, lf.jsonPath, lf.reportDir)
			}
			if fileBytes != "unique" && fileBytes != "shared" {
				return fmt.Errorf("--file-bytes must be unique or shared, not %q", fileBytes)
			}
			if checkpoint <= 0 || works <= 0 {
				return fmt.Errorf("--objects and --checkpoint must be positive")
			}
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			var earlier *bench.Report
			if resume != "" {
				b, err := os.ReadFile(resume)
				if err != nil {
					return fmt.Errorf("--resume: %w", err)
				}
				if earlier, err = bench.ReadScaleReport(b); err != nil {
					return fmt.Errorf("--resume %s: %w", resume, err)
				}
				if data == "" {
					return fmt.Errorf("--resume needs the --data directory of the run it continues")
				}
			}
			if data == "" {
				dir, err := os.MkdirTemp("", "shelfmark-scale-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				data = dir
			}
			raw, err := scratchRawLimit(ctx, lf.database, lf.durability, batch)
			if err != nil {
				return fmt.Errorf("raw insert limit: %w", err)
			}
			store, err := setup.OpenStorage(ctx, lf.database, data, lf.durability, 0)
			if err != nil {
				return err
			}
			defer store.Close()
			ids, err := shelfmark.LoadIDCodec(ctx, store)
			if err != nil {
				return err
			}
			repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: ids})
			defer repo.Close()
			blobDir := filepath.Join(data, "blobs")
			blobs, err := blob.NewLocal(blobDir)
			if err != nil {
				return err
			}
			defer blobs.Close()
			probe, err := bench.OpenScaleProbe(lf.database, filepath.Join(data, "shelfmark.db"))
			if err != nil {
				return err
			}
			defer probe.Close()
			bar := setup.NewProgressBar(works, "works")
			stage := ""
			cfg := bench.ScaleConfig{Works: works, Checkpoint: checkpoint, Batch: batch, Workers: workers, Samples: samples,
				SharedFiles: fileBytes == "shared", Seed: 1, BlobDir: blobDir, Probe: probe, Resume: earlier,
				Progress: func(s string, done int) {
					if s != stage {
						stage = s
						bar.Describe(s)
					}
					bar.Set(done)
				},
				Checkpointed: func(r *bench.Report) error {
					r.RawLimitPerS = raw
					r.RawLimitWhat = fmt.Sprintf("plain inserts of the same rows (54 statements), %d works per durable transaction, in a scratch schema", batch)
					if raw > 0 {
						r.FractionLimit = r.RatePerS / raw
					}
					cps := bench.ScaleCheckpoints(r)
					cp := cps[len(cps)-1]
					fmt.Fprintln(os.Stderr)
					fmt.Fprintf(out, "checkpoint %d works: %.0f works/s over the last %d (%.2f + %.2f CPU s per 1,000 works: shelfmark + database); OAI view %.0f s (%.2f CPU s per 1,000), search index %.0f s (%.2f); %.0f bytes/work in the database, %.0f in the content store\n",
						cp.Works, cp.RatePerS, cp.Interval, cp.CPUPerThousand, cp.BackendCPUPerThousand, cp.ProjectSeconds, cp.ProjectCPUPerThousand, cp.IndexSeconds, cp.IndexCPUPerThousand, cp.DatabaseBytesPerWork, cp.BlobBytesPerWork)
					for _, q := range cp.Queries {
						fmt.Fprintf(out, "  %-90s p50 %7.2f ms  p99 %7.2f ms\n", q.Name, q.Latency.P50, q.Latency.P99)
					}
					if lf.reportDir != "" {
						if err := bench.WriteScaleCharts(lf.reportDir, r); err != nil {
							return err
						}
					}
					return finish(out, r, lf.jsonPath, lf.reportDir, bench.ScaleSeries(r)...)
				}}
			r, err := bench.RunScale(ctx, repo, store, blobs, cfg)
			bar.Finish()
			fmt.Fprintln(os.Stderr)
			if r != nil {
				r.Backend = store.Backend()
				fmt.Fprintf(out, "scale %s: %d works in %.1f s of ingest, %.0f works/s, flatness %.2f (last interval over first), %.0f%% of the raw insert limit (%.0f works/s); %d errors\n",
					r.Backend, r.Items, r.Seconds, r.RatePerS, r.Flatness, 100*r.FractionLimit, raw, r.Errors)
			}
			return err
		},
	}
	f := cmd.Flags()
	lf.add(f)
	f.IntVar(&works, "objects", 5000000, "patents to ingest")
	f.IntVar(&checkpoint, "checkpoint", 1000000, "works between checkpoints")
	f.IntVar(&batch, "batch", 64, "works per engine call (and per raw-limit transaction)")
	f.IntVar(&workers, "workers", 0, "ingest workers storing files (0: the number of cores)")
	f.IntVar(&samples, "samples", 200, "times each query is timed at each checkpoint")
	f.StringVar(&data, "data", "", "directory of the content store (and of the SQLite database without --database); empty: a temporary directory, removed at the end")
	f.StringVar(&fileBytes, "file-bytes", "unique", "unique: each work's XML is its own text; shared: one of 256 texts, so the content store holds 256 blobs (one files row per work either way)")
	f.StringVar(&resume, "resume", "", "go on with the run cut short whose JSON report this is, on the same --database and --data, from its last checkpoint")
	f.StringVar(&replot, "replot", "", "run nothing: write --report (charts and HTML) and --json again from this JSON report of an earlier run")
	setup.AnnotateEnv(f)
	return cmd
}

// replotScale writes the report directory (and JSON) of bench scale again
// from the JSON report of an earlier run.
func replotScale(out io.Writer, path, jsonPath, reportDir string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("--replot: %w", err)
	}
	r, err := bench.ReadScaleReport(b)
	if err != nil {
		return fmt.Errorf("--replot %s: %w", path, err)
	}
	if reportDir != "" {
		if err := bench.WriteScaleCharts(reportDir, r); err != nil {
			return err
		}
	}
	return finish(out, r, jsonPath, reportDir, bench.ScaleSeries(r)...)
}

// scratchRawLimit measures plain inserts of the same rows: on SQLite in a
// temporary directory, on PostgreSQL in a scratch schema dropped
// afterwards, so the rows do not count in the measured database's size.
func scratchRawLimit(ctx context.Context, database, durability string, batch int) (float64, error) {
	if database == "" {
		return rawLimit(ctx, database, durability, batch)
	}
	admin, err := sql.Open("pgx", database)
	if err != nil {
		return 0, err
	}
	defer admin.Close()
	schema := fmt.Sprintf("raw_scale_%d_%d", os.Getpid(), rand.IntN(1e9))
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		return 0, fmt.Errorf("scratch schema: %w", err)
	}
	defer admin.ExecContext(context.WithoutCancel(ctx), "DROP SCHEMA "+schema+" CASCADE")
	u, err := url.Parse(database)
	if err != nil {
		return 0, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return rawLimit(ctx, u.String(), durability, batch)
}
