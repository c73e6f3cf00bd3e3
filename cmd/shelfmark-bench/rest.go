package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/shelfmark/shelfmark/bench"
	"github.com/shelfmark/shelfmark/internal/setup"
)

func newBenchRestCommand() *cobra.Command {
	var (
		target, fedora, versus, database, durability, clients, format, jsonPath, generator, reportDir, token string
		step, warmup, round                                                                                  time.Duration
		triples                                                                                              int
		compare, settle                                                                                      bool
		cf                                                                                                   benchClusterFlags
	)
	cmd := &cobra.Command{
		Use:   "rest",
		Short: "One work per request, 1→64 concurrent clients: throughput and latency per step",
		Long: `Starts "shelfmark serve" as a separate process on a free loopback port with a
fresh data directory (or targets --target), then ramps concurrent clients
(--clients), each creating works of --triples statements with a POST per work,
and reports throughput and p50/p95/p99/max latency per step.

Every request carries an API token (Authorization: Bearer), made for the
user "admin" in the fresh store before it is served. Each step is measured
twice, in alternating rounds (--round): with the token, and against a
listener of the same server that reads no credential and gives every
request the token's user; the report gives both and their ratio, the cost
of authentication (--compare-noauth=false measures with the token only).

Before each step it waits until the server's preservation copy has caught
up with the works of the steps before (--settle; the copy of a work is
written seconds after its create, and would otherwise slow the next step
down, most of all the step after one client's); the report gives each
step's wait.

With --fedora URL it aims the same Turtle, as LDP POSTs, at a Fedora container
instead, so both can be compared with the same load generator. With
--versus-fedora URL it measures the started server and then, in the same
run, the same ramp against that Fedora container, and reports Shelfmark's
throughput over Fedora's at each client count (credentials, if Fedora asks
for them, go in the URL: http://fedoraAdmin:secret@127.0.0.1:8080/fcrepo/rest).

With --servers (and --database) it starts that many "shelfmark serve"
processes on one PostgreSQL and spreads the clients over them round-robin,
each client sending to one server directly (no load balancer); a list
("--servers 1,2,3") runs the ramp against each count in one run, and
--storage local,s3 against each content store (s3: a versitygw on a
loopback port). Each configuration gets a new schema of the database
(dropped afterwards), its raw limit measured there, and its steps; each
step reports the CPU time per work of the servers, of the PostgreSQL
processes serving them and of the load generator (read from /proc), and
the machine's load. The servers run no background jobs (--workers=false),
and there is no comparison without authentication.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// asked for on the command line (or SHELFMARK_SERVERS), not by
			// a SHELFMARK_STORAGE meant for serve
			cluster := cf.clusterMode(cmd.Flags())
			if err := setup.ApplyEnv(cmd.Flags()); err != nil {
				return err
			}
			ctx := cmd.Context()
			var steps []int
			for _, s := range strings.Split(clients, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(s))
				if err != nil || n < 1 {
					return fmt.Errorf("--clients: %q is not a list of client counts", clients)
				}
				steps = append(steps, n)
			}
			out := cmd.OutOrStdout()
			if cluster {
				if target != "" || fedora != "" || versus != "" {
					return fmt.Errorf("--servers and --storage start their own servers: not with --target, --fedora or --versus-fedora")
				}
				if generator != "go" {
					return fmt.Errorf("--servers and --storage need the go generator (it spreads the clients over the servers)")
				}
				if cf.replot != "" {
					rep, err := cf.replotted()
					if err != nil {
						return err
					}
					return cf.finish(out, rep, "", reportDir)
				}
				cfg := bench.RestConfig{Token: "", Format: format, Generator: generator, Clients: steps, StepDuration: step, Warmup: warmup, Triples: triples, Seed: 1}
				rep, err := benchRestCluster(ctx, out, &cf, database, durability, cfg)
				if err != nil {
					return err
				}
				return cf.finish(out, rep, jsonPath, reportDir)
			}
			cfg := bench.RestConfig{Target: target, Token: token, Format: format, Generator: generator, Clients: steps, StepDuration: step, Warmup: warmup, Round: round,
				Triples: triples, Seed: 1,
				Progress: func(s bench.Step) {
					fmt.Fprintf(out, "clients %3d  %8.0f works/s  p50 %6.2f ms  p95 %6.2f ms  p99 %6.2f ms  max %7.2f ms  errors %d %v",
						s.Clients, s.RatePerS, s.LatencyMS.P50, s.LatencyMS.P95, s.LatencyMS.P99, s.LatencyMS.Max, s.Errors, s.ErrorCodes)
					if s.SettleSeconds >= 0.1 {
						fmt.Fprintf(out, "  (after %.1f s for the preservation copy to catch up)", s.SettleSeconds)
					}
					fmt.Fprintln(out)
					if a := s.AuthCost; a != nil {
						fmt.Fprintf(out, "     noauth  %8.0f works/s  p50 %6.2f ms  p99 %6.2f ms  errors %d;  auth/noauth: rate %.3f (%.2f–%.2f)  p50 %.3f  p99 %.3f\n",
							a.NoAuth.RatePerS, a.NoAuth.LatencyMS.P50, a.NoAuth.LatencyMS.P99, a.NoAuth.Errors, a.RateRatio, a.RateRatioLow, a.RateRatioHigh, a.P50Ratio, a.P99Ratio)
					}
				}}
			backend := "sqlite"
			if database != "" {
				backend = "postgres"
			}
			var pid int
			var rawLimit, rawSingle float64
			if versus != "" && (target != "" || fedora != "") {
				return fmt.Errorf("--versus-fedora compares the server this command starts: not with --target or --fedora")
			}
			switch {
			case fedora != "":
				cfg.Target, cfg.Fedora, cfg.Token, backend = fedora, true, "", "fedora"
			case target != "":
				backend = "remote"
			default:
				// the server to measure, found before anything is measured
				if _, err := serverBinary(); err != nil {
					return err
				}
				dir, err := os.MkdirTemp("", "shelfmark-bench-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				// the raw limit of the same rows on the same storage, before
				// the ramp, in a database (or schema) of its own
				store, closeRaw, err := benchRawStore(ctx, database, filepath.Join(dir, "raw"), durability)
				if err != nil {
					return err
				}
				rawSingle, err = bench.RawInsertLimit(ctx, store, triples, 1, 3*time.Second)
				if err == nil {
					rawLimit, err = bench.RawInsertLimit(ctx, store, triples, 256, 3*time.Second)
				}
				closeRaw()
				if err != nil {
					return fmt.Errorf("raw limit: %w", err)
				}
				fmt.Fprintf(out, "raw limit (same rows, no HTTP/engine): %.0f works/s one per transaction, %.0f works/s 256 per transaction\n", rawSingle, rawLimit)
				// a token of the first administrator, made as the system
				// before the server opens the store
				data := filepath.Join(dir, "data")
				if cfg.Token, err = benchToken(ctx, database, data, durability); err != nil {
					return err
				}
				var srv *exec.Cmd
				var url, noauthURL string
				if compare {
					srv, url, noauthURL, err = startRestServer(ctx, data, database, durability, cfg.Token)
				} else {
					srv, url, err = startServer(ctx, data, database, durability)
				}
				if err != nil {
					return err
				}
				defer stopServer(srv)
				pid = srv.Process.Pid
				cfg.Target = url + "/api/v1/works"
				if settle {
					cfg.Settle = settleOnPreservation(url, cfg.Token)
				}
				if noauthURL != "" {
					cfg.NoAuthTarget = noauthURL + "/api/v1/works"
				}
			}
			rep, err := bench.RunRest(ctx, cfg)
			if err != nil {
				return err
			}
			rep.Backend = backend
			if pid != 0 {
				rep.PeakRSSBytes = bench.PeakRSS(pid)
			}
			rep.RawLimitPerS = rawLimit
			rep.RawLimitWhat = "plain inserts of the same rows through the same driver, 256 works per durable transaction"
			best := 0.0
			for i := range rep.Steps {
				best = max(best, rep.Steps[i].RatePerS)
				if rawLimit > 0 {
					rep.Steps[i].RawLimit = rawLimit
					rep.Steps[i].Fraction = rep.Steps[i].RatePerS / rawLimit
				}
			}
			if rawLimit > 0 {
				rep.FractionLimit = best / rawLimit
				rep.Params["raw_limit_one_per_tx_per_s"] = rawSingle
			}
			fmt.Fprintf(out, "rest %s: %d works in %.1f s, best %.0f works/s, %.0f%% of the raw limit; p99 %.2f ms; %d errors; peak RSS %.0f MiB\n",
				backend, rep.Items, rep.Seconds, best, 100*rep.FractionLimit, rep.LatencyMS.P99, rep.Errors, float64(rep.PeakRSSBytes)/(1<<20))
			if a := rep.AuthCost; a != nil {
				fmt.Fprintf(out, "authentication: with a token %.0f works/s p50 %.2f ms p99 %.2f ms; without %.0f works/s p50 %.2f ms p99 %.2f ms; auth/noauth: rate %.3f (95%% interval of the paired rounds %.3f–%.3f), p50 %.3f, p99 %.3f (%d alternating rounds of %.1f s each side)\n",
					a.Auth.RatePerS, a.Auth.LatencyMS.P50, a.Auth.LatencyMS.P99, a.NoAuth.RatePerS, a.NoAuth.LatencyMS.P50, a.NoAuth.LatencyMS.P99,
					a.RateRatio, a.RateRatioLow, a.RateRatioHigh, a.P50Ratio, a.P99Ratio, a.Rounds, a.RoundSeconds)
			}
			if versus != "" {
				rep.Versus, err = bench.RunVersusFedora(ctx, cfg, rep, versus, func(s bench.Step) {
					fmt.Fprintf(out, "fedora  %3d  %8.0f works/s  p50 %6.2f ms  p95 %6.2f ms  p99 %6.2f ms  max %7.2f ms  errors %d %v\n",
						s.Clients, s.RatePerS, s.LatencyMS.P50, s.LatencyMS.P95, s.LatencyMS.P99, s.LatencyMS.Max, s.Errors, s.ErrorCodes)
				})
				if err != nil {
					return err
				}
				ours := map[int]float64{}
				for _, s := range rep.Steps {
					ours[s.Clients] = s.RatePerS
				}
				for _, s := range rep.Versus.Steps {
					fmt.Fprintf(out, "versus fedora, %3d clients: %.1f× its throughput (%.0f against %.0f works/s), p99 %.2f of its\n",
						s.Clients, s.Ratio, ours[s.Clients], s.RatePerS, s.P99Ratio)
				}
			}
			return finish(out, rep, jsonPath, reportDir)
		},
	}
	f := cmd.Flags()
	f.StringVar(&target, "target", "", "create works at this URL (…/api/v1/works) instead of starting a server")
	f.StringVar(&token, "token", "", "with --target: the API token to send with every request (shelfmark token create)")
	f.BoolVar(&compare, "compare-noauth", true, "measure each step also without authentication, in alternating rounds, against the same server (not with --target or --fedora)")
	f.DurationVar(&round, "round", time.Second, "length of one round of the comparison with and without authentication")
	f.StringVar(&fedora, "fedora", "", "aim LDP POSTs of the same Turtle at this Fedora container URL")
	f.StringVar(&versus, "versus-fedora", "", "after the started server, run the same ramp against this Fedora container URL and report the ratio at each client count")
	f.StringVar(&database, "database", "", "PostgreSQL URL for the started server (empty: SQLite)")
	f.StringVar(&durability, "durability", "safe", "safe or relaxed (see serve --help)")
	f.StringVar(&clients, "clients", "1,2,4,8,16,32,64", "client counts, one step each")
	f.StringVar(&format, "format", "turtle", "request body: turtle or json")
	f.StringVar(&generator, "generator", "go", `load generator: "go" (built in) or "wrk" (apt-get install wrk; what Fedora's published figures used)`)
	f.DurationVar(&step, "step", 5*time.Second, "measured time per step")
	f.DurationVar(&warmup, "warmup", time.Second, "unmeasured time before each step")
	f.BoolVar(&settle, "settle", true, "before each step, wait until the started server's preservation copy has caught up with the steps before (it writes a work's copy seconds after its create, which the next step would otherwise pay for); for a step that also pays for its own copies, give --warmup longer than the copy's window (5 s)")
	f.IntVar(&triples, "triples", 54, "statements per work")
	f.StringVar(&jsonPath, "json", "", "write the report as JSON to this file")
	f.StringVar(&reportDir, "report", "", "write an HTML report with charts to this directory")
	cf.add(f)
	setup.AnnotateEnv(f)
	return cmd
}
