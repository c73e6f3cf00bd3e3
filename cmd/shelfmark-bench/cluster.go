package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/spf13/pflag"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bench"
	shttp "github.com/shelfmark/shelfmark/http"
	"github.com/shelfmark/shelfmark/internal/setup"
)

// Several servers on one PostgreSQL, and the content store they share:
// bench rest and bench patents with --servers and --storage run the same
// scenario against each configuration in one run, each in a new schema of
// --database (dropped afterwards), with the servers started here as
// separate processes on loopback ports. The load generator talks to every
// server directly, spreading its clients round-robin: no load balancer
// stands between them, so its cost is in no figure.

// benchClusterFlags are the settings of a run that compares configurations.
type benchClusterFlags struct {
	servers, storage                         string
	s3Endpoint, s3Access, s3Secret, s3Region string
	chart, replot                            string
}

// add registers the flags.
func (cf *benchClusterFlags) add(f *pflag.FlagSet) {
	f.StringVar(&cf.servers, "servers", "1", `server processes on one PostgreSQL (--database), or a list ("1,2,3") to run the scenario against each count in one run`)
	f.StringVar(&cf.storage, "storage", "local", `content store of the servers, or a list ("local,s3") to compare them in one run: "local" (one --data directory all servers share), "s3" (a versitygw started on a loopback port, unless --s3-endpoint names a store), or s3://BUCKET/PREFIX of --s3-endpoint`)
	f.StringVar(&cf.s3Endpoint, "s3-endpoint", "", "S3 endpoint URL of the servers' store (empty: start versitygw for \"s3\")")
	f.StringVar(&cf.s3Access, "s3-access-key", "", "S3 access key (with --s3-endpoint)")
	f.StringVar(&cf.s3Secret, "s3-secret-key", "", "S3 secret key (with --s3-endpoint; better in the environment)")
	f.StringVar(&cf.s3Region, "s3-region", "", "S3 region (default: AWS_REGION, else us-east-1)")
	f.StringVar(&cf.chart, "chart", "", "with --servers or --storage: write the rate and CPU charts of the configurations as FILE-rate.svg and FILE-cpu.svg (for FILE.svg); with --compare-committers: the rate chart as FILE; otherwise (patents in this process) the chart of works/s against the raw limits of the same rows as FILE")
	f.StringVar(&cf.replot, "replot", "", "run nothing: write --chart and --report again from this JSON report of an earlier run with --servers or --storage")
}

// finish prints the configurations' table and writes the reports
// and charts asked for.
func (cf *benchClusterFlags) finish(out io.Writer, rep *bench.Report, jsonPath, reportDir string) error {
	benchPrintConfigs(out, "works", rep.Configurations)
	if cf.chart != "" {
		if err := rep.WriteConfigurationsSVG(cf.chart); err != nil {
			return err
		}
	}
	return finish(out, rep, jsonPath, reportDir)
}

// replotted reads the report of --replot.
func (cf *benchClusterFlags) replotted() (*bench.Report, error) {
	b, err := os.ReadFile(cf.replot)
	if err != nil {
		return nil, fmt.Errorf("--replot: %w", err)
	}
	var rep bench.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return nil, fmt.Errorf("--replot %s: %w", cf.replot, err)
	}
	if len(rep.Configurations) == 0 {
		return nil, fmt.Errorf("--replot %s: the report compares no configurations", cf.replot)
	}
	return &rep, nil
}

// clusterMode reports whether the flags ask for the comparison: a
// --servers, --storage or --replot on the command line, or
// SHELFMARK_SERVERS (call it before ApplyEnv, so that a SHELFMARK_STORAGE
// set for serve does not).
func (cf *benchClusterFlags) clusterMode(f *pflag.FlagSet) bool {
	return f.Changed("servers") || f.Changed("storage") || f.Changed("replot") || os.Getenv("SHELFMARK_SERVERS") != ""
}

// configs returns the configurations the flags name: each content store
// with each server count.
func (cf *benchClusterFlags) configs() ([]string, []int, error) {
	var counts []int
	for _, s := range strings.Split(cf.servers, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 64 {
			return nil, nil, fmt.Errorf("--servers: %q is not a list of server counts (1–64)", cf.servers)
		}
		counts = append(counts, n)
	}
	var stores []string
	for _, s := range strings.Split(cf.storage, ",") {
		s = strings.TrimSpace(s)
		switch {
		case s == "local", s == "s3":
		case strings.HasPrefix(s, "s3://"):
			if cf.s3Endpoint == "" {
				return nil, nil, fmt.Errorf("--storage %s needs --s3-endpoint (and its keys)", s)
			}
		default:
			return nil, nil, fmt.Errorf("--storage: %q is not local, s3 or s3://BUCKET/PREFIX", s)
		}
		stores = append(stores, s)
	}
	return stores, counts, nil
}

// benchClusterEnv is the servers' shared surroundings for one run: a temporary
// directory, a versitygw when one is needed, and a connection to the
// database for the schemas and the CPU meter.
type benchClusterEnv struct {
	cf       *benchClusterFlags
	database string
	dir      string
	admin    *sql.DB
	app      string // application_name of the servers' connections
	s3       *exec.Cmd
	s3URL    string
	s3Access string
	s3Secret string
	n        int // configurations made so far
}

// openBenchClusterEnv prepares a run on database.
func openBenchClusterEnv(ctx context.Context, cf *benchClusterFlags, database string) (*benchClusterEnv, error) {
	if !strings.HasPrefix(database, "postgres://") && !strings.HasPrefix(database, "postgresql://") {
		return nil, fmt.Errorf("--servers and --storage need --database postgres://…: several servers share one PostgreSQL")
	}
	if _, err := serverBinary(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "shelfmark-bench-cluster-")
	if err != nil {
		return nil, err
	}
	admin, err := sql.Open("pgx", database)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	admin.SetMaxOpenConns(1)
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("--database: %w", err)
	}
	return &benchClusterEnv{cf: cf, database: database, dir: dir, admin: admin, app: fmt.Sprintf("shelfmark-bench-%d", os.Getpid())}, nil
}

func (e *benchClusterEnv) close() {
	if e.s3 != nil {
		stopServer(e.s3)
	}
	e.admin.Close()
	os.RemoveAll(e.dir)
}

// benchClusterConfig is one configuration, ready to start its servers.
type benchClusterConfig struct {
	servers    int
	storage    string
	dsn        string // the configuration's schema, and the servers' application_name
	data       string // the --data directory every server shares
	env        []string
	schema     string
	dropSchema func()
	e          *benchClusterEnv
	procs      []*exec.Cmd
	urls       []string
	dropped    bool
}

// schema makes a new schema of the database and returns a DSN whose
// search_path is that schema and whose connections carry the run's
// application_name, and a function that drops it.
func (e *benchClusterEnv) schema(ctx context.Context, what string) (dsn, name string, drop func(), err error) {
	e.n++
	schema := fmt.Sprintf("bench_%s_%d_%d_%d", what, os.Getpid(), e.n, rand.IntN(1e6))
	if _, err := e.admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		return "", "", nil, fmt.Errorf("bench schema: %w", err)
	}
	drop = func() { e.admin.ExecContext(context.Background(), "DROP SCHEMA "+schema+" CASCADE") }
	u, err := url.Parse(e.database)
	if err != nil {
		drop()
		return "", "", nil, err
	}
	q := u.Query()
	q.Set("search_path", schema)
	q.Set("application_name", e.app)
	u.RawQuery = q.Encode()
	return u.String(), schema, drop, nil
}

// rawLimit measures the raw insert limit (bench.RawInsertLimit: triples
// statements a work, batch works per durable transaction) in a scratch
// schema of its own, so that the rows it writes are no work for the
// servers' background loops (the OAI projector and the search indexer
// would otherwise take them up during the measured steps).
func (e *benchClusterEnv) rawLimit(ctx context.Context, durability string, triples, batch int) (float64, error) {
	dsn, _, drop, err := e.schema(ctx, "raw")
	if err != nil {
		return 0, err
	}
	defer drop()
	store, err := setup.OpenStorage(ctx, dsn, "", durability, 0)
	if err != nil {
		return 0, err
	}
	defer store.Close()
	return bench.RawInsertLimit(ctx, store, triples, batch, 3*time.Second)
}

// config makes a new schema and data directory for n servers on storage.
func (e *benchClusterEnv) config(ctx context.Context, n int, storage string) (*benchClusterConfig, error) {
	dsn, schema, drop, err := e.schema(ctx, "cluster")
	if err != nil {
		return nil, err
	}
	c := &benchClusterConfig{servers: n, storage: storage, dsn: dsn, schema: schema, dropSchema: drop, e: e, data: filepath.Join(e.dir, fmt.Sprintf("data%d", e.n))}
	// the servers read nothing of the bench's own environment settings
	c.env = []string{"SHELFMARK_STORAGE=", "SHELFMARK_SERVERS="}
	if storage != "local" {
		env, err := e.s3Env(ctx, storage, fmt.Sprintf("bench-%d-%d", os.Getpid(), e.n))
		if err != nil {
			c.drop()
			return nil, err
		}
		c.env = append(c.env, env...)
	}
	return c, nil
}

// s3Env returns the servers' environment for an S3 store: a new bucket
// (or prefix) per configuration on the run's versitygw, or the prefix the
// flag names with the schema's name below it.
func (e *benchClusterEnv) s3Env(ctx context.Context, storage, name string) ([]string, error) {
	endpoint, access, secret := e.cf.s3Endpoint, e.cf.s3Access, e.cf.s3Secret
	var store string
	if storage == "s3" && endpoint == "" {
		if err := e.startVersity(ctx); err != nil {
			return nil, err
		}
		endpoint, access, secret = e.s3URL, e.s3Access, e.s3Secret
		if err := benchCreateBucket(ctx, endpoint, access, secret, name); err != nil {
			return nil, err
		}
		store = "s3://" + name + "/blobs"
	} else if storage == "s3" {
		return nil, fmt.Errorf("--storage s3 with --s3-endpoint: name the bucket, --storage s3://BUCKET/PREFIX")
	} else {
		store = strings.TrimSuffix(storage, "/") + "/" + name
	}
	return []string{"SHELFMARK_STORAGE=" + store, "SHELFMARK_S3_ENDPOINT=" + endpoint, "SHELFMARK_S3_ACCESS_KEY=" + access,
		"SHELFMARK_S3_SECRET_KEY=" + secret, "SHELFMARK_S3_REGION=" + e.cf.s3Region}, nil
}

// startVersity starts versitygw (SHELFMARK_VERSITYGW, else versitygw on
// the PATH or in .build/bin) on a loopback port over a directory of the
// run, once.
func (e *benchClusterEnv) startVersity(ctx context.Context) error {
	if e.s3 != nil {
		return nil
	}
	bin, err := benchVersitygw()
	if err != nil {
		return err
	}
	addr, err := freeAddr()
	if err != nil {
		return err
	}
	root := filepath.Join(e.dir, "s3")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	e.s3Access, e.s3Secret = "bench"+strconv.Itoa(rand.IntN(1e6)), fmt.Sprintf("%x", rand.Uint64())
	cmd := exec.Command(bin, "--port", addr, "--quiet", "posix", root)
	// the keys in the environment, not the process list
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY="+e.s3Access, "ROOT_SECRET_KEY="+e.s3Secret)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start versitygw: %w", err)
	}
	e.s3, e.s3URL = cmd, "http://"+addr
	if err := benchWaitListening(ctx, addr); err != nil {
		return fmt.Errorf("versitygw: %w: %s", err, log.String())
	}
	return nil
}

// benchVersitygw finds the versitygw binary.
func benchVersitygw() (string, error) {
	if p := os.Getenv("SHELFMARK_VERSITYGW"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		for _, p := range []string{filepath.Join(filepath.Dir(exe), "versitygw"), filepath.Join(filepath.Dir(exe), "..", ".build", "bin", "versitygw")} {
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("--storage s3: versitygw not found (set SHELFMARK_VERSITYGW, or give --s3-endpoint)")
}

// start runs the configuration's servers, each on its own loopback port,
// with args added to serve's. They run no jobs, and nothing else does in
// the run: their backlog limits are lifted (0), or the uploads would be
// refused, waiting for workers that never come, once a queue held its
// default limit.
func (c *benchClusterConfig) start(ctx context.Context, durability string, args ...string) error {
	for i := 0; i < c.servers; i++ {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		serve := append([]string{"serve", "--workers=false", "--backlog-limit", setup.NoBacklogLimits()}, args...)
		srv, u, err := runServer(ctx, serve, addr, c.data, c.dsn, durability, c.env)
		if err != nil {
			return fmt.Errorf("server %d of %d: %w", i+1, c.servers, err)
		}
		c.procs, c.urls = append(c.procs, srv), append(c.urls, u)
	}
	return nil
}

// pids returns the servers' process ids.
func (c *benchClusterConfig) pids() []int {
	var out []int
	for _, p := range c.procs {
		out = append(out, p.Process.Pid)
	}
	return out
}

// meter returns a CPU meter of the servers and their database.
func (c *benchClusterConfig) meter() *bench.CPUMeter {
	m := &bench.CPUMeter{Servers: c.pids(), DB: c.e.admin, AppName: c.e.app}
	if c.storage == "s3" && c.e.s3 != nil {
		m.Store = []int{c.e.s3.Process.Pid}
	}
	return m
}

// works counts the works stored in the configuration's schema.
func (c *benchClusterConfig) works(ctx context.Context) (int64, error) {
	var n int64
	err := c.e.admin.QueryRowContext(ctx, "SELECT count(*) FROM "+c.schema+".resources WHERE kind = 'work' AND deleted IS NULL").Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count the works stored: %w", err)
	}
	return n, nil
}

// stop ends the servers and drops the schema.
func (c *benchClusterConfig) stop() {
	for _, p := range c.procs {
		stopServer(p)
	}
	c.procs = nil
	c.drop()
}

func (c *benchClusterConfig) drop() {
	if c.dropped {
		return
	}
	c.dropped = true
	c.dropSchema()
	os.RemoveAll(c.data)
}

// benchStorageName is how a report names a content store.
func benchStorageName(s string) string {
	if strings.HasPrefix(s, "s3://") {
		return "s3"
	}
	return s
}

// benchMergeConfigs makes one report of the configurations' reports: each
// configuration with its own steps, and every step in Steps, named.
func benchMergeConfigs(scenario string, configs []bench.Configuration, params map[string]any) *bench.Report {
	rep := &bench.Report{Scenario: scenario, Backend: "postgres", Params: params, Configurations: configs}
	var best float64
	for _, c := range configs {
		rep.Items += c.Items
		rep.Errors += c.Errors
		rep.Seconds += c.Seconds
		rep.Steps = append(rep.Steps, c.Steps...)
		rep.LatencyMS = bench.Latency{P50: max(rep.LatencyMS.P50, c.LatencyMS.P50), P95: max(rep.LatencyMS.P95, c.LatencyMS.P95),
			P99: max(rep.LatencyMS.P99, c.LatencyMS.P99), Max: max(rep.LatencyMS.Max, c.LatencyMS.Max)}
		if c.FractionLimit > rep.FractionLimit {
			rep.FractionLimit, rep.RawLimitPerS = c.FractionLimit, c.RawLimitPerS
		}
		best = max(best, c.BestRatePerS)
	}
	if rep.Seconds > 0 {
		rep.RatePerS = float64(rep.Items) / rep.Seconds
	}
	return rep
}

// benchPrintConfigs writes a table of the configurations.
func benchPrintConfigs(out io.Writer, what string, configs []bench.Configuration) {
	fmt.Fprintf(out, "%-8s %7s %10s %10s %8s %8s %9s %9s %9s %9s %6s\n", "storage", "servers", what+"/s", "best", "raw", "of raw", "p50 ms", "p99 ms", "server ms", "db ms", "load")
	for _, c := range configs {
		srv, db := "-", "-"
		if c.CPU != nil {
			srv = fmt.Sprintf("%.3f", c.CPU.ServerMS)
			if c.CPU.Database {
				db = fmt.Sprintf("%.3f", c.CPU.DatabaseMS)
			}
		}
		fmt.Fprintf(out, "%-8s %7d %10.0f %10.0f %8.0f %7.0f%% %9.2f %9.2f %9s %9s %6.2f\n", c.Storage, c.Servers, c.RatePerS, c.BestRatePerS, c.RawLimitPerS,
			100*c.FractionLimit, c.LatencyMS.P50, c.LatencyMS.P99, srv, db, c.LoadBefore)
	}
}

// benchWaitListening waits until something accepts connections on addr.
func benchWaitListening(ctx context.Context, addr string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("nothing listens on %s after 30 s", addr)
}

// benchRestCluster is bench rest against each configuration: for each, the
// raw limit of the rest scenario measured on its new schema, an admin
// token made there, the servers started, and the ramp of cfg (its Target
// and Token are set here) with clients spread over the servers; the CPU
// of every step is read around it.
func benchRestCluster(ctx context.Context, out io.Writer, cf *benchClusterFlags, database, durability string, cfg bench.RestConfig) (*bench.Report, error) {
	stores, counts, err := cf.configs()
	if err != nil {
		return nil, err
	}
	e, err := openBenchClusterEnv(ctx, cf, database)
	if err != nil {
		return nil, err
	}
	defer e.close()
	var configs []bench.Configuration
	for _, storage := range stores {
		for _, n := range counts {
			conf, err := benchRestConfiguration(ctx, out, e, n, storage, durability, cfg)
			if err != nil {
				return nil, fmt.Errorf("%d servers, %s: %w", n, benchStorageName(storage), err)
			}
			configs = append(configs, *conf)
		}
	}
	rep := benchMergeConfigs("rest", configs, map[string]any{"clients": cfg.Clients, "step_seconds": cfg.StepDuration.Seconds(), "triples": cfg.Triples,
		"format": cfg.Format, "generator": "go", "token": true, "servers": counts, "storage": stores, "balancing": "round-robin by the load generator, no load balancer",
		"server_jobs": "off (--workers=false, backlog limits lifted)"})
	rep.Target = "http://127.0.0.1 (servers started by the run)"
	rep.RawLimitWhat = "plain inserts of the same rows through the same driver, 256 works per durable transaction, in a scratch schema before each configuration starts"
	return rep, nil
}

// benchRestConfiguration runs the ramp against n servers on storage.
func benchRestConfiguration(ctx context.Context, out io.Writer, e *benchClusterEnv, n int, storage, durability string, cfg bench.RestConfig) (*bench.Configuration, error) {
	load := bench.LoadAvg()
	raw, err := e.rawLimit(ctx, durability, cfg.Triples, 256)
	if err != nil {
		return nil, fmt.Errorf("raw limit: %w", err)
	}
	c, err := e.config(ctx, n, storage)
	if err != nil {
		return nil, err
	}
	defer c.stop()
	if cfg.Token, err = benchToken(ctx, c.dsn, c.data, durability); err != nil {
		return nil, err
	}
	if err := c.start(ctx, durability); err != nil {
		return nil, err
	}
	name := benchStorageName(storage)
	fmt.Fprintf(out, "== %d server(s) on one PostgreSQL, %s content store: raw limit %.0f works/s; load %.2f\n", n, name, raw, load)
	cfg.Targets = nil
	for _, u := range c.urls {
		cfg.Targets = append(cfg.Targets, u+"/api/v1/works")
	}
	cfg.Target, cfg.NoAuthTarget = "", ""
	meter := c.meter()
	cfg.Around = func(int) func(*bench.Step) {
		before := meter.Sample(ctx)
		return func(s *bench.Step) {
			s.CPU = meter.Since(ctx, before, s.Items)
			s.Servers, s.Storage, s.LoadAvg = n, name, bench.LoadAvg()
			s.RawLimit = raw
			if raw > 0 {
				s.Fraction = s.RatePerS / raw
			}
		}
	}
	cfg.Progress = func(s bench.Step) {
		fmt.Fprintf(out, "servers %d %-5s clients %3d  %8.0f works/s  p50 %6.2f ms  p99 %6.2f ms  errors %d %v  cpu/work: servers %.3f ms, postgres %.3f ms, load generator %.3f ms; load %.2f\n",
			n, name, s.Clients, s.RatePerS, s.LatencyMS.P50, s.LatencyMS.P99, s.Errors, s.ErrorCodes, s.CPU.ServerMS, s.CPU.DatabaseMS, s.CPU.ClientMS, s.LoadAvg)
	}
	rep, err := bench.RunRest(ctx, cfg)
	if err != nil {
		return nil, err
	}
	conf := &bench.Configuration{Servers: n, Storage: name, RawLimitPerS: raw, LatencyMS: rep.LatencyMS, LoadBefore: load, Steps: rep.Steps}
	conf.Summarize()
	if conf.Stored, err = c.works(ctx); err != nil {
		return nil, err
	}
	return conf, nil
}

// benchPatentsCluster is bench patents against each configuration, through
// the servers' bulk API (as "shelfmark ingest --server" sends it): the
// works are split into shares ingested at once, each by its own pipeline
// in this process, and the shares go to the servers round-robin. The
// number of shares is the same for every configuration (shares; 0: the
// largest server count), so each server count meets the same offered
// load.
func benchPatentsCluster(ctx context.Context, out io.Writer, cf *benchClusterFlags, database, durability string, shares int, pc bench.PatentsConfig) (*bench.Report, error) {
	stores, counts, err := cf.configs()
	if err != nil {
		return nil, err
	}
	if shares <= 0 {
		for _, n := range counts {
			shares = max(shares, n)
		}
	}
	e, err := openBenchClusterEnv(ctx, cf, database)
	if err != nil {
		return nil, err
	}
	defer e.close()
	var configs []bench.Configuration
	for _, storage := range stores {
		for _, n := range counts {
			conf, err := benchPatentsConfiguration(ctx, out, e, n, storage, durability, shares, pc)
			if err != nil {
				return nil, fmt.Errorf("%d servers, %s: %w", n, benchStorageName(storage), err)
			}
			configs = append(configs, *conf)
		}
	}
	rep := benchMergeConfigs("patents", configs, map[string]any{"works": pc.Works, "workers_per_share": pc.Workers, "batch": pc.Batch, "shares": shares, "scan_bytes": pc.ScanBytes,
		"servers": counts, "storage": stores, "path": "the servers' bulk API (POST /api/v1/blobs, POST /api/v1/groups), as ingest --server",
		"balancing": "shares round-robin over the servers, no load balancer", "server_jobs": "off (--workers=false, backlog limits lifted)"})
	rep.Target = "http://127.0.0.1 (servers started by the run)"
	rep.RawLimitWhat = fmt.Sprintf("plain inserts of the same rows (54 statements), %d works per durable transaction, in a scratch schema before each configuration starts", pc.Batch)
	return rep, nil
}

// benchPatentsConfiguration ingests pc.Works patents through n servers on
// storage.
func benchPatentsConfiguration(ctx context.Context, out io.Writer, e *benchClusterEnv, n int, storage, durability string, shares int, pc bench.PatentsConfig) (*bench.Configuration, error) {
	load := bench.LoadAvg()
	raw, err := e.rawLimit(ctx, durability, 54, pc.Batch)
	if err != nil {
		return nil, fmt.Errorf("raw limit: %w", err)
	}
	c, err := e.config(ctx, n, storage)
	if err != nil {
		return nil, err
	}
	defer c.stop()
	token, err := benchToken(ctx, c.dsn, c.data, durability)
	if err != nil {
		return nil, err
	}
	if err := c.start(ctx, durability); err != nil {
		return nil, err
	}
	name := benchStorageName(storage)
	fmt.Fprintf(out, "== %d server(s) on one PostgreSQL, %s content store: %d works in %d shares; raw limit %.0f works/s; load %.2f\n", n, name, pc.Works, shares, raw, load)
	clients := make([]*shttp.Client, n)
	for i, u := range c.urls {
		if clients[i], err = shttp.NewClient(u, shttp.ClientOptions{Token: token}); err != nil {
			return nil, err
		}
		if err := clients[i].Ready(ctx); err != nil {
			return nil, err
		}
	}
	targets := make([]bench.PatentsTarget, shares)
	for k := range targets {
		cl := clients[k%n]
		targets[k] = bench.PatentsTarget{Repo: cl, Blobs: cl}
	}
	meter := c.meter()
	before := meter.Sample(ctx)
	rep, err := bench.RunPatentsOn(ctx, targets, pc)
	if rep == nil {
		return nil, err
	}
	cpu := meter.Since(ctx, before, rep.Items)
	if err != nil {
		return nil, err
	}
	if rep.Errors > 0 {
		fmt.Fprintf(out, "  %d works failed; first: %v\n", rep.Errors, rep.Params["first_failure"])
	}
	for i := range rep.Steps {
		rep.Steps[i].Servers, rep.Steps[i].Storage = n, name
	}
	conf := &bench.Configuration{Servers: n, Storage: name, RawLimitPerS: raw, LoadBefore: load, Steps: rep.Steps}
	conf.Summarize()
	conf.RatePerS, conf.Seconds = rep.RatePerS, rep.Seconds
	conf.CPU = cpu
	if conf.Stored, err = c.works(ctx); err != nil {
		return nil, err
	}
	if raw > 0 {
		conf.FractionLimit = conf.RatePerS / raw
	}
	fmt.Fprintf(out, "servers %d %-5s %d works in %.1f s: %.0f works/s, %.0f%% of the raw limit; cpu/work: servers %.3f ms, postgres %.3f ms, s3 %.3f ms, ingest client %.3f ms; %d files, %.1f MiB; load %.2f\n",
		n, name, rep.Items, rep.Seconds, rep.RatePerS, 100*conf.FractionLimit, cpu.ServerMS, cpu.DatabaseMS, cpu.StoreMS, cpu.ClientMS, rep.Params["files"], float64(rep.Params["bytes"].(int64))/(1<<20), bench.LoadAvg())
	return conf, nil
}

// benchCreateBucket makes a bucket on a versitygw the run started.
func benchCreateBucket(ctx context.Context, endpoint, access, secret, bucket string) error {
	client := s3.New(s3.Options{Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(access, secret, "")})
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := client.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return fmt.Errorf("create bucket %s: %w", bucket, err)
	}
	return nil
}

// benchRawStore opens the store a scenario's raw limit is measured in,
// apart from the store the servers use: for SQLite a new database in dir,
// for PostgreSQL a new schema of the database (close drops it). In the
// servers' own tables its rows would be work for their background loops
// (the OAI projector, the search indexer) during the measured steps.
func benchRawStore(ctx context.Context, database, dir, durability string) (shelfmark.Storage, func(), error) {
	if database == "" {
		store, err := setup.OpenStorage(ctx, "", dir, durability, 0)
		if err != nil {
			return nil, nil, err
		}
		return store, func() { store.Close() }, nil
	}
	e, err := openBenchClusterEnv(ctx, &benchClusterFlags{}, database)
	if err != nil {
		return nil, nil, err
	}
	dsn, _, drop, err := e.schema(ctx, "raw")
	if err != nil {
		e.close()
		return nil, nil, err
	}
	store, err := setup.OpenStorage(ctx, dsn, "", durability, 0)
	if err != nil {
		drop()
		e.close()
		return nil, nil, err
	}
	return store, func() { store.Close(); drop(); e.close() }, nil
}
