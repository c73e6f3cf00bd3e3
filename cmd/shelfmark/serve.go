package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	shttp "github.com/shelfmark/shelfmark/http"
	"github.com/shelfmark/shelfmark/postgres"
	"github.com/shelfmark/shelfmark/sqlite"
)

// serveConfig holds the settings of `shelfmark serve`.
type serveConfig struct {
	addr, data, database, durability, baseURL, maxUpload, logLevel string
	dbMaxConns                                                     int
	pprof                                                          bool
}

func newServeCommand() *cobra.Command {
	var c serveConfig
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the repository (REST API, metrics) until interrupted",
		Long: `Run the repository. With no flags it listens on 127.0.0.1:8080 and keeps
everything in ./shelfmark-data (SQLite database and content store).

With --database postgres://… the metadata lives in PostgreSQL, and several
serve processes may share it; files still go to --data (a shared volume).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := applyEnv(cmd.Flags()); err != nil {
				return err
			}
			return serve(cmd.Context(), c)
		},
	}
	f := cmd.Flags()
	f.StringVar(&c.addr, "addr", "127.0.0.1:8080", "address to listen on (use 0.0.0.0:8080 to accept connections from other machines)")
	f.StringVar(&c.data, "data", "shelfmark-data", "directory for the SQLite database and the content store")
	f.StringVar(&c.database, "database", "", "PostgreSQL URL (postgres://user@host/db); empty means SQLite in --data")
	f.StringVar(&c.durability, "durability", "safe", `"safe": every acknowledged write is on disk; "relaxed": faster, but a power loss (SQLite) or crash (PostgreSQL) may lose the last acknowledged writes`)
	f.StringVar(&c.baseURL, "base-url", "", "public URL of this server, used in resource IRIs (default: from each request's Host)")
	f.StringVar(&c.maxUpload, "max-upload", "4GiB", "largest file accepted by upload")
	f.StringVar(&c.logLevel, "log-level", "info", "debug, info, warn or error")
	f.IntVar(&c.dbMaxConns, "db-max-conns", 0, "database connections (0: derived from the number of cores)")
	f.BoolVar(&c.pprof, "pprof", false, "serve Go profiles at /debug/pprof/ (for measuring; off by default)")
	annotateEnv(f)
	return cmd
}

// openStorage opens the backend a config names.
func openStorage(ctx context.Context, database, data, durability string, maxConns int) (shelfmark.Storage, error) {
	relaxed := false
	switch durability {
	case "safe":
	case "relaxed":
		relaxed = true
	default:
		return nil, fmt.Errorf("--durability must be safe or relaxed, not %q", durability)
	}
	if strings.HasPrefix(database, "postgres://") || strings.HasPrefix(database, "postgresql://") {
		return postgres.Open(ctx, database, postgres.Options{Relaxed: relaxed, MaxConns: maxConns})
	} else if database != "" {
		return nil, fmt.Errorf("--database must be a postgres:// URL (or empty for SQLite), not %q", database)
	}
	return sqlite.Open(ctx, filepath.Join(data, "shelfmark.db"), sqlite.Options{Relaxed: relaxed, ReadConns: maxConns})
}

func serve(ctx context.Context, c serveConfig) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %w", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	maxUpload, err := parseSize(c.maxUpload)
	if err != nil {
		return fmt.Errorf("--max-upload: %w", err)
	}
	store, err := openStorage(ctx, c.database, c.data, c.durability, c.dbMaxConns)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer store.Close()
	blobs, err := blob.NewLocal(filepath.Join(c.data, "blobs"))
	if err != nil {
		return fmt.Errorf("open content store: %w", err)
	}
	defer blobs.Close()
	metrics := shttp.NewMetrics(store)
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{Observer: metrics})
	srv := shttp.NewServer(shttp.Options{Resources: repo, Blobs: blobs, Storage: store, Logger: log,
		BaseURL: c.baseURL, MaxUploadBytes: maxUpload, Metrics: metrics})

	var handler http.Handler = srv
	if c.pprof {
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
		mux.Handle("/", srv)
		handler = mux
	}
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", c.addr, err)
	}
	log.Info("shelfmark serving", "version", shelfmark.Version, "url", "http://"+ln.Addr().String(),
		"backend", store.Backend(), "data", c.data, "durability", c.durability)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln, handler) }()
	select {
	case err = <-errc:
	case <-ctx.Done():
		log.Info("shutting down: finishing requests in flight")
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err = srv.Shutdown(sctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("requests still running after 30 s")
		}
	}
	repo.Close() // commits whatever is queued
	return err
}
