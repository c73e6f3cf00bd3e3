package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark/bench"
	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/siegfried"
	"github.com/shelfmark/shelfmark/worker"
)

// stageBars draws one progress bar per stage of a scenario.
type stageBars struct {
	stage string
	bar   *progressbar.ProgressBar
}

func (s *stageBars) progress(stage string, done, total int) {
	if stage != s.stage {
		s.finish()
		s.stage, s.bar = stage, setup.NewProgressBar(total, stage)
	}
	s.bar.Set(done)
}

func (s *stageBars) finish() {
	if s.bar != nil {
		s.bar.Finish()
		if setup.IsTerminal(os.Stderr) { // end the bar's line; plain progress ends its own
			fmt.Fprintln(os.Stderr)
		}
		s.bar = nil
	}
}

func newBenchCharacterizeCommand() *cobra.Command {
	var lf labFlags
	var files, concurrency int
	cmd := &cobra.Command{
		Use:   "characterize",
		Short: "Format identification through the job queue: files/s of a PDF/TIFF/JPEG/PNG/XML/text mix",
		Long: `Stores --files generated files (PDF, TIFF, JPEG, PNG, XML and plain text in
turn, each unique), then lets a job runner work the characterize queue
alone (siegfried with the bounded PRONOM signature) until it is empty, and
reports files identified per second (target ≥ 1,000) over time. The raw
limit is the same identifier over the same blobs in process, on every
core, without the queue or the database.`,
		Args: cobra.NoArgs,
		RunE: lf.run(func(ctx context.Context, cmd *cobra.Command, e *labEnv) error {
			id, err := siegfried.New()
			if err != nil {
				return err
			}
			var bars stageBars
			r, err := bench.RunCharacterize(ctx, e.repo, e.blobs, bench.CharacterizeConfig{Files: files, Concurrency: concurrency, Seed: 1,
				Identify: id, Progress: bars.progress})
			bars.finish()
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for i, s := range r.Steps {
				fmt.Fprintf(out, "bucket %2d  %8.0f files/s\n", i+1, s.RatePerS)
			}
			fmt.Fprintf(out, "characterize %s: %d files in %.1f s, %.0f files/s through the job queue (%.0f%% of the identifier alone, %.0f/s), flatness %.2f, %d errors\n",
				r.Backend, r.Items, r.Seconds, r.RatePerS, 100*r.FractionLimit, r.RawLimitPerS, r.Flatness, r.Errors)
			r.PeakRSSBytes = bench.PeakRSS(os.Getpid())
			return finish(out, r, lf.jsonPath, lf.reportDir)
		}),
	}
	f := cmd.Flags()
	lf.add(f)
	f.IntVar(&files, "files", 20000, "files to store and identify")
	f.IntVar(&concurrency, "concurrency", 0, "characterize jobs at once (0: the default for this machine)")
	setup.AnnotateEnv(f)
	return cmd
}

func newBenchIsolationCommand() *cobra.Command {
	var lf labFlags
	var works, ocrJobs, rounds int
	var pauseOCR bool
	var busyCores float64
	cmd := &cobra.Command{
		Use:   "isolation",
		Short: "Ingest with and without 10,000 OCR jobs running: the ratio of the two rates",
		Long: `Runs the job runner of serve (every queue, default limits) throughout, queues
--ocr-jobs OCR jobs on scanned page images, then ingests patents (metadata
and a 4 KB XML file each) in 2 × --rounds segments of equal size, alternating
idle (the OCR queue paused: none of it runs) and busy (OCR running, at idle
CPU priority with OMP_THREAD_LIMIT=1), so that both meet the repository at
the same sizes. fraction_of_limit is the busy rate over the idle rate
(target ≥ 0.9); it also says how many OCR jobs finished meanwhile.`,
		Args: cobra.NoArgs,
		RunE: lf.run(func(ctx context.Context, cmd *cobra.Command, e *labEnv) error {
			id, err := siegfried.New()
			if err != nil {
				return err
			}
			p := &worker.Pipeline{Repo: e.repo, Blobs: e.blobs, Identify: id, Tools: setup.PipelineTools(slog.New(slog.NewTextHandler(os.Stderr, nil)))}
			if p.Tools.Tesseract == "" {
				return fmt.Errorf("tesseract is not installed (apt-get install tesseract-ocr tesseract-ocr-eng)")
			}
			var bars stageBars
			res, err := bench.RunIsolation(ctx, e.repo, e.blobs, bench.IsolationConfig{Works: works, OCRJobs: ocrJobs, Rounds: rounds, Seed: 1,
				PauseOCR: pauseOCR, BusyCores: busyCores, Pipeline: p, Progress: bars.progress})
			bars.finish()
			if err != nil {
				return err
			}
			r := res.Report
			out := cmd.OutOrStdout()
			kinds, _ := r.Params["segment_kinds"].([]string)
			seg := bench.Series{Name: "ingest rate by segment (odd: see segment kinds in the JSON)", Unit: "works/s", XLabel: "segment"}
			for i, s := range r.Steps {
				fmt.Fprintf(out, "segment %2d  %-4s  %8.0f works/s\n", i+1, kinds[i], s.RatePerS)
				seg.X, seg.Y = append(seg.X, float64(i+1)), append(seg.Y, s.RatePerS)
			}
			fmt.Fprintf(out, "isolation %s: ingest %.0f works/s with nothing of the OCR queue running, %.0f works/s with %d OCR jobs queued and running: %.2f×; %d OCR jobs finished during the busy segments (OCR waits while the process is busy), %d in 10 s once the ingest and its own jobs were done, %d left\n",
				r.Backend, res.IdlePerS, res.BusyPerS, ocrJobs, r.FractionLimit, res.OCRDone, res.OCRQuiet, res.OCRAfter)
			r.PeakRSSBytes = bench.PeakRSS(os.Getpid())
			return finish(out, r, lf.jsonPath, lf.reportDir, seg)
		}),
	}
	f := cmd.Flags()
	lf.add(f)
	f.IntVar(&works, "objects", 100000, "works ingested with OCR running, and as many without")
	f.IntVar(&ocrJobs, "ocr-jobs", 10000, "OCR jobs queued")
	f.IntVar(&rounds, "rounds", 10, "switches between idle and busy segments")
	f.Float64Var(&busyCores, "busy-cores", worker.DefaultBusyCores, "the runner's CPU gate, as serve's --busy-cores (0: OCR runs whatever the load)")
	f.BoolVar(&pauseOCR, "pause-ocr", false, "control run: keep the OCR queue paused in the busy segments too")
	setup.AnnotateEnv(f)
	return cmd
}
