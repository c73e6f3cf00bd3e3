package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
	shttp "github.com/shelfmark/shelfmark/http"
	"github.com/shelfmark/shelfmark/ingest"
	"github.com/shelfmark/shelfmark/internal/setup"
)

func newIngestCommand() *cobra.Command {
	var (
		data, database, durability, collection, server, token, crawl string
		writeCache                                                   string
		workers, batch, merge                                        int
		rate                                                         float64
		failFast, storeAnyway                                        bool
		content                                                      setup.BlobFlags
	)
	cmd := &cobra.Command{
		Use:   "ingest PATH...",
		Short: "Load a directory tree, a BagIt bag (or a directory of bags), a CSV manifest, MARC records or web archives (WARC)",
		Long: `Load works in bulk into the repository that "serve" uses (--data / --database),
or into a running server over its REST API (--server URL):

  shelfmark ingest DIR        one work per folder with files; files in natural order
                              (page_2 before page_10); metadata.json or metadata.ttl beside them
  shelfmark ingest BAG        a BagIt 1.0 bag, verified (manifests, Payload-Oxum) before storing;
                              a bag of shelfmark export comes back as the work it was (metadata,
                              access, file sets in order), keyed by its old id
  shelfmark ingest BAGS       a directory whose subdirectories are bags
  shelfmark ingest FILE.csv   a CSV manifest, one row per work or per file
  shelfmark ingest FILE.mrc   MARC 21 records, ISO 2709 in MARC-8 or UTF-8 (also .marc, .dat, .iso)
  shelfmark ingest FILE.xml   MARC 21 records in MARCXML
                              one work per record: Dublin Core by the Library of Congress
                              crosswalk, and the record itself kept (OAI-PMH marcxml)
  shelfmark ingest FILE.warc.gz [FILE...]   web archives (WARC 1.0/1.1, .warc, .warc.gz,
                              and Common Crawl WAT files .wat, .wat.gz), or a directory of them:
                              each file one work of a crawl collection (--crawl NAME, default the
                              directory's or first file's name), kept as it came; every record
                              indexed (URL, time, type, status, digest, offset) and the links of
                              HTML pages and WAT records added to the link index

Files are stored first, then each work with its file sets, files and order in
one step, so a work is stored whole or not at all. Every item has a stable
source key: a re-run after a crash or Ctrl-C skips what is stored and finishes
the rest. Bad items are reported with their reason and skipped (--fail-fast
stops instead); the command exits non-zero if any item failed.

Source keys tell different inputs apart, so that nothing is skipped that was
not stored: a folder by its absolute path and its files' names and sizes; a
bag by its name and its manifests; a CSV row by its source_identifier, or
without one by the manifest's path, its cells and its files' sizes; a MARC
record by its 003 and 001, or without a 001 by its content. Each item skipped
as stored before is listed with the work it was stored as. --store-anyway
stores those as new works beside them: the source key keeps naming the work
stored first, and a work stored anyway is recorded by its content, so a
re-run with --store-anyway does not store it twice. Works stored by earlier
versions under their keys (then the path relative to the root, the bag's
name, the row number) are recognised when their files and metadata are the
same.

With --server http://host:8080 nothing is opened locally: each file's bytes
are sent to the server (checked against the digests the source states), then
each work with its file sets, files and order in one request that the server
stores whole or not at all under the item's source key. Re-runs skip the
items the server holds, as they do locally. The server takes a token with
the right to write (--token, or SHELFMARK_TOKEN; see shelfmark token create).`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			setup.TuneGC(os.Getenv, setup.MachineMemory)
			// the local store's flags given on the command line, before
			// the environment fills in the rest
			var local []string
			for _, name := range []string{"data", "database", "durability", "storage", "write-cache"} {
				if cmd.Flags().Changed(name) {
					local = append(local, "--"+name)
				}
			}
			if err := setup.ApplyEnv(cmd.Flags()); err != nil {
				return err
			}
			ctx := cmd.Context()
			var cache int64
			if writeCache != "" {
				n, err := setup.ParseSize(writeCache)
				if err != nil || n <= 0 {
					return fmt.Errorf("--write-cache %q: give a size such as 512MiB or 2GiB", writeCache)
				}
				cache = n
			}
			if isWARCInput(args) {
				if server != "" {
					return fmt.Errorf("--server: web archives are ingested into the local store only (--data / --database)")
				}
				n := 0
				if cmd.Flags().Changed("batch") {
					n = batch
				}
				if cache == 0 {
					cache = ingest.WARCWriteCache
				}
				return ingestWARC(cmd, args, warcFlags{data: data, database: database, durability: durability, content: content,
					collection: collection, crawl: crawl, batch: n, merge: merge, rate: rate, writeCache: cache})
			}
			if len(args) > 1 {
				return fmt.Errorf("ingest takes one PATH, or several WARC files")
			}
			src, kind, err := openSource(args[0])
			if err != nil {
				return err
			}
			defer src.Close()
			var repo ingest.Repository
			var blobs shelfmark.BlobStore
			if server != "" {
				if len(local) > 0 {
					return fmt.Errorf("%s and --server exclude each other: with --server, the server keeps the data", strings.Join(local, ", "))
				}
				client, err := shttp.NewClient(server, shttp.ClientOptions{Token: token})
				if err != nil {
					return fmt.Errorf("--server: %w", err)
				}
				if err := client.Ready(ctx); err != nil {
					return err
				}
				repo, blobs = client, client
			} else {
				engine, lb, closeLocal, err := openLocal(ctx, database, data, durability, content, setup.StoreTuning{WriteCache: cache})
				if err != nil {
					return err
				}
				defer closeLocal()
				repo, blobs = engine, lb
			}
			bar := setup.NewProgressBar(-1, "items")
			if c, ok := src.(ingest.Counter); ok {
				// count ahead in the background: the bar gains a total and
				// an ETA once the count is in, without delaying the start
				cctx, stop := context.WithCancel(ctx)
				defer stop()
				go func() {
					if n, err := c.Count(cctx); err == nil && n > 0 {
						bar.ChangeMax64(n)
					}
				}()
			}
			start := time.Now()
			st, runErr := ingest.Run(ctx, repo, blobs, src, ingest.Options{
				Collection: shelfmark.ID(collection), Workers: workers, Rate: rate, Batch: batch, FailFast: failFast, StoreAnyway: storeAnyway,
				Progress: func(s ingest.Stats) {
					bar.Describe(fmt.Sprintf("items (%d stored, %d skipped, %d failed, %.1f MiB)", s.Stored, s.Skipped, s.Failed, float64(s.Bytes)/(1<<20)))
					bar.Set64(s.Stored + s.Skipped + s.Failed)
				}})
			bar.Finish()
			fmt.Fprintln(os.Stderr)
			out := cmd.OutOrStdout()
			secs := time.Since(start).Seconds()
			fmt.Fprintf(out, "ingest %s %s: %d stored, %d skipped (stored before), %d failed; %d files, %.1f MiB in %.1f s (%.0f items/s)\n",
				kind, args[0], st.Stored, st.Skipped, st.Failed, st.Files, float64(st.Bytes)/(1<<20), secs, float64(st.Stored)/max(secs, 1e-9))
			for _, f := range st.Failures {
				if f.Row > 0 && !strings.HasSuffix(f.Key, fmt.Sprintf(":row-%d", f.Row)) {
					fmt.Fprintf(out, "  failed %s (row %d): %s\n", f.Key, f.Row, f.Reason)
				} else {
					fmt.Fprintf(out, "  failed %s: %s\n", f.Key, f.Reason)
				}
			}
			printSkips(out, st, server)
			if runErr != nil {
				return runErr
			}
			if st.Failed > 0 {
				return fmt.Errorf("%d items failed", st.Failed)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "shelfmark-data", "directory of the SQLite database and the content store (as for serve)")
	f.StringVar(&database, "database", "", "PostgreSQL URL; empty means SQLite in --data")
	f.StringVar(&durability, "durability", "safe", "safe or relaxed (see serve --help)")
	f.StringVar(&server, "server", "", "URL of a running Shelfmark server to ingest into over its REST API (instead of --data / --database)")
	f.StringVar(&token, "token", "", "API token sent to --server (Authorization: Bearer); see shelfmark token create")
	f.StringVar(&collection, "collection", "", "put every work in this collection (its id)")
	f.IntVar(&workers, "workers", 0, "files stored in parallel (0: the number of cores)")
	f.IntVar(&batch, "batch", 64, "items handed to the engine per call")
	f.Float64Var(&rate, "rate", 0, "at most this many items per second (0: no limit)")
	f.BoolVar(&failFast, "fail-fast", false, "stop at the first bad item")
	f.BoolVar(&storeAnyway, "store-anyway", false, "store the items stored before as new works beside the works stored before (each listed by a run without it)")
	f.IntVar(&merge, "merge", 16, "web archives: how many batches of records (--batch, default 1,000 for WARC) waiting for the database one transaction may take")
	f.StringVar(&writeCache, "write-cache", "", "SQLite: the most memory the database writer's page cache holds, such as 512MiB (default: 1GiB for web archives, whose link index changes keys spread over large tables; 64MiB for the rest); it fills only as the database grows")
	content.Register(f)
	f.StringVar(&crawl, "crawl", "", "web archives: the crawl collection's name (made on first use; default: the directory's or first file's name)")
	setup.AnnotateEnv(f)
	return cmd
}

// printSkips lists the items skipped as stored before (the first
// ingest.MaxSkips), each with the work it was stored as and, with a
// server, that work's page; and says how to store them anyway.
func printSkips(out io.Writer, st *ingest.Stats, server string) {
	if st.Anyway > 0 {
		fmt.Fprintf(out, "  %d of the items stored had been stored before: stored anyway, as new works\n", st.Anyway)
	}
	anyway := false
	for _, s := range st.Skips {
		what := "stored before as"
		if s.Anyway {
			what, anyway = "stored anyway before as", true
		} else if s.Former {
			what = "stored before (under its former key) as"
		}
		where := ""
		if s.Row > 0 {
			where = fmt.Sprintf(" (row %d)", s.Row)
		}
		switch {
		case s.ID == "":
			fmt.Fprintf(out, "  skipped %s%s: %s a work you may not see\n", s.Key, where, what)
		case server != "":
			fmt.Fprintf(out, "  skipped %s%s: %s %s (%s/works/%s)\n", s.Key, where, what, s.ID, strings.TrimRight(server, "/"), s.ID)
		default:
			fmt.Fprintf(out, "  skipped %s%s: %s %s\n", s.Key, where, what, s.ID)
		}
	}
	if more := st.Skipped - int64(len(st.Skips)); more > 0 {
		fmt.Fprintf(out, "  and %d more skipped as stored before\n", more)
	}
	if st.Skipped > 0 && !anyway {
		fmt.Fprintln(out, "  (--store-anyway stores the items stored before as new works beside them)")
	}
}

// openSource picks the reader for what path is.
func openSource(path string) (ingest.Source, string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, "", fmt.Errorf("ingest: %w", err)
	}
	if !fi.IsDir() {
		if strings.EqualFold(filepath.Ext(path), ".csv") {
			src, err := ingest.OpenCSV(path)
			return src, "csv", err
		}
		if ingest.IsMARCFile(path) {
			src, err := ingest.OpenMARC(path)
			return src, "MARC file", err
		}
		return nil, "", fmt.Errorf("ingest: %s is a file but neither a .csv manifest nor a MARC file (.mrc, .marc, .dat, .iso, .xml)", path)
	}
	if _, err := os.Stat(filepath.Join(path, "bagit.txt")); err == nil {
		src, err := ingest.OpenBag(path)
		return src, "bag", err
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, "", fmt.Errorf("ingest: %w", err)
	}
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(path, e.Name(), "bagit.txt")); err == nil {
				src, err := ingest.OpenBags(path)
				return src, "bags", err
			}
		}
	}
	src, err := ingest.OpenDir(path)
	return src, "directory", err
}
