package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark/bench"
	"github.com/shelfmark/shelfmark/ingest"
	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
)

func newBenchPatentsCommand() *cobra.Command {
	var inProcess func(*cobra.Command, []string) error
	var lf labFlags
	var works, workers, batch, shares, scanBytes, creators, rounds int
	var preservation bool
	var compareCommitters []int
	var cf benchClusterFlags
	cmd := &cobra.Command{
		Use:   "patents",
		Short: "Bulk ingest of generated patents (31–69 statements, a 4 KB XML each): rate over time",
		Long: `Ingests --objects generated patents through the bulk ingest pipeline (as
"shelfmark ingest" does): each work has 31–69 statements (mean 54), one XML
full text of about 4 KB, and about half of them a PDF and a first-page TIFF as
well. Reports works/s overall and per wall-time bucket, its flatness (last
tenth of buckets over the first tenth, flat: ≥ 0.9), and the fraction of raw
limits measured in the same run, each on a fresh store: plain inserts of the
same rows (the engine ingests --batch of these patents once while every row
it inserts is recorded, then those rows are inserted again and again with keys
of their own, --batch works per durable transaction), plain inserts of each
work's own row and statements alone (what the raw limit was before it counted
file sets, files, sources, jobs and audit entries), and plain write + fsync of
the same XML bytes, one new file each.

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
(--workers=false on serve).

With --compare-committers 1,2,4 (and --database) the patents are ingested in
this process once per committer count (RepositoryOptions.Committers: group
commits open at once, which on PostgreSQL commit batches of creates side by
side) in each of --rounds rounds, each run in a new schema with its raw insert
limit measured just before; the report gives each run's rate and the share
of the machine's CPU left idle, --json the runs, and --chart FILE.svg their
chart (with --replot A.json,B.json: the chart of earlier runs, nothing run).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// the engine ingests in this process as shelfmark ingest does
			setup.TuneGC(os.Getenv, setup.MachineMemory)
			if len(compareCommitters) > 0 {
				if err := setup.ApplyEnv(cmd.Flags()); err != nil {
					return err
				}
				if cf.replot != "" {
					runs, err := readCommittersJSON(cf.replot)
					if err != nil {
						return err
					}
					return bench.WriteCommittersSVG(cf.chart, "PostgreSQL", runs)
				}
				runs, err := benchPatentsCommitters(cmd.Context(), cmd.OutOrStdout(), lf.database, lf.durability, compareCommitters, rounds,
					bench.PatentsConfig{Works: works, Workers: workers, Batch: batch, Creators: creators, Seed: 1, ScanBytes: scanBytes})
				if lf.jsonPath != "" && len(runs) > 0 {
					if err := writeCommittersJSON(lf.jsonPath, runs); err != nil {
						return err
					}
				}
				if cf.chart != "" && len(runs) > 0 {
					if err := bench.WriteCommittersSVG(cf.chart, "PostgreSQL", runs); err != nil {
						return err
					}
				}
				return err
			}
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
		pc := bench.PatentsConfig{Works: works, Workers: workers, Batch: batch, Creators: creators, Seed: 1, ScanBytes: scanBytes}
		rawSame, rec, err := rawGroupsLimit(ctx, lf.database, lf.durability, pc)
		if err != nil {
			return fmt.Errorf("raw limit of the same rows: %w", err)
		}
		rawRows, err := rawLimit(ctx, lf.database, lf.durability, batch)
		if err != nil {
			return fmt.Errorf("raw insert limit: %w", err)
		}
		rawFiles, err := bench.RawFileLimit(e.dir, 1, 2*time.Second)
		if err != nil {
			return fmt.Errorf("raw file limit: %w", err)
		}
		bar := setup.NewProgressBar(works, "works")
		pc.Progress = func(s ingest.Stats) { bar.Set(int(s.Stored + s.Skipped + s.Failed)) }
		r, err := bench.RunPatents(ctx, e.repo, e.blobs, pc)
		bar.Finish()
		fmt.Fprintln(os.Stderr)
		if r == nil {
			return err
		}
		r.Backend = e.store.Backend()
		r.PeakRSSBytes = bench.PeakRSS(os.Getpid()) // the scenario runs in this process
		// the same rows again, into the run's own store at its final size:
		// the raw limit the last buckets are measured against
		var rawEnd, fracEnd float64
		if err == nil {
			var endErr error
			if rawEnd, endErr = bench.RawGroupLimit(ctx, e.store, rec, 3*time.Second); endErr != nil {
				return fmt.Errorf("raw limit of the same rows at the end: %w", endErr)
			}
			fracEnd = bench.LastTenthRate(r.Steps) / rawEnd
		}
		r.RawLimitPerS = rawSame
		r.RawLimitWhat = fmt.Sprintf("plain inserts of the same rows (every row the engine wrote for %d of these patents, replayed with keys of their own), %d works per durable transaction", batch, batch)
		var fracRows, fracWork, fracFiles float64
		if rawSame > 0 {
			fracRows = r.RatePerS / rawSame
		}
		if rawRows > 0 {
			fracWork = r.RatePerS / rawRows
		}
		if rawFiles > 0 {
			fracFiles = r.RatePerS / rawFiles // one XML per work: works/s against files/s
		}
		r.FractionLimit = fracRows
		r.Params["raw_work_rows_per_s"], r.Params["raw_work_rows_what"] = rawRows, fmt.Sprintf("plain inserts of each work's own row and statements only (54), %d works per durable transaction", batch)
		r.Params["fraction_of_work_rows_limit"] = fracWork
		r.Params["raw_limit_at_end_per_s"], r.Params["raw_limit_at_end_what"] = rawEnd, "the same rows inserted plainly into the run's own store once it was done"
		r.Params["last_tenth_fraction_of_limit_at_end"] = fracEnd
		r.Params["raw_file_limit_per_s"], r.Params["raw_file_limit_what"] = rawFiles, "plain write + fsync of the same XML bytes, one new file each"
		r.Params["fraction_of_file_limit"] = fracFiles
		out := cmd.OutOrStdout()
		if preservation && err == nil {
			if lf.database != "" {
				return fmt.Errorf("--preservation compares two runs on fresh SQLite stores; it does not take --database")
			}
			if err := patentsPreserved(ctx, out, lf, r, bench.PatentsConfig{Works: works, Workers: workers, Batch: batch, Seed: 1, ScanBytes: scanBytes}); err != nil {
				return err
			}
		}
		for i, s := range r.Steps {
			fmt.Fprintf(out, "bucket %2d  %8.0f works/s\n", i+1, s.RatePerS)
		}
		fmt.Fprintf(out, "patents %s: %d works in %.1f s, %.0f works/s, flatness %.2f, %.0f%% of the raw limit of the same rows on a fresh store (%.0f works/s; %.0f%% of the work rows alone, %.0f works/s), the last tenth at %.0f%% of the same rows' limit at the end (%.0f works/s), %.0f%% of the raw file limit (%.0f files/s); peak RSS %.0f MiB; %d errors\n",
			r.Backend, r.Items, r.Seconds, r.RatePerS, r.Flatness, 100*fracRows, rawSame, 100*fracWork, rawRows, 100*fracEnd, rawEnd, 100*fracFiles, rawFiles, float64(r.PeakRSSBytes)/(1<<20), r.Errors)
		if err != nil {
			return err
		}
		rateSeries := bench.Series{Name: "works stored per second, by time bucket", Unit: "works/s", XLabel: "seconds"}
		t := 0.0
		for _, s := range r.Steps {
			t += s.Seconds
			rateSeries.X, rateSeries.Y = append(rateSeries.X, t), append(rateSeries.Y, s.RatePerS)
		}
		if cf.chart != "" {
			if err := bench.WritePatentsSVG(cf.chart, r, rawSame, rawEnd); err != nil {
				return err
			}
		}
		return finish(out, r, lf.jsonPath, lf.reportDir, rateSeries)
	})
	f := cmd.Flags()
	lf.add(f)
	f.IntVar(&works, "objects", 1000000, "patents to ingest")
	f.IntVar(&workers, "workers", 0, "ingest workers storing files (0: the number of cores)")
	f.IntVar(&batch, "batch", 64, "works per engine call (and per raw-limit transaction)")
	f.IntSliceVar(&compareCommitters, "compare-committers", nil, "with --database: ingest once per committer count of this list (1,2,4) in each round, each in a new schema")
	f.IntVar(&rounds, "rounds", 2, "with --compare-committers: rounds over the counts")
	f.IntVar(&creators, "creators", 0, "engine calls of the ingest in flight at once (0: the ingest's default)")
	f.IntVar(&shares, "shares", 0, "with --servers: ingest pipelines run at once, spread over the servers (0: the largest server count), the same for every configuration")
	f.BoolVar(&preservation, "preservation", false, "ingest the same patents again into a fresh store with the preservation copy kept as serve keeps it (the preserver running beside the ingest, its default window), and report the rate against the run without it, the preserver's lag at the end and its catch-up")
	f.IntVar(&scanBytes, "scan-bytes", 0, "give each work one more file of this many bytes, unique to it (the others are small or shared, and an S3 store keeps files of at most 64 KiB in the database)")
	cf.add(f)
	setup.AnnotateEnv(f)
	return cmd
}

// patentsPreserved ingests the patents of cfg again into a fresh lab store
// while a preserver keeps its OCFL copy (as serve does), and adds to r, the
// report of the run without it, the rate with it and their ratio, the
// versions written during the ingest, the lag when the ingest ended and
// the time the preserver took to catch up after it.
func patentsPreserved(ctx context.Context, out io.Writer, lf labFlags, r *bench.Report, cfg bench.PatentsConfig) error {
	e, err := openLab(ctx, lf.database, lf.durability, lf.committers)
	if err != nil {
		return err
	}
	defer e.close()
	fsys, err := ocfl.NewDirFS(filepath.Join(e.dir, "ocfl"))
	if err != nil {
		return err
	}
	root, err := ocfl.InitRoot(ctx, fsys)
	if err != nil {
		return err
	}
	p := preserve.New(e.store, e.blobs, root, e.repo.IDs(), preserve.Options{})
	pctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(pctx) }()
	defer func() { stop(); <-done }()
	// when the preserver wrote its first version (its working time is from
	// then to the catch-up)
	firstAt := make(chan time.Time, 1)
	go func() {
		for pctx.Err() == nil {
			if p.Stats().Versions > 0 {
				firstAt <- time.Now()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	bar := setup.NewProgressBar(cfg.Works, "works, preservation on")
	cfg.Progress = func(s ingest.Stats) { bar.Set(int(s.Stored + s.Skipped + s.Failed)) }
	on, err := bench.RunPatents(ctx, e.repo, e.blobs, cfg)
	bar.Finish()
	fmt.Fprintln(os.Stderr)
	if err != nil {
		return err
	}
	during := p.Stats().Versions
	lag, err := p.Lag(ctx)
	if err != nil {
		return err
	}
	// caught up: nothing waits, and the last window has passed
	t0 := time.Now()
	for {
		l, err := p.Lag(ctx)
		if err != nil {
			return err
		}
		if l == 0 {
			break
		}
		if time.Since(t0) > 30*time.Minute {
			return fmt.Errorf("the preserver did not catch up in 30 minutes (lag %s)", l)
		}
		time.Sleep(50 * time.Millisecond)
	}
	catchUp := time.Since(t0)
	ratio := on.RatePerS / r.RatePerS
	versions := p.Stats().Versions
	var working time.Duration
	select {
	case t := <-firstAt:
		working = time.Since(t)
	default:
	}
	// the file system's limit: metadata operations a second, measured now,
	// over those each version made
	fst := fsys.Stats()
	perVersion := float64(fst.Files+fst.Dirs) / float64(max(versions, 1))
	rawOps, err := bench.RawCreateLimit(e.dir, preserve.DefaultParallel, 2*time.Second)
	if err != nil {
		return fmt.Errorf("raw create limit: %w", err)
	}
	rate := float64(versions) / max(working.Seconds(), 1e-9)
	limit := rawOps / max(perVersion, 1)
	r.Params["preservation_versions_per_s"], r.Params["preservation_fs_ops_per_version"] = rate, perVersion
	r.Params["raw_create_limit_ops_per_s"], r.Params["preservation_versions_limit_per_s"] = rawOps, limit
	fmt.Fprintf(out, "preserver: %.0f versions/s while it worked; %.1f files and directories made per version; the file system makes %.0f a second (8 writers, no fsync), a limit of %.0f versions/s: the preserver at %.0f%% of it\n",
		rate, perVersion, rawOps, limit, 100*rate/limit)
	r.Params["preservation_on_works_per_s"], r.Params["preservation_ratio"] = on.RatePerS, ratio
	r.Params["preservation_versions_during_ingest"], r.Params["preservation_lag_at_end_s"], r.Params["preservation_catch_up_s"] = during, lag.Seconds(), catchUp.Seconds()
	fmt.Fprintf(out, "preservation on: %.0f works/s, %.2f× the run without it (%.0f works/s); %d versions written during the ingest; lag when it ended %.1f s, caught up %.1f s later (%d versions in all)\n",
		on.RatePerS, ratio, r.RatePerS, during, lag.Seconds(), catchUp.Seconds(), p.Stats().Versions)
	return nil
}
