package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
	shttp "github.com/shelfmark/shelfmark/http"
	"github.com/shelfmark/shelfmark/internal/setup"
)

// workerCmdConfig holds the settings of `shelfmark worker`.
type workerCmdConfig struct {
	data, database, durability, logLevel, metricsAddr string
	jobs                                              setup.WorkerConfig
	content                                           setup.BlobFlags
}

func newWorkerCommand() *cobra.Command {
	var c workerCmdConfig
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run background jobs only (identification, derivatives, text, OCR)",
		Long: `Run the background pipeline without the API, so that jobs can run on other
machines. Workers claim jobs from the database, so every worker and server
of one database shares one queue, and no job runs twice at once.

  shelfmark worker --database postgres://user@db/shelfmark --data /mnt/shelfmark --queues ocr

--data must be the content store the servers use (a shared volume). Run
'shelfmark serve --workers=false' to leave all jobs to worker processes.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := setup.ApplyEnv(cmd.Flags()); err != nil {
				return err
			}
			return runWorker(cmd.Context(), c)
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.data, "data", "shelfmark-data", "directory of the content store (and of the SQLite database without --database)")
	f.StringVar(&c.database, "database", "", "PostgreSQL URL (postgres://user@host/db); empty means SQLite in --data")
	f.StringVar(&c.durability, "durability", "safe", `"safe" or "relaxed" (see shelfmark serve --help)`)
	f.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	f.StringVar(&c.metricsAddr, "metrics-addr", "", "serve /metrics on this address (for example 127.0.0.1:9091); empty for none")
	c.jobs.Register(f)
	c.content.Register(f)
	setup.AnnotateEnv(f)
	return cmd
}

func runWorker(ctx context.Context, c workerCmdConfig) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	store, err := setup.OpenStorage(ctx, c.database, c.data, c.durability, 0)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer store.Close()
	blobs, err := setup.OpenBlobs(ctx, c.content, c.data, store)
	if err != nil {
		return err
	}
	defer blobs.Close()
	metrics := shttp.NewMetrics(store, nil)
	setup.RegisterBlobMetrics(blobs, metrics.Registry())
	ids, err := shelfmark.LoadIDCodec(ctx, store)
	if err != nil {
		return err
	}
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{Observer: metrics, IDs: ids})
	defer repo.Close()
	backlog, err := c.jobs.BacklogGate(repo)
	if err != nil {
		return err
	}
	jobs, err := setup.NewRunner(repo, blobs, c.jobs, backlog, metrics, log)
	if err != nil {
		return err
	}
	if c.metricsAddr != "" {
		ln, err := net.Listen("tcp", c.metricsAddr)
		if err != nil {
			return fmt.Errorf("--metrics-addr: %w", err)
		}
		srv := &http.Server{Handler: metrics.Handler(), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
	}
	log.Info("shelfmark worker running", "version", shelfmark.Version, "worker", jobs.Name(), "backend", store.Backend(), "queues", c.jobs.Queues(), "gc", setup.CurrentGC(os.Getenv).String())
	err = jobs.Run(ctx)
	log.Info("shelfmark worker stopped; running jobs were handed back to their queues")
	return err
}
