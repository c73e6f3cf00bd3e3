package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/internal/setup"
)

func newBenchStormCommand() *cobra.Command {
	var (
		database, durability, jsonPath, reportDir string
		cfg                                       bench.StormRunConfig
		works, pages                              int
		admissionOff                              bool
	)
	cmd := &cobra.Command{
		Use:   "storm",
		Short: "A reader's pages while crawlers storm the search: its latency quiet and under 64 and 256 abusive connections from 1 and 50 addresses",
		Long: `Stores an archive (--works works in a collection, and a book of --pages page
images with OCR text, so that search inside the book answers), then starts
"shelfmark serve --trusted-proxy 127.0.0.1" as a separate process on a free
loopback port with a fresh data directory (SQLite, or --database for
PostgreSQL, in a schema of its own) and runs phases of --phase each:

  quiet         --readers alone: each one connection from an address of its
                own (X-Forwarded-For 192.0.2.10 and on, none of the storm's
                addresses), looping over a work page, the collection's page
                and a search page with --reader-pause between two, as people
                read;
  storms        for each of --storm-conns × --storm-addrs: that many abusive
                connections from that many addresses (X-Forwarded-For
                10.9.x.y, which the server takes as the client since it
                trusts 127.0.0.1 as a proxy), asking in turn for random
                searches, prefix searches (a*), facet filters and browsing,
                and search inside the book (IIIF Content Search 1 and 2), all
                valid requests; answered 429 or 503 they ask again at once
                (--honour-retry-after: they wait as Retry-After says); they
                send a browser's User-Agent unless --storm-agent;
  quiet again   the readers alone once more.

Each storm runs for --onset before its phase begins: its connections open
and its first requests arrive at once, a moment of its own, whose reader
requests (count, errors, slowest) are printed on a line of their own and
left out of the phase's percentiles; their errors count to the goals.
Phases are --settle apart, unmeasured. The readers together ask for a few
pages a second, so a phase holds few of each (the table gives their
number): with a short --phase the p99 is close to the slowest, and a
longer --phase (or more --readers) gives finer percentiles. For each phase it prints the reader's
p50/p95/p99/max per page and its errors (anything but a 200 with HTML), the
storm's answers per second and its counts by status (200, 429, 503, other,
timeouts and connection errors), whether every 429/503 carried Retry-After,
and the server's largest RSS (VmRSS, sampled every 200 ms). Then the goals:
under every storm the reader's p99 ≤ 2× the quiet phase's and ≤ 50 ms, no
reader errors, abusers refused with 429/503 and Retry-After rather than left
to time out, and the largest RSS under the storms ≤ 2× the quiet one.
It talks only to the server it started, on 127.0.0.1.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := setup.ApplyEnv(cmd.Flags()); err != nil {
				return err
			}
			if works <= 0 || pages <= 0 {
				return errors.New("--works and --pages must be positive")
			}
			if _, err := serverBinary(); err != nil {
				return err
			}
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			backend := "sqlite"
			dsn := ""
			if database != "" {
				backend = "postgres"
				env, err := openBenchClusterEnv(ctx, nil, database)
				if err != nil {
					return err
				}
				defer env.close()
				var drop func()
				if dsn, _, drop, err = env.schema(ctx, "storm"); err != nil {
					return err
				}
				defer drop()
			}
			dir, err := os.MkdirTemp("", "shelfmark-storm-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			data := filepath.Join(dir, "data")
			archive, err := stormLoad(ctx, dsn, data, durability, works, pages)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "stored %d works and a %d-page book with OCR text in one collection, indexed for search\n", len(archive.Works), archive.BookPages)
			addr, err := freeAddr()
			if err != nil {
				return err
			}
			srv, base, err := runServer(ctx, []string{"serve", "--trusted-proxy", "127.0.0.1"}, addr, data, dsn, durability, admissionEnv(admissionOff))
			if err != nil {
				return err
			}
			defer stopServer(srv)
			cfg.Base, cfg.PID, cfg.Archive, cfg.Seed = base, srv.Process.Pid, archive, 1
			cfg.Progress = func(ph bench.StormPhase) { printStormPhase(out, ph) }
			fmt.Fprintf(out, "%-34s %-16s %8s %8s %8s %8s %8s %7s\n", "phase", "reader's page", "requests", "p50 ms", "p95 ms", "p99 ms", "max ms", "errors")
			res, err := bench.RunStorm(ctx, cfg)
			if err != nil {
				return err
			}
			rep := res.Report
			rep.Backend = backend
			printStormGoals(out, backend, res)
			return finish(out, rep, jsonPath, reportDir, res.Series()...)
		},
	}
	f := cmd.Flags()
	f.IntVar(&works, "works", 20, "works in the archive's collection")
	f.IntVar(&pages, "pages", 40, "pages of the book with OCR text")
	f.DurationVar(&cfg.Phase, "phase", 20*time.Second, "how long each phase lasts (longer, by at most the reader timeout a page, until the readers asked for each kind of page in it)")
	f.BoolVar(&admissionOff, "admission-off", false, "run the server with its admission of requests off (to see the storm without it)")
	f.DurationVar(&cfg.Settle, "settle", time.Second, "unmeasured pause between phases")
	f.DurationVar(&cfg.Onset, "onset", time.Second, "how long each storm runs before its phase begins, its readers' requests reported apart (0: none)")
	f.DurationVar(&cfg.ReaderPause, "reader-pause", time.Second, "each reader's pause between two pages (a person reads; without a pause a reader itself may pass the server's share of searches per client)")
	f.IntVar(&cfg.Readers, "readers", 4, "readers reading at once, each over a connection and from an address of its own")
	f.IntSliceVar(&cfg.Conns, "storm-conns", []int{64, 256}, "abusive connections of each storm")
	f.IntSliceVar(&cfg.Addrs, "storm-addrs", []int{1, 50}, "client addresses (X-Forwarded-For) the storm's connections come from")
	f.BoolVar(&cfg.HonourRetryAfter, "honour-retry-after", false, "storm connections answered 429/503 wait as Retry-After says (default: they ask again at once)")
	f.DurationVar(&cfg.StormTimeout, "storm-timeout", 10*time.Second, "a storm request not answered by then counts as a timeout")
	f.StringVar(&cfg.StormAgent, "storm-agent", bench.StormBrowserAgent, "the storm's User-Agent (the default passes for a browser; a crawler's, such as Googlebot/2.1, lets the server treat it as a robot)")
	f.StringVar(&database, "database", "", "PostgreSQL URL for the started server, which runs in a new schema of it (empty: SQLite in the fresh data directory)")
	f.StringVar(&durability, "durability", "safe", "safe or relaxed (see serve --help)")
	f.StringVar(&jsonPath, "json", "", "write the report as JSON to this file")
	f.StringVar(&reportDir, "report", "", "write an HTML report with charts to this directory")
	setup.AnnotateEnv(f)
	return cmd
}

// stormLoad stores the storm's archive in the store the server will open
// (database, or SQLite under data) and its content store, then closes
// them.
func stormLoad(ctx context.Context, database, data, durability string, works, pages int) (*bench.StormArchive, error) {
	store, err := setup.OpenStorage(ctx, database, data, durability, 0)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	ids, err := shelfmark.LoadIDCodec(ctx, store)
	if err != nil {
		return nil, err
	}
	blobs, err := blob.NewLocal(filepath.Join(data, "blobs"))
	if err != nil {
		return nil, err
	}
	defer blobs.Close()
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: ids})
	defer repo.Close()
	return bench.LoadStormArchive(ctx, repo, blobs, works, pages, 1)
}

// printStormPhase writes a phase's lines: the reader's pages, then the
// storm's answers and the server's memory.
func printStormPhase(out io.Writer, ph bench.StormPhase) {
	for k, pg := range ph.Reader {
		name := ""
		if k == 0 {
			name = ph.Name
		}
		fmt.Fprintf(out, "%-34s %-16s %8d %8.1f %8.1f %8.1f %8.1f %7d\n", name, pg.Name, pg.Requests, pg.Latency.P50, pg.Latency.P95, pg.Latency.P99, pg.Latency.Max, pg.Errors)
		if pg.FirstError != "" {
			fmt.Fprintf(out, "%-34s   first error: %s\n", "", pg.FirstError)
		}
		if sl := pg.Slowest; sl != nil && sl.Timed && sl.MS >= 2*max(pg.Latency.P95, 1) {
			fmt.Fprintf(out, "%-34s   slowest %.1f ms, sent %.1f s into the phase: admission wait %.1f ms, handler %.1f ms, outside the handler %.1f ms\n", "", sl.MS, sl.At, sl.AdmitMS, sl.AppMS, sl.Outside())
		}
	}
	mem := fmt.Sprintf("server RSS max %.0f MiB", float64(ph.RSSMax)/(1<<20))
	if s := ph.Storm; s != nil {
		ra := "n/a (none refused)"
		if s.Refused() > 0 {
			ra = "yes"
			if s.NoRetryAfter > 0 {
				ra = fmt.Sprintf("no, %d without", s.NoRetryAfter)
			}
		}
		other := ""
		if len(s.OtherCodes) > 0 {
			other = fmt.Sprintf(" %v", s.OtherCodes)
		}
		if o := ph.Onset; o != nil {
			slowest := "none answered"
			if sl := o.Slowest; sl != nil {
				slowest = fmt.Sprintf("slowest %.1f ms, sent %.1f s into it", sl.MS, sl.At)
				if sl.Timed {
					slowest += fmt.Sprintf(" (admission wait %.1f ms, handler %.1f ms, outside the handler %.1f ms)", sl.AdmitMS, sl.AppMS, sl.Outside())
				}
			}
			fmt.Fprintf(out, "%-34s onset (the storm's first %.1f s, before the phase): %d reader requests, %s, %d errors\n", "", o.Seconds, o.Requests, slowest, o.Errors)
			if o.FirstError != "" {
				fmt.Fprintf(out, "%-34s   first onset error: %s\n", "", o.FirstError)
			}
		}
		fmt.Fprintf(out, "%-34s storm %.0f answers/s (%.0f ok/s): 200 %d, 429 %d, 503 %d, other %d%s, timeouts %d, connection errors %d; Retry-After on every 429/503: %s; %s\n",
			"", s.RatePerS, s.OKPerS, s.OK, s.TooMany, s.Unavailable, s.Other, other, s.Timeouts, s.ConnErrors, ra, mem)
		if s.FirstError != "" {
			fmt.Fprintf(out, "%-34s   first storm error: %s\n", "", s.FirstError)
		}
	} else {
		fmt.Fprintf(out, "%-34s no storm; %s\n", "", mem)
	}
}

// printStormGoals writes the goal lines and the one-line summary.
func printStormGoals(out io.Writer, backend string, res *bench.StormResult) {
	met := 0
	for _, g := range res.Goals {
		mark := "MISSED"
		if g.Met {
			mark, met = "met", met+1
		}
		fmt.Fprintf(out, "goal %-6s %s: %s (goal %s)\n", mark, g.Name, g.Value, g.Goal)
	}
	quiet := res.Phases[0]
	var worst []string
	for _, ph := range res.Phases[1 : len(res.Phases)-1] {
		p99 := 0.0
		for _, pg := range ph.Reader {
			p99 = max(p99, pg.Latency.P99)
		}
		worst = append(worst, fmt.Sprintf("%s %.1f ms (%.0f answers/s, %d refused)", strings.TrimPrefix(ph.Name, "storm "), p99, ph.Storm.RatePerS, ph.Storm.Refused()))
	}
	qp99 := 0.0
	for _, pg := range quiet.Reader {
		qp99 = max(qp99, pg.Latency.P99)
	}
	fmt.Fprintf(out, "storm %s: reader p99 (worst page) quiet %.1f ms; under %s; %d reader errors; %d of %d goals met\n",
		backend, qp99, strings.Join(worst, ", "), res.Report.Errors, met, len(res.Goals))
}
