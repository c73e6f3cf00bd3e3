package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark/bench"
	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/worker"
)

func newBenchIIIFCommand() *cobra.Command {
	var lf labFlags
	var cfg bench.IIIFConfig
	var derive, scan string
	cmd := &cobra.Command{
		Use:   "iiif",
		Short: "IIIF: a directory of 1,200 page images to a ready book, pyramids against vips alone, tiles and composed regions to 16 viewers, the book's manifest",
		Long: `Plum's whole job, then the IIIF services of its result, on a fresh repository:

 1. Writes a directory of --pages page images and ingests it as one work, as
    "shelfmark ingest DIR" does, with serve's job runner working in this
    process (every queue, serve's limits; OCR deferred while the process is
    busy), until the book's manifest (/iiif/{id}/manifest, read over HTTP as
    an anonymous viewer) lists every page painted from its image service:
    seconds and pages/s, with the pages stored and derived over time. Run once
    per derive concurrency in --derive (default: the queue's default for this
    machine, one job per core), each with pages of its own.
 2. Pyramids: pages derived (thumbnail, access copy, tile archive) per second
    from the book's commit to its last derive job, against "vips dzsave" alone
    with the same flags on the same images, as many at once; the disk the
    first book's derivatives take per page, and its originals'.
 3. Tiles: --viewers concurrent anonymous viewers ask for random tiles of
    random pages of --books books over HTTP on a loopback port (the books
    after the first are works of their own with pages of their own whose files
    are the first book's, the same blobs: every request finds and checks its
    own page). Tiles/s, the viewers' latency and the server time (the
    handler's start to its return) against the raw limit: the same byte
    ranges read (pread) from the archives' blob files by as many readers, in
    the same run. Every answer is checked (200, image/jpeg, the tile's size).
 4. Regions: as many viewers ask for --regions random regions (64 pixels to
    half the page on each side, off the tile grid) of random pages of the
    books at random sizes (64 to 800 pixels wide) as JPEG: images the level 2
    service composes from the pyramids' tiles, not stored ones. Regions/s,
    the viewers' latency (p99 beside the tiles') and the server time; and a
    tenth as many other regions asked by one viewer at a time (the cost of
    one, without waiting for the cores). Every answer is checked (200,
    image/jpeg).
 5. The first book's manifest, one request at a time: as a signed-in caller
    (never served from the cache) and anonymously (cached), gzipped as
    browsers ask and uncompressed; server time and the client's time.

Goals: Plum's job ≤ 60 s for 1,200 pages on 2 cores; tiles p99 ≤ 20 ms;
arbitrary regions p99 ≤ 50 ms; manifest of a 1,200-page book ≤ 20 ms
uncached, ≤ 2 ms cached.`,
		Args: cobra.NoArgs,
		RunE: lf.run(func(ctx context.Context, cmd *cobra.Command, e *labEnv) error {
			var err error
			if cfg.Derive, err = parseDerive(derive); err != nil {
				return err
			}
			if scan != "" {
				w, h, ok := strings.Cut(scan, "x")
				cfg.ScanWidth, _ = strconv.Atoi(w)
				cfg.ScanHeight, _ = strconv.Atoi(h)
				if !ok || cfg.ScanWidth <= 0 || cfg.ScanHeight <= 0 || cfg.ScanWidth*cfg.ScanHeight > 100_000_000 {
					return fmt.Errorf("--scan %q: want WIDTHxHEIGHT in pixels, such as 2480x3508 (A4 at 300 dpi)", scan)
				}
			}
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			tools := setup.PipelineTools(log)
			if tools.Vips == "" {
				return fmt.Errorf("vips is not installed (apt-get install libvips-tools): the derive job makes no tiles without it")
			}
			cfg.Vips = tools.Vips
			cfg.NewRunner = func(conc int, obs worker.Observer) (bench.JobRunner, error) {
				c := setup.DefaultWorkerConfig(map[string]int{"derive": conc})
				return setup.NewRunner(e.repo, e.blobs, c, nil, obs, log)
			}
			cfg.Seed = 1
			var bars stageBars
			cfg.Progress = bars.progress
			res, err := bench.RunIIIF(ctx, e.repo, e.store, e.blobs, cfg)
			bars.finish()
			if err != nil {
				return err
			}
			r := res.Report
			r.PeakRSSBytes = bench.PeakRSS(os.Getpid()) // the scenario runs in this process
			out := cmd.OutOrStdout()
			printIIIF(out, res)
			var series []bench.Series
			for _, run := range res.Runs {
				stored := bench.Series{Name: fmt.Sprintf("pages stored, derive concurrency %d", run.DeriveConcurrency), Unit: "pages"}
				tiled := bench.Series{Name: fmt.Sprintf("pages derived (tiles ready), derive concurrency %d", run.DeriveConcurrency), Unit: "pages"}
				for _, p := range run.Stored {
					stored.X, stored.Y = append(stored.X, p[0]), append(stored.Y, p[1])
				}
				for _, p := range run.Tiled {
					tiled.X, tiled.Y = append(tiled.X, p[0]), append(tiled.Y, p[1])
				}
				series = append(series, stored, tiled)
			}
			pct := func(name string, l bench.Latency) bench.Series {
				return bench.Series{Name: name + ": p50, p95, p99, max", Unit: "ms", XLabel: "percentile", X: []float64{50, 95, 99, 100}, Y: []float64{l.P50, l.P95, l.P99, l.Max}}
			}
			series = append(series, pct("tiles over HTTP, as the viewers saw them", res.Tiles.LatencyMS), pct("tiles, server time", res.TilesServer),
				pct("the same bytes read from disk (pread)", res.Raw.LatencyMS),
				pct("regions composed, as the viewers saw them", res.Regions.LatencyMS), pct("regions composed, server time", res.RegionsServer),
				pct("regions composed, one viewer at a time", res.RegionsAlone.LatencyMS))
			for _, m := range res.Manifests {
				series = append(series, pct("manifest, "+m.Name+", server time", m.Server))
			}
			return finish(out, r, lf.jsonPath, lf.reportDir, series...)
		}),
	}
	f := cmd.Flags()
	lf.add(f)
	f.IntVar(&cfg.Pages, "pages", 1200, "page images of the book")
	f.IntVar(&cfg.Books, "books", 10, "books the viewers read (the first ingested, the others sharing its files)")
	f.IntVar(&cfg.Viewers, "viewers", 16, "viewers asking for tiles at once")
	f.IntVar(&cfg.Requests, "requests", 20000, "tile requests timed (and as many raw reads)")
	f.IntVar(&cfg.Regions, "regions", 5000, "requests for random regions at random sizes timed (composed from the pyramids)")
	f.DurationVar(&cfg.Duration, "duration", time.Minute, "at most this long for the timed tile requests (and for the raw reads)")
	f.IntVar(&cfg.ManifestRequests, "manifest-requests", 200, "manifest requests timed, signed in and anonymous each")
	f.IntVar(&cfg.VipsPages, "vips-pages", 200, "pages vips alone cuts, per derive concurrency")
	f.DurationVar(&cfg.Timeout, "timeout", 30*time.Minute, "give up on a book not ready after this long")
	f.StringVar(&derive, "derive", "", `derive queue concurrencies, one run of Plum's job each, e.g. "1,2" (default: the derive queue's, one per core)`)
	f.StringVar(&scan, "scan", "", "page images as colour JPEG scans of WIDTHxHEIGHT pixels (e.g. 2480x3508) instead of 1000×1400 bilevel PNG pages with words")
	setup.AnnotateEnv(f)
	return cmd
}

// parseDerive reads --derive: a list of concurrencies, or "" for the
// default.
func parseDerive(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 || n > 4*runtime.NumCPU() {
			return nil, fmt.Errorf("--derive: %q is not a list of concurrencies from 1 to %d", s, 4*runtime.NumCPU())
		}
		out = append(out, n)
	}
	return out, nil
}

// printIIIF writes the scenario's figures and the one-line summary.
func printIIIF(out io.Writer, res *bench.IIIFResult) {
	r := res.Report
	for _, run := range res.Runs {
		vips := "not measured"
		if run.VipsAlonePerS > 0 {
			vips = fmt.Sprintf("%.1f pages/s (%d pages; the pyramids at %.2f× of it)", run.VipsAlonePerS, run.VipsPages, run.PyramidOverVips)
		}
		fmt.Fprintf(out, "Plum's job, derive concurrency %d: %d pages ready in %.1f s (%.1f pages/s); stored at %.1f s, last page derived at %.1f s; pyramids %.1f pages/s (a derive job p50 %.0f ms, p99 %.0f ms), vips dzsave alone %s; %d derive failures, %d OCR jobs done meanwhile (%d left, dropped)\n",
			run.DeriveConcurrency, run.Pages, run.Seconds, run.PagesPerS, run.IngestSeconds, run.TiledSeconds, run.PyramidPerS, run.DeriveJobMS.P50, run.DeriveJobMS.P99, vips, run.DeriveFailed, run.OCRDone, run.OCRDropped)
	}
	d := res.Disk
	kib := func(b float64) float64 { return b / 1024 }
	fmt.Fprintf(out, "disk per page: original %.1f KiB; derivatives %.1f KiB (thumbnail %.1f, access copy %.1f, tiles %.1f in %.1f tiles, OCR %.1f over %d pages read)\n",
		kib(d.Original), kib(d.Derivatives), kib(d.Thumbnail), kib(d.Access), kib(d.Tiles), d.TilesPerPage, kib(d.OCR), d.OCRPages)
	fmt.Fprintf(out, "tiles over HTTP: %d in %.1f s, %.0f tiles/s, p50 %.2f ms p99 %.2f ms max %.2f ms (server time p50 %.2f ms p99 %.2f ms); raw pread %.0f tiles/s p50 %.3f ms p99 %.3f ms; %d errors\n",
		res.Tiles.Items, res.Tiles.Seconds, res.Tiles.RatePerS, res.Tiles.LatencyMS.P50, res.Tiles.LatencyMS.P99, res.Tiles.LatencyMS.Max,
		res.TilesServer.P50, res.TilesServer.P99, res.Raw.RatePerS, res.Raw.LatencyMS.P50, res.Raw.LatencyMS.P99, res.TileErrors)
	if res.FirstError != "" {
		fmt.Fprintf(out, "  first wrong tile: %s\n", res.FirstError)
	}
	fmt.Fprintf(out, "regions composed over HTTP: %d in %.1f s, %.0f regions/s, p50 %.2f ms p99 %.2f ms max %.2f ms (server time p50 %.2f ms p99 %.2f ms), beside tiles p99 %.2f ms; %d errors\n",
		res.Regions.Items, res.Regions.Seconds, res.Regions.RatePerS, res.Regions.LatencyMS.P50, res.Regions.LatencyMS.P99, res.Regions.LatencyMS.Max,
		res.RegionsServer.P50, res.RegionsServer.P99, res.Tiles.LatencyMS.P99, res.RegionErrors)
	fmt.Fprintf(out, "regions composed, one viewer at a time: %d, p50 %.2f ms p99 %.2f ms max %.2f ms\n",
		res.RegionsAlone.Items, res.RegionsAlone.LatencyMS.P50, res.RegionsAlone.LatencyMS.P99, res.RegionsAlone.LatencyMS.Max)
	if res.FirstRegionError != "" {
		fmt.Fprintf(out, "  first wrong region: %s\n", res.FirstRegionError)
	}
	for _, m := range res.Manifests {
		fmt.Fprintf(out, "manifest (%d pages, %d bytes), %-36s server time p50 %7.2f ms p99 %7.2f ms; client p50 %7.2f ms p99 %7.2f ms; %d errors\n",
			r.Params["pages"], m.Bytes, m.Name+":", m.Server.P50, m.Server.P99, m.Client.P50, m.Client.P99, m.Errors)
		if f := m.Floor; f != nil && f.P50 > 0 && m.Server.P50 > 0 {
			fmt.Fprintf(out, "  the floor, fixed work of %.2f ms (two goroutines hashing) after each request: p50 %.2f ms p99 %.2f ms, p99/p50 %.2f (the build's %.2f)\n",
				m.FloorTargetMS, f.P50, f.P99, f.P99/f.P50, m.Server.P99/m.Server.P50)
		}
	}
	manifest := func(i int) float64 {
		if i < len(res.Manifests) {
			return res.Manifests[i].Server.P99
		}
		return 0
	}
	plum := "—"
	if len(res.Runs) > 0 {
		var parts []string
		for _, run := range res.Runs {
			parts = append(parts, fmt.Sprintf("%.1f s (derive %d)", run.Seconds, run.DeriveConcurrency))
		}
		plum = strings.Join(parts, ", ")
	}
	floor := ""
	if len(res.Manifests) > 0 && res.Manifests[0].Floor != nil {
		floor = fmt.Sprintf(" (the floor's %.2f ms)", res.Manifests[0].Floor.P99)
	}
	fmt.Fprintf(out, "iiif %s: %v pages: ready in %s; tiles %.0f/s p99 %.2f ms (%.2f%% of the raw reads' %.0f/s); regions %.0f/s p99 %.2f ms; manifest server time p99 %.2f ms uncached%s, %.2f ms cached (gzip); %d errors; peak RSS %.0f MiB\n",
		r.Backend, r.Params["pages"], plum, r.RatePerS, r.LatencyMS.P99, 100*r.FractionLimit, r.RawLimitPerS, res.Regions.RatePerS, res.Regions.LatencyMS.P99,
		manifest(0), floor, manifest(1), r.Errors, float64(r.PeakRSSBytes)/(1<<20))
}
