package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench"
	"github.com/shelfmark/shelfmark/internal/setup"
)

func newBenchSoakCommand() *cobra.Command {
	var (
		database, durability, jsonPath, reportDir string
		minutes                                   float64
		warmup, sample, storm                     time.Duration
		stormConns, stormAddrs                    int
		writers, readers, harvesters, uploadEvery int
		triples, seedWorks                        int
		readRate, harvestRate                     float64
		pause                                     []string
		admissionOff                              bool
	)
	cmd := &cobra.Command{
		Use:   "soak",
		Short: "A mixed load held for --minutes with a crawler storm in its middle: writers, readers, a harvester; drift, memory, disk and job backlog over time",
		Long: `Starts "shelfmark serve" as a separate process on a free loopback port with a
fresh data directory (SQLite, or --database for PostgreSQL), with its job
workers, trusting 127.0.0.1 as a proxy (--trusted-proxy), and holds a mixed
load on it for --minutes:

  --writers     create works over the REST API (JSON, --triples statements),
                with a real file for every --upload-every-th work (scanned
                page images, PNG, whose words OCR reads back; every fourth a
                PDF), so derivative, OCR and text jobs exist;
  --readers     loop GET JSON, GET Turtle, a page of a collection's members
                and a search, each --read-rate requests a second (0: as
                fast as the server answers);
  --harvesters  loop full OAI-PMH ListRecords (oai_dc) harvests, each
                --harvest-rate pages a second (0: as fast as it answers);
  --storm       a crawler storm in the middle of the run, for that long (0:
                10m when --minutes is 30 or more, else a third of the run):
                --storm-conns anonymous connections (0: no storm) from
                --storm-addrs addresses (X-Forwarded-For 10.9.x.y) asking
                for searches, prefix searches, facets and search inside a
                work with a page image, again at once whatever the answer
                (as shelfmark-bench storm does).

Every --sample it prints one line: the write rate, read latency p50/p99, the
harvest page p99, errors, the server's RSS (VmRSS), the data directory's
database, WAL and blobs, and the backlog (queued and running) of each job
queue, marking the samples the storm touched. At the end: the readers'
latency and errors and the writers' rate outside the storm and during it, what
the storm got back (answers by status, Retry-After, timeouts), the write
rate's drift (the least-squares line's rate at the end over its rate at the
start, through the samples after --warmup that the storm did not touch;
beside it the last tenth of those samples over the first, with the noise of
one tenth), RSS growth after the warm-up (the median over the last tenth
over the median over the first), the largest WAL, and each backlog's trend
in jobs per minute. --report draws them over time, the storm's window
named in each chart's title and charted.
It talks only to the server it started, on 127.0.0.1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := setup.ApplyEnv(cmd.Flags()); err != nil {
				return err
			}
			if minutes <= 0 {
				return errors.New("--minutes must be positive")
			}
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			backend := "sqlite"
			if database != "" {
				backend = "postgres"
			}
			dir, err := os.MkdirTemp("", "shelfmark-soak-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			// the raw limit of the same rows on the same storage, before the run
			store, err := setup.OpenStorage(ctx, database, filepath.Join(dir, "raw"), durability, 0)
			if err != nil {
				return err
			}
			rawLimit, err := bench.RawInsertLimit(ctx, store, triples, 256, 3*time.Second)
			store.Close()
			if err != nil {
				return fmt.Errorf("raw limit: %w", err)
			}
			os.RemoveAll(filepath.Join(dir, "raw"))
			fmt.Fprintf(out, "raw limit (same rows, no HTTP/engine, 256 per transaction): %.0f works/s\n", rawLimit)
			data := filepath.Join(dir, "data")
			// an admin's token, made as the system before the server opens the
			// store, then one for each client, each of a user of its own
			tokens, err := benchTokens(ctx, database, data, durability, 1+writers+readers+harvesters)
			if err != nil {
				return err
			}
			token := tokens[0]
			if seedWorks > 0 {
				if err := soakSeed(ctx, out, database, data, durability, seedWorks, triples); err != nil {
					return err
				}
			}
			duration := time.Duration(minutes * float64(time.Minute))
			if stormConns == 0 {
				storm = 0
			} else if storm == 0 {
				storm = soakStormDefault(duration)
			}
			addr, err := freeAddr()
			if err != nil {
				return err
			}
			srv, base, err := runServer(ctx, []string{"serve", "--trusted-proxy", "127.0.0.1"}, addr, data, database, durability, admissionEnv(admissionOff))
			if err != nil {
				return err
			}
			defer stopServer(srv)
			res, err := bench.RunSoak(ctx, bench.SoakConfig{Base: base, Token: token, Tokens: tokens[1:], PID: srv.Process.Pid, DataDir: data,
				Duration: duration, Warmup: warmup, Sample: sample,
				Writers: writers, Readers: readers, Harvesters: harvesters, ReadRate: readRate, HarvestRate: harvestRate, UploadEvery: uploadEvery, Triples: triples, Pause: pause, Seed: 1,
				Storm: storm, StormConns: stormConns, StormAddrs: stormAddrs,
				Progress: func(s bench.SoakSample) { fmt.Fprintln(out, soakLine(s, backend)) }})
			if err != nil {
				return err
			}
			rep := res.Report
			rep.Backend = backend
			rep.RawLimitPerS = rawLimit
			rep.RawLimitWhat = "plain inserts of the same rows through the same driver, 256 works per durable transaction"
			if rawLimit > 0 {
				// the steps leave the raw limit out: drawn beside a mixed
				// load's write rate it would flatten its chart
				rep.FractionLimit = rep.RatePerS / rawLimit
			}
			last := res.Samples[len(res.Samples)-1]
			printSoakStorm(out, res)
			fmt.Fprintf(out, "soak %s: %d works (%d with a file) in %.1f min, %.0f works/s (%.0f%% of the raw limit); drift %.2f (%s); reads p50 %.2f ms p99 %.2f ms; %d harvested records (%d full harvests); %d errors\n",
				backend, rep.Items, res.Uploads, rep.Seconds/60, rep.RatePerS, 100*rep.FractionLimit, res.Trend, soakDriftNote(res),
				rep.LatencyMS.P50, rep.LatencyMS.P99, res.HarvestRecords, res.Harvests, rep.Errors)
			fmt.Fprintf(out, "memory: RSS median %s over the first tenth after the warm-up, %s over the last (%.2f×); %s at the end of the warm-up, %s at the end, peak %s; disk: WAL at most %s, at the end database %s, WAL %s, blobs %s\n",
				mib(res.RSSFirst), mib(res.RSSLast), res.RSSGrowth, mib(res.Samples[max(0, res.Warmup-1)].RSS), mib(last.RSS), mib(rep.PeakRSSBytes),
				mib(res.WALMax), mib(last.DBBytes), mib(last.WALBytes), mib(last.BlobBytes))
			if a, b := res.CPUFirst, res.CPULast; a.Busy > 0 {
				fmt.Fprintf(out, "cpu, first tenth → last tenth: machine busy %.0f%% → %.0f%% of its cores (stolen %.1f%% → %.1f%%); server %.2f → %.2f cores; its tools (OCR, derivatives) %.2f → %.2f cores, %.2f → %.2f s a file uploaded; load generator %.2f → %.2f cores\n",
					100*a.Busy, 100*b.Busy, 100*a.Steal, 100*b.Steal, a.Server, b.Server, a.Tools, b.Tools, a.ToolsPerUpload, b.ToolsPerUpload, a.Bench, b.Bench)
			}
			var trend []string
			for _, q := range shelfmark.Queues {
				if v, ok := res.BacklogSlope[q]; ok {
					trend = append(trend, fmt.Sprintf("%s %+.0f/min (%d at the end)", q, v, last.Backlog[q]))
				}
			}
			fmt.Fprintf(out, "backlog trend after the warm-up: %s\n", strings.Join(trend, ", "))
			if res.Paced > 0 {
				fmt.Fprintf(out, "back-pressure: %d uploads refused with 503 and Retry-After while a queue was over its backlog limit, sent again after %.0f s of waiting in all (%.0f%% of the writers' time)\n",
					res.Paced, res.PacedSeconds, 100*res.PacedSeconds/(float64(writers)*rep.Seconds))
			}
			// the HTML page lists the parameters; the samples go to the JSON only
			if err := finish(out, rep, "", reportDir, res.Series()...); err != nil {
				return err
			}
			rep.Params["samples"] = res.Samples
			return finish(out, rep, jsonPath, "")
		},
	}
	f := cmd.Flags()
	f.Float64Var(&minutes, "minutes", 10, "how long the load runs")
	f.BoolVar(&admissionOff, "admission-off", false, "run the server with its admission of requests off")
	f.DurationVar(&warmup, "warmup", 0, "start of the run left out of drift and growth (0: a tenth of it)")
	f.DurationVar(&sample, "sample", 5*time.Second, "time between samples (and progress lines)")
	f.IntVar(&writers, "writers", 4, "clients creating works")
	f.IntVar(&readers, "readers", 2, "clients reading (JSON, Turtle, members, search)")
	f.IntVar(&harvesters, "harvesters", 1, "clients looping full OAI-PMH harvests")
	f.Float64Var(&readRate, "read-rate", 0, "requests a second of each reader (0: as fast as the server answers)")
	f.Float64Var(&harvestRate, "harvest-rate", 0, "pages a second of each harvester (0: as fast as the server answers)")
	f.IntVar(&uploadEvery, "upload-every", 5, "upload a file (a page image, every fourth a PDF) with every n-th work (-1: none)")
	f.DurationVar(&storm, "storm", 0, "how long the crawler storm in the middle of the run lasts (0: 10m when --minutes is 30 or more, else a third of the run)")
	f.IntVar(&stormConns, "storm-conns", 64, "the storm's connections (0: no storm)")
	f.IntVar(&stormAddrs, "storm-addrs", 50, "the client addresses (X-Forwarded-For) the storm's connections come from")
	f.IntVar(&triples, "triples", 54, "statements per work")
	f.IntVar(&seedWorks, "seed-works", 20000, "works stored before the server starts (metadata only, public), so that the run starts on a repository in service, its database larger than the server's caches (0: an empty one)")
	f.StringSliceVar(&pause, "pause", nil, "job queues to pause for the whole run, for example derive (to weigh what derivatives cost the foreground against a run without it)")
	f.StringVar(&database, "database", "", "PostgreSQL URL for the started server (empty: SQLite in the fresh data directory)")
	f.StringVar(&durability, "durability", "safe", "safe or relaxed (see serve --help)")
	f.StringVar(&jsonPath, "json", "", "write the report as JSON to this file")
	f.StringVar(&reportDir, "report", "", "write an HTML report with charts to this directory")
	setup.AnnotateEnv(f)
	return cmd
}

// soakLine is the progress line of one sample.
func soakLine(s bench.SoakSample, backend string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%7s  %6.0f works/s  reads p50 %6.2f ms p99 %7.2f ms  search p99 %7.2f ms  harvest p99 %7.2f ms  errors %d  RSS %s",
		time.Duration(s.At*float64(time.Second)).Round(time.Second), s.WritesPerS, s.ReadMS.P50, s.ReadMS.P99, s.SearchP99MS, s.HarvestP99MS, s.Errors, mib(s.RSS))
	if backend == "sqlite" {
		fmt.Fprintf(&b, "  db %s wal %s", mib(s.DBBytes), mib(s.WALBytes))
	}
	fmt.Fprintf(&b, "  blobs %s  backlog", mib(s.BlobBytes))

	queues := slices.Sorted(maps.Keys(s.Backlog))
	slices.SortStableFunc(queues, func(a, b string) int { return slices.Index(shelfmark.Queues, a) - slices.Index(shelfmark.Queues, b) })
	for _, q := range queues {
		fmt.Fprintf(&b, " %s %d", q, s.Backlog[q])
	}
	if s.Storm {
		b.WriteString("  STORM")
	}
	return b.String()
}

// mib formats bytes in MiB.
func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// soakStormDefault is the storm's length when --storm is not given: 10
// minutes in a run of 30 minutes or more, else a third of the run.
func soakStormDefault(run time.Duration) time.Duration {
	if run >= 30*time.Minute {
		return 10 * time.Minute
	}
	return (run / 3).Round(time.Second)
}

// printSoakStorm writes the storm's lines: what it got back, and the
// readers and writers outside it and during it.
func printSoakStorm(out io.Writer, res *bench.SoakResult) {
	st := res.Storm
	if st == nil {
		return
	}
	c := st.Counts
	ra := "n/a (none refused)"
	if c.Refused() > 0 {
		ra = "yes"
		if c.NoRetryAfter > 0 {
			ra = fmt.Sprintf("no, %d without", c.NoRetryAfter)
		}
	}
	book := "a work with a page image " + st.Book
	if st.Book == "" {
		book = "no work with a page image yet: searches instead"
	}
	fmt.Fprintf(out, "crawler storm %s–%s: %d connections from %d addresses, %.0f answers/s (%.0f ok/s): 200 %d, 429 %d, 503 %d, other %d, timeouts %d, connection errors %d; Retry-After on every 429/503: %s; search inside %s\n",
		fmtSecs(st.From), fmtSecs(st.To), c.Conns, c.Addrs, c.RatePerS, c.OKPerS, c.OK, c.TooMany, c.Unavailable, c.Other, c.Timeouts, c.ConnErrors, ra, book)
	for _, side := range []struct {
		name string
		s    bench.SoakSide
	}{{"outside the storm", st.Outside}, {"during the storm ", st.During}} {
		fmt.Fprintf(out, "  %s: readers %d reads p50 %.2f ms p95 %.2f ms p99 %.2f ms max %.2f ms, %d read errors; writers %.0f works/s (%d works in %s)\n",
			side.name, side.s.Reads, side.s.ReadMS.P50, side.s.ReadMS.P95, side.s.ReadMS.P99, side.s.ReadMS.Max, side.s.ReadErrors, side.s.WritesPerS, side.s.Works, fmtSecs(side.s.Seconds))
	}
}

// soakDriftNote says what the drift is (the trend of the samples after
// the warm-up that the storm did not touch) and gives the two tenths
// beside it with the noise of one tenth.
func soakDriftNote(res *bench.SoakResult) string {
	note := "the straight-line trend of the write rate over the samples after the warm-up"
	if res.Storm != nil {
		note += fmt.Sprintf(" that the storm (%s–%s) did not touch", fmtSecs(res.Storm.From), fmtSecs(res.Storm.To))
	}
	if res.TrendSE > 0 {
		note += fmt.Sprintf(", ±%.2f (one standard error, from the tenths' scatter about the line)", res.TrendSE)
	}
	note += fmt.Sprintf("; the last tenth of them, %s–%s, over the first, %s–%s: %.2f",
		fmtSecs(res.DriftLast[0]), fmtSecs(res.DriftLast[1]), fmtSecs(res.DriftFirst[0]), fmtSecs(res.DriftFirst[1]), res.Drift)
	if res.TenthsSpread > 0 { // 0: too few samples to tell
		note += fmt.Sprintf(", with one tenth's noise ±%.0f%%", 100*res.TenthsSpread)
	}
	return note
}

// fmtSecs formats seconds since the start as a rounded duration.
func fmtSecs(s float64) string {
	return time.Duration(s * float64(time.Second)).Round(time.Second).String()
}

// soakSeed stores n works in the store the soak's server is about to open
// (bench.SeedWorks), as the system, saying how fast.
func soakSeed(ctx context.Context, out io.Writer, database, data, durability string, n, triples int) error {
	repo, closeRepo, err := openBenchRepo(ctx, database, data, durability)
	if err != nil {
		return err
	}
	defer closeRepo()
	start := time.Now()
	if err := bench.SeedWorks(ctx, repo, n, triples, 1, nil); err != nil {
		return err
	}
	fmt.Fprintf(out, "seeded %d works (metadata only) before the start in %.1f s\n", n, time.Since(start).Seconds())
	return nil
}
