package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/fixity"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
)

func newBenchFixityCommand() *cobra.Command {
	var lf labFlags
	var files, rounds int
	var size int64
	cmd := &cobra.Command{
		Use:   "fixity",
		Short: "A fixity pass: bytes checked a second against a plain read-and-hash of the same files",
		Long: `Stores --files works of one original of --size random bytes each, writes
their preservation copy (OCFL), then times, --rounds times in turns, a fixity
pass at an unlimited rate (every blob hashed with SHA-256 and every OCFL
content file with SHA-512, each check recorded) and a plain read of the
same files hashed with SHA-256 (the floor a check cannot beat). Both read
from the page cache after the first round; the best round of each counts.
Prints both rates, the ratio of the best of each and the median of each
round's ratio (the pair of a round ran under the same load; target ≥ 0.80).`,
		Args: cobra.NoArgs,
		RunE: lf.run(func(ctx context.Context, cmd *cobra.Command, e *labEnv) error {
			out := cmd.OutOrStdout()
			ids, err := shelfmark.LoadIDCodec(ctx, e.store)
			if err != nil {
				return err
			}
			sys := shelfmark.WithCaller(ctx, shelfmark.SystemCaller("bench"))
			rng := rand.New(rand.NewPCG(1, 2))
			buf := make([]byte, size)
			for i := range files {
				for j := range buf {
					buf[j] = byte(rng.Uint32())
				}
				b, err := e.blobs.Put(ctx, bytes.NewReader(buf), shelfmark.PutOptions{})
				if err != nil {
					return err
				}
				w, err := e.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindWork})
				if err != nil {
					return err
				}
				set, err := e.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID})
				if err != nil {
					return err
				}
				if _, err := e.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: set.ID, File: &shelfmark.File{
					Name: fmt.Sprintf("f%d.bin", i), MediaType: "application/octet-stream", Size: b.Size, SHA256: b.Digests[shelfmark.SHA256], Use: shelfmark.UseOriginal}}); err != nil {
					return err
				}
			}
			fsys, err := ocfl.NewDirFS(filepath.Join(e.dir, "ocfl"))
			if err != nil {
				return err
			}
			root, err := ocfl.InitRoot(ctx, fsys)
			if err != nil {
				return err
			}
			later := func() time.Time { return time.Now().Add(time.Hour) }
			p := preserve.New(e.store, e.blobs, root, ids, preserve.Options{Now: later, Logger: slog.New(slog.DiscardHandler)})
			if _, _, err := p.CatchUp(ctx); err != nil {
				return err
			}
			// the files a pass reads: the originals' blobs and the OCFL content files
			var paths []string
			pe := e.store.(shelfmark.PreservationEvents)
			for after := int64(0); ; {
				page, err := pe.OriginalFiles(ctx, after, shelfmark.MaxEventPage)
				if err != nil {
					return err
				}
				for _, f := range page {
					paths = append(paths, filepath.Join(e.dir, "data", "blobs", f.SHA256[0:2], f.SHA256[2:4], f.SHA256))
					after = f.Key
				}
				if len(page) < shelfmark.MaxEventPage {
					break
				}
			}
			if err := root.Objects(ctx, func(id string, err error) error {
				if err != nil {
					return err
				}
				obj, err := root.Open(ctx, id)
				if err != nil {
					return err
				}
				for _, cf := range obj.ContentFiles() {
					paths = append(paths, filepath.Join(fsys.Dir(), filepath.FromSlash(cf.Path)))
				}
				return nil
			}); err != nil {
				return err
			}
			c, err := fixity.New(e.store, e.blobs, root, ids, fixity.Options{Rate: -1, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				return err
			}
			var bestPass, bestPlain float64
			var ratios []float64
			var passBytes, plainBytes int64
			for r := range rounds {
				start := time.Now()
				sum, err := c.Pass(ctx)
				if err != nil {
					return err
				}
				if sum.Damaged+sum.Repaired > 0 {
					return fmt.Errorf("the pass found %d damaged and %d repaired copies in a fresh store", sum.Damaged, sum.Repaired)
				}
				passRate := float64(sum.Bytes) / time.Since(start).Seconds()
				start = time.Now()
				n, err := plainHash(paths)
				if err != nil {
					return err
				}
				plainRate := float64(n) / time.Since(start).Seconds()
				fmt.Fprintf(out, "round %d: fixity pass %d copies, %.1f MB at %.1f MB/s; plain read and sha256 of the same %d files, %.1f MB at %.1f MB/s\n",
					r+1, sum.Checked, float64(sum.Bytes)/1e6, passRate/1e6, len(paths), float64(n)/1e6, plainRate/1e6)
				bestPass, bestPlain = max(bestPass, passRate), max(bestPlain, plainRate)
				ratios = append(ratios, passRate/plainRate)
				passBytes, plainBytes = sum.Bytes, n
			}
			if passBytes != plainBytes {
				return fmt.Errorf("the pass read %d bytes, the plain read %d", passBytes, plainBytes)
			}
			slices.Sort(ratios)
			fmt.Fprintf(out, "fixity %s: %d originals of %d bytes, two copies each (%.1f MB a pass): best pass %.1f MB/s, best plain read-and-sha256 %.1f MB/s, ratio of the bests %.2f, median ratio of a round's pair %.2f (target ≥ 0.80)\n",
				e.store.Backend(), files, size, float64(passBytes)/1e6, bestPass/1e6, bestPlain/1e6, bestPass/bestPlain, ratios[len(ratios)/2])
			return nil
		}),
	}
	lf.add(cmd.Flags())
	cmd.Flags().IntVar(&files, "files", 100, "originals (one work each)")
	cmd.Flags().Int64Var(&size, "size", 4<<20, "bytes of each original")
	cmd.Flags().IntVar(&rounds, "rounds", 3, "passes and plain reads, in turns")
	return cmd
}

// plainHash reads each file whole into SHA-256 and returns the bytes read.
func plainHash(paths []string) (int64, error) {
	buf := make([]byte, 1<<20)
	var total int64
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return total, err
		}
		h := sha256.New()
		n, err := io.CopyBuffer(h, f, buf)
		f.Close()
		if err != nil {
			return total, err
		}
		total += n
		h.Sum(nil)
	}
	return total, nil
}
