package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/internal/setup"
)

// labEnv is a fresh repository for an in-process scenario: SQLite in a
// temporary directory, or the given PostgreSQL database.
type labEnv struct {
	dir   string
	store shelfmark.Storage
	repo  *shelfmark.Repository
	blobs *blob.LocalStore
}

// openLab opens a fresh lab repository; committers is
// RepositoryOptions.Committers (0: the store's default).
func openLab(ctx context.Context, database, durability string, committers int) (*labEnv, error) {
	return openLabTuned(ctx, database, durability, committers, setup.StoreTuning{})
}

// openLabTuned opens a fresh lab repository as openLab does, tuned as t
// says.
func openLabTuned(ctx context.Context, database, durability string, committers int, t setup.StoreTuning) (*labEnv, error) {
	dir, err := os.MkdirTemp("", "shelfmark-bench-")
	if err != nil {
		return nil, err
	}
	store, err := setup.OpenStorageTuned(ctx, database, filepath.Join(dir, "data"), durability, 0, t)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	ids, err := shelfmark.LoadIDCodec(ctx, store)
	if err != nil {
		store.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	blobs, err := blob.NewLocal(filepath.Join(dir, "data", "blobs"))
	if err != nil {
		store.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	return &labEnv{dir: dir, store: store, repo: shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: ids, Committers: committers,
		WebMergeLinks: t.WebMergeLinks}), blobs: blobs}, nil
}

func (e *labEnv) close() {
	e.repo.Close()
	e.blobs.Close()
	e.store.Close()
	os.RemoveAll(e.dir)
}

// labFlags are the settings every in-process scenario takes.
type labFlags struct {
	database, durability, jsonPath, reportDir string
	committers                                int
	// tuning is what a scenario's store is opened with beyond the
	// defaults: the scenario sets it to what the command it measures
	// opens the store with.
	tuning setup.StoreTuning
}

// add registers the flags.
func (lf *labFlags) add(f *pflag.FlagSet) {
	f.StringVar(&lf.database, "database", "", "PostgreSQL URL (empty: SQLite in a temporary directory)")
	f.StringVar(&lf.durability, "durability", "safe", "safe or relaxed")
	f.StringVar(&lf.reportDir, "report", "", "write an HTML report with charts to this directory")
	f.StringVar(&lf.jsonPath, "json", "", "write the report as JSON to this file")
	f.IntVar(&lf.committers, "committers", 0, "group commits open at once (0: the store's default, 1 on SQLite, one per two cores on PostgreSQL, whose batches of creates commit side by side)")
}

// run returns a RunE that reads the environment, opens a fresh lab store
// (or --database) and closes it after fn.
func (lf *labFlags) run(fn func(ctx context.Context, cmd *cobra.Command, e *labEnv) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, _ []string) error {
		if err := setup.ApplyEnv(cmd.Flags()); err != nil {
			return err
		}
		ctx := cmd.Context()
		// as the scenario's report states it
		lf.tuning = lf.tuning.For(lf.database)
		e, err := openLabTuned(ctx, lf.database, lf.durability, lf.committers, lf.tuning)
		if err != nil {
			return err
		}
		defer e.close()
		return fn(ctx, cmd, e)
	}
}

// finish writes the JSON and HTML reports asked for.
func finish(out io.Writer, rep *bench.Report, jsonPath, reportDir string, extra ...bench.Series) error {
	if jsonPath != "" {
		if err := rep.WriteJSON(jsonPath); err != nil {
			return err
		}
	}
	if reportDir != "" {
		if err := rep.WriteHTML(reportDir, extra...); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
		fmt.Fprintf(out, "report: %s\n", filepath.Join(reportDir, "index.html"))
	}
	return nil
}

func newBenchBookCommand() *cobra.Command {
	var lf labFlags
	var pages, pageBytes int
	cmd := &cobra.Command{
		Use:   "book",
		Short: "One book of 1,200 page images: files first, then order, then edit one field",
		Long: `Stores a work's pages one by one (bytes to the content store, a file set and a
file each), orders all of them in one request, then edits one field of the
book. Reports the cost of the last 100 pages over the first 100 (flat: ≤ 1.1),
the time to order (≤ 50 ms) and to edit one field (≤ 5 ms), against a plain
write + fsync of one page's bytes.`,
		Args: cobra.NoArgs,
		RunE: lf.run(func(ctx context.Context, cmd *cobra.Command, e *labEnv) error {
			res, err := bench.RunBook(ctx, e.repo, e.blobs, bench.BookConfig{Pages: pages, PageBytes: pageBytes, Seed: 1, OCFLDir: filepath.Join(e.dir, "ocfl")})
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for i, s := range res.Report.Steps {
				fmt.Fprintf(out, "pages %4d–%4d  %6.2f ms/page\n", i*100+1, i*100+int(s.Items), s.Seconds*1000/float64(s.Items))
			}
			r := res.Report
			r.Backend = e.store.Backend()
			fmt.Fprintf(out, "book %s: %d pages, %.2f ms/page (last 100 / first 100 = %.2f), order %.1f ms, edit one field p50 %.2f ms p99 %.2f ms; raw write+fsync %.2f ms/page (%.0f%% of it)\n",
				r.Backend, r.Items, 1000/r.RatePerS, res.FirstLast, res.OrderMS, res.EditMS.P50, res.EditMS.P99, res.RawWriteMS, 100*r.FractionLimit)
			if n := len(res.OCFLBytes); n > 1 {
				fmt.Fprintf(out, "preservation copy: version 1 (the stored, ordered book) wrote %d bytes; one edit of one field wrote %d bytes as version 2, %d bytes as version %d (the inventory lists every version's state)\n",
					res.OCFLBytes[0], res.OCFLBytes[1], res.OCFLBytes[n-1], n)
			}
			pageSeries := bench.Series{Name: "time to store each page", Unit: "ms", XLabel: "page"}
			for i, v := range res.PageMS {
				pageSeries.X, pageSeries.Y = append(pageSeries.X, float64(i+1)), append(pageSeries.Y, v)
			}
			r.PeakRSSBytes = bench.PeakRSS(os.Getpid()) // the scenario runs in this process
			return finish(out, r, lf.jsonPath, lf.reportDir, pageSeries)
		}),
	}
	f := cmd.Flags()
	lf.add(f)
	f.IntVar(&pages, "pages", 1200, "pages in the book")
	f.IntVar(&pageBytes, "page-bytes", 64<<10, "bytes per page image")
	setup.AnnotateEnv(f)
	return cmd
}

func newBenchCollectionCommand() *cobra.Command {
	var lf labFlags
	var works, batch int
	cmd := &cobra.Command{
		Use:   "collection",
		Short: "Many works into one collection: cost per work over time, members page 1 vs deep",
		Long: `Adds --objects works (54 statements each) to one collection in batches through
the engine, reporting the rate per time bucket and its flatness (last tenth over
first tenth, flat: ≥ 0.9), then times a page of 100 members at the start and at
90% depth (≤ 1.2× page 1). The raw limit is plain inserts of the same rows.`,
		Args: cobra.NoArgs,
		RunE: lf.run(func(ctx context.Context, cmd *cobra.Command, e *labEnv) error {
			raw, err := rawLimit(ctx, lf.database, lf.durability, batch)
			if err != nil {
				return err
			}
			bar := setup.NewProgressBar(works, "works")
			res, err := bench.RunCollection(ctx, e.repo, bench.CollectionConfig{Works: works, Batch: batch, Seed: 1,
				Progress: func(done int) { bar.Set(done) }})
			bar.Finish()
			fmt.Fprintln(os.Stderr)
			if err != nil {
				return err
			}
			r := res.Report
			r.RawLimitPerS, r.RawLimitWhat = raw, fmt.Sprintf("plain inserts of the same rows, %d works per durable transaction", batch)
			if raw > 0 {
				r.FractionLimit = r.RatePerS / raw
			}
			out := cmd.OutOrStdout()
			for i, s := range r.Steps {
				fmt.Fprintf(out, "bucket %2d  %8.0f works/s\n", i+1, s.RatePerS)
			}
			fmt.Fprintf(out, "collection %s: %d works in %.1f s, %.0f works/s, flatness %.2f, %.0f%% of the raw limit (%.0f/s); members page 1 p50 %.2f ms, at 90%% depth p50 %.2f ms (%.2f×)\n",
				r.Backend, r.Items, r.Seconds, r.RatePerS, r.Flatness, 100*r.FractionLimit, raw, res.FirstPageMS.P50, res.DeepPageMS.P50, res.DeepOverTop)
			rateSeries := bench.Series{Name: "works stored per second, by time bucket", Unit: "works/s", XLabel: "seconds"}
			t := 0.0
			for _, s := range r.Steps {
				t += s.Seconds
				rateSeries.X, rateSeries.Y = append(rateSeries.X, t), append(rateSeries.Y, s.RatePerS)
			}
			r.PeakRSSBytes = bench.PeakRSS(os.Getpid()) // the scenario runs in this process
			return finish(out, r, lf.jsonPath, lf.reportDir, rateSeries)
		}),
	}
	f := cmd.Flags()
	lf.add(f)
	f.IntVar(&works, "objects", 1000000, "works to add to the collection")
	f.IntVar(&batch, "batch", 500, "works per group commit call")
	setup.AnnotateEnv(f)
	return cmd
}

// rawLimit measures plain inserts of the same rows on a fresh store.
func rawLimit(ctx context.Context, database, durability string, batch int) (float64, error) {
	dir, err := os.MkdirTemp("", "shelfmark-raw-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	store, err := setup.OpenStorage(ctx, database, dir, durability, 0)
	if err != nil {
		return 0, err
	}
	defer store.Close()
	return bench.RawInsertLimit(ctx, store, 54, batch, 3*time.Second)
}

// rawPatentsFirst is the number of the first patent whose rows the raw
// limit of the same rows records: past any run's, so that on a shared
// PostgreSQL database the recorded patents never stand for a run's own.
const rawPatentsFirst = 900_000_000

// rawGroupsLimit measures plain inserts of the rows the engine writes for
// pc.Batch patents, on a fresh store (bench.RawGroupLimit): it ingests them
// once through a bench.RowRecorder, then replays those rows, one durable
// transaction of pc.Batch works at a time, for 3 s. It returns the
// recorder too, whose rows can be replayed into another store.
func rawGroupsLimit(ctx context.Context, database, durability string, pc bench.PatentsConfig) (float64, *bench.RowRecorder, error) {
	e, err := openLab(ctx, database, durability, 0)
	if err != nil {
		return 0, nil, err
	}
	defer e.close()
	rec := bench.NewRowRecorder(e.store)
	repo := shelfmark.NewRepository(rec, shelfmark.RepositoryOptions{IDs: e.repo.IDs()})
	pc.Works, pc.First, pc.Progress = pc.Batch, rawPatentsFirst, nil
	r, err := bench.RunPatents(ctx, repo, e.blobs, pc)
	repo.Close()
	if err != nil {
		return 0, nil, fmt.Errorf("record the rows of %d patents: %w", pc.Works, err)
	}
	if r.Errors > 0 {
		return 0, nil, fmt.Errorf("record the rows of %d patents: %d failed", pc.Works, r.Errors)
	}
	rate, err := bench.RawGroupLimit(ctx, e.store, rec, 3*time.Second)
	return rate, rec, err
}
