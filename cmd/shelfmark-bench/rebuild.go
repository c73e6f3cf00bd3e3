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
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/ingest"
	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
)

func newBenchRebuildCommand() *cobra.Command {
	var lf labFlags
	var works, batch, parallel int
	var noMedia bool
	var keep, rootDir string
	cmd := &cobra.Command{
		Use:   "rebuild",
		Short: "Rebuild a repository from its OCFL copy: works/s, early against late",
		Long: `Ingests --works generated patents (as the patents scenario does) into a
SQLite repository, preserves them into an OCFL storage root as serve does
(the preserver, catching up; the copy is written without syncing each file,
which only this set-up skips), then rebuilds a new repository from the
storage root alone (preserve.Rebuild, as "shelfmark rebuild" runs it): into
a new SQLite database in a temporary directory, or into --database, which
must be an empty PostgreSQL database. Reports the objects (works) rebuilt
per second overall and per tenth of the objects, and the flatness (the
last tenth's rate over the first tenth's; flat: ≥ 0.9). Listing the storage
root's objects runs beside the first batches; its time is reported too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := setup.ApplyEnv(cmd.Flags()); err != nil {
				return err
			}
			ctx := cmd.Context()
			out := cmd.OutOrStdout()
			if keep != "" {
				if _, err := os.Stat(filepath.Join(keep, "0=ocfl_1.1")); err == nil {
					fmt.Fprintf(out, "rebuilding from the storage root in %s as it is\n", keep)
					rootDir = keep
				}
			}
			if rootDir == "" {
				src, err := openLab(ctx, "", "relaxed", 0)
				if err != nil {
					return err
				}
				defer src.close()
				bar := setup.NewProgressBar(works, "works ingested")
				if _, err := bench.RunPatents(ctx, src.repo, src.blobs, bench.PatentsConfig{Works: works, Seed: 1, NoMedia: noMedia,
					Progress: func(s ingest.Stats) { bar.Set(int(s.Stored + s.Skipped + s.Failed)) }}); err != nil {
					return fmt.Errorf("ingest: %w", err)
				}
				bar.Finish()
				fmt.Fprintln(os.Stderr)
				rootDir = filepath.Join(src.dir, "ocfl")
				if keep != "" {
					rootDir = keep
				}
				t0 := time.Now()
				if err := preserveAll(ctx, src, rootDir); err != nil {
					return err
				}
				fmt.Fprintf(out, "preserved %d works in %.1f s\n", works, time.Since(t0).Seconds())
			}
			r, err := benchRebuild(ctx, rootDir, lf.database, lf.durability, preserve.RebuildOptions{Batch: batch, Parallel: parallel})
			if err != nil {
				return err
			}
			for i, s := range r.Steps {
				fmt.Fprintf(out, "tenth %2d  %8.0f works/s\n", i+1, s.RatePerS)
			}
			fmt.Fprintf(out, "rebuild %s: %d objects in %.1f s (listing the root took %.1f s of it), %.0f objects/s, flatness %.2f; %d originals, %.1f MiB; %d damaged; peak RSS %.0f MiB\n",
				r.Backend, r.Items, r.Seconds, r.Params["listing_s"], r.RatePerS, r.Flatness,
				r.Params["originals"], float64(r.Params["bytes"].(int64))/(1<<20), r.Errors, float64(r.PeakRSSBytes)/(1<<20))
			return finish(out, r, lf.jsonPath, lf.reportDir)
		},
	}
	f := cmd.Flags()
	lf.add(f)
	f.IntVar(&works, "works", 20000, "patents to ingest, preserve and rebuild")
	f.BoolVar(&noMedia, "no-media", false, "patents without their PDFs and TIFFs (each work has its XML full text only)")
	f.IntVar(&batch, "batch", preserve.DefaultRebuildBatch, "objects per rebuild transaction")
	f.IntVar(&parallel, "parallel", preserve.DefaultRebuildParallel, "objects the rebuild reads at once")
	f.StringVar(&keep, "root", "", "keep the storage root in this directory; when it holds one already, rebuild from it as it is (no ingest, --works and --no-media unused)")
	return cmd
}

// preserveAll writes every change of the lab's repository into a new
// storage root at dir, as serve's preserver does, with the files of the
// versions written but not synced one by one.
func preserveAll(ctx context.Context, e *labEnv, dir string) error {
	fsys, err := ocfl.NewDirFS(dir)
	if err != nil {
		return err
	}
	root, err := ocfl.InitRoot(ctx, unsyncedFS{fsys})
	if err != nil {
		return err
	}
	p := preserve.New(e.store, e.blobs, root, e.repo.IDs(), preserve.Options{Window: time.Nanosecond, Batch: 5000})
	_, _, err = p.CatchUp(ctx)
	return err
}

// benchRebuild rebuilds the storage root at dir into a new SQLite
// database (database "") or into the empty PostgreSQL database, and
// reports the rate per tenth of the objects.
func benchRebuild(ctx context.Context, dir, database, durability string, opts preserve.RebuildOptions) (*bench.Report, error) {
	fsys, err := ocfl.NewDirFS(dir)
	if err != nil {
		return nil, err
	}
	root, err := ocfl.OpenRoot(ctx, fsys)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "shelfmark-bench-rebuild-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	store, err := setup.OpenStorage(ctx, database, tmp, durability, 0)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	blobs, err := blob.NewLocal(filepath.Join(tmp, "blobs"))
	if err != nil {
		return nil, err
	}
	defer blobs.Close()
	type mark struct {
		done int
		at   time.Duration
	}
	var marks []mark
	var listing time.Duration
	opts.Progress = func(p preserve.RebuildProgress) {
		marks, listing = append(marks, mark{p.Done, p.Elapsed}), p.Listing
	}
	started := time.Now()
	rep, err := preserve.Rebuild(ctx, root, store, blobs, opts)
	if err != nil {
		return nil, fmt.Errorf("rebuild: %w", err)
	}
	elapsed := time.Since(started)
	r := &bench.Report{Scenario: "rebuild", Backend: store.Backend(), Items: int64(rep.Written), Seconds: elapsed.Seconds(),
		RatePerS: float64(rep.Written) / elapsed.Seconds(), Errors: int64(len(rep.Skipped)), Started: started,
		PeakRSSBytes: bench.PeakRSS(os.Getpid()),
		Params:       map[string]any{"originals": rep.Originals, "bytes": rep.Bytes, "resources": rep.Resources, "batch": opts.Batch, "parallel": opts.Parallel}}
	// the rate of each tenth of the objects, from the batch ends nearest
	// to each tenth
	total := rep.Objects
	r.Params["listing_s"] = listing.Seconds()
	prev := mark{}
	for tenth := 1; tenth <= 10; tenth++ {
		want := total * tenth / 10
		m := marks[len(marks)-1]
		for _, x := range marks {
			if x.done >= want {
				m = x
				break
			}
		}
		if m.done <= prev.done {
			continue
		}
		s := (m.at - prev.at).Seconds()
		r.Steps = append(r.Steps, bench.Step{Items: int64(m.done - prev.done), Seconds: s, RatePerS: float64(m.done-prev.done) / s})
		prev = m
	}
	if n := len(r.Steps); n > 1 {
		r.Flatness = r.Steps[n-1].RatePerS / r.Steps[0].RatePerS
	}
	return r, nil
}

// unsyncedFS is a DirFS whose writes are not synced: the bench's set-up
// writes a copy it throws away, faster than serve's preserver may.
type unsyncedFS struct{ *ocfl.DirFS }

// Write replaces name with what r holds, through a temporary file and a
// rename, without syncing.
func (u unsyncedFS) Write(ctx context.Context, name string, r io.Reader, exclusive bool) error {
	p := filepath.Join(u.Dir(), filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp := p + ".bench-tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if exclusive {
		defer os.Remove(tmp)
		return os.Link(tmp, p)
	}
	return os.Rename(tmp, p)
}
