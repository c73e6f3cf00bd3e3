package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ingest"
	"github.com/shelfmark/shelfmark/internal/setup"
)

// warcFlags are the ingest flags a WARC ingest uses.
type warcFlags struct {
	data, database, durability, collection, crawl string
	content                                       setup.BlobFlags
	batch, merge                                  int
	rate                                          float64
	writeCache                                    int64 // bytes of SQLite's write connection's page cache
}

// openLocal opens the store, the content store and the engine that serve
// uses (--database / --data), tuned as t says for SQLite; close releases
// all three.
func openLocal(ctx context.Context, database, data, durability string, content setup.BlobFlags, t setup.StoreTuning) (*shelfmark.Repository, setup.ContentStore, func(), error) {
	t = t.For(database)
	store, err := setup.OpenStorageTuned(ctx, database, data, durability, 0, t)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("open database: %w", err)
	}
	lb, err := setup.OpenBlobs(ctx, content, data, store)
	if err != nil {
		store.Close()
		return nil, nil, nil, err
	}
	ids, err := shelfmark.LoadIDCodec(ctx, store)
	if err != nil {
		lb.Close()
		store.Close()
		return nil, nil, nil, err
	}
	engine := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: ids, WebMergeLinks: t.WebMergeLinks})
	return engine, lb, func() {
		engine.Close()
		lb.Close()
		store.Close()
	}, nil
}

// isWARCInput reports whether args name WARC files, or one directory
// holding WARC files and no bag.
func isWARCInput(args []string) bool {
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil {
			return false
		}
		if fi.IsDir() {
			if len(args) > 1 {
				return false
			}
			if _, err := os.Stat(filepath.Join(a, "bagit.txt")); err == nil {
				return false
			}
			fs, err := ingest.WARCFiles(a)
			return err == nil && len(fs) > 0
		}
		if !ingest.IsWARC(a) {
			return false
		}
	}
	return true
}

// ingestWARC stores and indexes web archives into the local store.
func ingestWARC(cmd *cobra.Command, args []string, fl warcFlags) error {
	ctx := cmd.Context()
	engine, lb, closeLocal, err := openLocal(ctx, fl.database, fl.data, fl.durability, fl.content,
		setup.StoreTuning{WriteCache: fl.writeCache, WebMergeLinks: ingest.WARCMergeLinks, CheckpointEvery: ingest.WARCCheckpointEvery})
	if err != nil {
		return err
	}
	defer closeLocal()
	var total int64
	for _, a := range args {
		fs, err := ingest.WARCFiles(a)
		if err != nil {
			return err
		}
		for _, f := range fs {
			if fi, err := os.Stat(f); err == nil {
				total += fi.Size()
			}
		}
	}
	bar := setup.NewProgressBar(-1, "bytes")
	bar.ChangeMax64(total)
	start := time.Now()
	ctx = shelfmark.WithCaller(ctx, shelfmark.SystemCaller("cli"))
	st, runErr := ingest.IngestWARC(ctx, engine, lb, args, ingest.WARCOptions{
		Crawl: fl.crawl, Collection: shelfmark.ID(fl.collection), Batch: fl.batch, Merge: fl.merge, Rate: fl.rate,
		Progress: func(s ingest.WARCStats) {
			secs := max(time.Since(start).Seconds(), 1e-9)
			bar.Describe(fmt.Sprintf("records (%d indexed, %d bad, %.0f links/s)", s.Records, s.Errors, float64(s.Links)/secs))
			bar.Set64(s.Bytes)
		}})
	bar.Finish()
	fmt.Fprintln(os.Stderr)
	out := cmd.OutOrStdout()
	if st != nil {
		secs := max(time.Since(start).Seconds(), 1e-9)
		fmt.Fprintf(out, "ingest warc: %d files indexed, %d skipped (indexed before), %d failed; %d records, %d bad, %d links, %.1f MiB in %.1f s (%.0f records/s, %.0f links/s)\n",
			st.Files, st.FilesSkipped, st.FilesFailed, st.Records, st.Errors, st.Links, float64(st.Bytes)/(1<<20), secs,
			float64(st.Records)/secs, float64(st.Links)/secs)
		for _, f := range st.Failures {
			fmt.Fprintf(out, "  bad %s: %s\n", f.Key, f.Reason)
		}
		if runErr == nil && st.FilesFailed > 0 {
			runErr = fmt.Errorf("%d files failed", st.FilesFailed)
		}
		if runErr == nil && st.Errors > 0 {
			runErr = fmt.Errorf("%d bad records were skipped (the rest is indexed)", st.Errors)
		}
	}
	return runErr
}
