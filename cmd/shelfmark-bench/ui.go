package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark/bench"
	"github.com/shelfmark/shelfmark/internal/setup"
)

func newBenchUICommand() *cobra.Command {
	var lf labFlags
	var cfg bench.UIConfig
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Server time of the web interface's pages: a 1,200-page book, a collection at 90% depth, search over many works",
		Long: `Stores a book of --pages pages (a work with that many ordered file sets of one
file each) and a collection of --members works whose titles and descriptions
hold one word common to all of them ("` + bench.SearchCommonWord + `") and rare words (each in
about 10 works), indexes them for search, then serves the real HTTP server on a
loopback port and asks for pages one at a time, as an anonymous reader:

  the book's work page                  /works/{id}
  the collection's first page           /collections/{id}
  the collection's page at 90% depth    /collections/{id}?after=CURSOR
  the search page of the common word    /search?q=` + bench.SearchCommonWord + `
  the search page of a rare word        /search?q=WORD
  a word on every page of the book      /search?q=harbour
  the common word, signed in            /search?q=` + bench.SearchCommonWord + ` (a viewer of the collection)

Search pages group hits by work, as the interface does: the book is one
hit, its 1,200 pages its matches. Then the cost of counting uses: the same
reader asks for the work page of two servers over the same repository, one
counting uses by COUNTER's rules while 1,000 other views a second are
recorded beside it and flushed every 2 s, one counting nothing, in
alternating 2-second slices (--usage-seconds each); the goal is at least
0.95 of the pages a second.

The cursor at 90% depth is found by walking the members list through the
same keyset listing the API and the pages use. Each page is asked --requests
times, in rounds of one request of each page after --warmup rounds, and each
answer is checked (200, HTML, the expected work or members in it).

Server time is measured inside the server: a wrapper around its handler
times each request from the handler's start to its return (rendering, gzip
and writing into the connection included; the client's reading excluded).
Goals: work and collection pages p99 ≤ 30 ms, the deep collection page ≤ 1.2×
its first page, search pages p99 ≤ 100 ms. The raw limit is the same reads
straight on the engine, in process, without HTTP or rendering, measured in
the same rounds. A page this build does not have is reported as not
available, and nothing is timed for it.`,
		Args: cobra.NoArgs,
		RunE: lf.run(func(ctx context.Context, cmd *cobra.Command, e *labEnv) error {
			var bars stageBars
			cfg.Seed = 1
			cfg.Progress = bars.progress
			res, err := bench.RunUI(ctx, e.repo, e.store, e.blobs, cfg)
			bars.finish()
			if err != nil {
				return err
			}
			r := res.Report
			r.PeakRSSBytes = bench.PeakRSS(os.Getpid()) // the scenario runs in this process
			out := cmd.OutOrStdout()
			printUI(out, res)
			var series []bench.Series
			for _, p := range res.Pages {
				if p.Available {
					series = append(series, bench.Series{Name: p.Name + ": server time p50, p95, p99, max", Unit: "ms", XLabel: "percentile",
						X: []float64{50, 95, 99, 100}, Y: []float64{p.Server.P50, p.Server.P95, p.Server.P99, p.Server.Max}})
				}
			}
			return finish(out, r, lf.jsonPath, lf.reportDir, series...)
		}),
	}
	f := cmd.Flags()
	lf.add(f)
	f.IntVar(&cfg.Pages, "pages", 1200, "pages of the book")
	f.IntVar(&cfg.Members, "members", 1000000, "works in the collection, all of them searchable")
	f.IntVar(&cfg.Requests, "requests", 300, "timed requests of each page")
	f.IntVar(&cfg.Warmup, "warmup", 20, "rounds (one request of each page) before the timed ones")
	f.IntVar(&cfg.PageSize, "page-size", 50, "members or children the raw reads take per page (what the pages show)")
	f.IntVar(&cfg.UsageSeconds, "usage-seconds", 20, "seconds the reader asks each of two servers, counting uses (1,000 other views a second) and not; -1 leaves it out")
	setup.AnnotateEnv(f)
	return cmd
}

// printUI writes the table of pages and the one-line summary.
func printUI(out io.Writer, res *bench.UIResult) {
	r := res.Report
	fmt.Fprintf(out, "stored %v members at %.0f/s; indexed them at %.0f/s\n", r.Params["members"], res.FillPerS, res.IndexPerS)
	fmt.Fprintf(out, "%-45s %8s %8s %8s %8s %8s %8s %9s %8s %7s\n", "page (server time, ms)", "p50", "p95", "p99", "max", "cpu p50", "cpu p99", "raw p50", "bytes", "errors")
	for _, p := range res.Pages {
		if !p.Available {
			fmt.Fprintf(out, "%-45s %s; raw p50 %.3f ms\n", p.Name, p.Unavailable, p.Raw.P50)
			continue
		}
		fmt.Fprintf(out, "%-45s %8.2f %8.2f %8.2f %8.2f %8.2f %8.2f %9.3f %8d %7d\n", p.Name, p.Server.P50, p.Server.P95, p.Server.P99, p.Server.Max,
			p.CPU.P50, p.CPU.P99, p.Raw.P50, p.Bytes, p.Errors)
		if p.FirstError != "" {
			fmt.Fprintf(out, "  first wrong answer: %s\n", p.FirstError)
		}
	}
	pg := func(i int) string {
		p := res.Pages[i]
		if !p.Available {
			return "not available"
		}
		return fmt.Sprintf("p99 %.2f ms", p.Server.P99)
	}
	deep := "not available"
	if res.DeepOverFirstP50 > 0 {
		deep = fmt.Sprintf("%.2f× at p50, %.2f× at p99", res.DeepOverFirstP50, res.DeepOverFirstP99)
	}
	staff := "not available"
	if res.StaffOverAnonymousP50 > 0 {
		staff = fmt.Sprintf("%s, %.2f× the anonymous one at p50, %.2f× at p99", pg(bench.UISearchStaff), res.StaffOverAnonymousP50, res.StaffOverAnonymousP99)
	}
	fmt.Fprintf(out, "ui %s: %v members, server time: work page (%v pages) %s; collection page 1 %s, at 90%% depth %s (deep/first %s); search common word %s, rare word %s; a signed-in reader's search of the common word %s; %.0f pages/s of server time, %.0f%% of the raw reads' %.0f/s; %d errors; peak RSS %.0f MiB\n",
		r.Backend, r.Params["members"], r.Params["pages"], pg(bench.UIWork), pg(bench.UICollectionFirst), pg(bench.UICollectionDeep), deep,
		pg(bench.UISearchCommon), pg(bench.UISearchRare), staff, r.RatePerS, 100*r.FractionLimit, r.RawLimitPerS, r.Errors, float64(r.PeakRSSBytes)/(1<<20))
	fmt.Fprintf(out, "search, a word on every page of the book (grouped under the one work): %s\n", pg(bench.UISearchBook))
	if u := res.Usage; u != nil {
		fmt.Fprintf(out, "counting uses (%d other views/s recorded, flushed every %v): the work page %.0f/s counted against %.0f/s not, %.3f× (goal ≥ 0.95), %d slices of each, %d flushes taking %.2f s, %d errors\n",
			bench.UIUsageRate, bench.UIUsageFlush, u.CountedPerS, u.PlainPerS, u.Ratio, u.Slices, u.Flushes, u.FlushSeconds, u.Errors)
	}
}
