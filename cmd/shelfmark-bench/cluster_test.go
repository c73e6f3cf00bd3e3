package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark/bench"
	"github.com/shelfmark/shelfmark/internal/testkit"
)

// benchClusterDSN returns the test database, or skips (fails in CI).
func benchClusterDSN(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("SHELFMARK_TEST_DATABASE_URL")
	if dsn == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("SHELFMARK_TEST_DATABASE_URL is not set")
		}
		t.Skip("SHELFMARK_TEST_DATABASE_URL is not set")
	}
	return dsn
}

// runBench runs the built shelfmark with args (a bench command writing
// --json to the returned report) and reads its report.
func runBench(t *testing.T, bin string, args ...string) *bench.Report {
	t.Helper()
	path := filepath.Join(t.TempDir(), "report.json")
	cmd := exec.Command(bin, append(args, "--json", path)...)
	cmd.Env = append(testkit.CleanEnv(filepath.Dir(bin)), "SHELFMARK_VERSITYGW="+os.Getenv("SHELFMARK_VERSITYGW"))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("shelfmark %s\n%s", strings.Join(args, " "), out.String())
	if err != nil {
		t.Fatalf("shelfmark %s: %v", strings.Join(args, " "), err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep bench.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return &rep
}

// checkConfigs checks what every run over several configurations must
// hold: one configuration per server count (and store) in order, each
// with its own steps naming it, no errors, the works counted in its
// database equal to the items it reports, and the CPU of its servers and
// of PostgreSQL measured.
func checkConfigs(t *testing.T, rep *bench.Report, stores []string, counts []int, stepsPer int) {
	t.Helper()
	if len(rep.Configurations) != len(stores)*len(counts) {
		t.Fatalf("%d configurations, want %d", len(rep.Configurations), len(stores)*len(counts))
	}
	var items int64
	steps := 0
	for i, c := range rep.Configurations {
		storage, n := stores[i/len(counts)], counts[i%len(counts)]
		if c.Servers != n || c.Storage != storage {
			t.Errorf("configuration %d is %d servers on %s, want %d on %s", i+1, c.Servers, c.Storage, n, storage)
		}
		if len(c.Steps) != stepsPer {
			t.Errorf("%d servers: %d steps, want %d", n, len(c.Steps), stepsPer)
		}
		var sum int64
		for _, s := range c.Steps {
			sum += s.Items
			if s.Servers != n || s.Storage != storage {
				t.Errorf("%d servers: a step names %d servers on %s", n, s.Servers, s.Storage)
			}
		}
		if c.Items == 0 || c.Items != sum || c.Items != c.Stored {
			t.Errorf("%d servers: %d items, %d in its steps, %d works stored", n, c.Items, sum, c.Stored)
		}
		if c.Errors != 0 {
			t.Errorf("%d servers: %d errors", n, c.Errors)
		}
		if c.RawLimitPerS <= 0 || c.FractionLimit <= 0 {
			t.Errorf("%d servers: raw limit %v, fraction %v", n, c.RawLimitPerS, c.FractionLimit)
		}
		if c.CPU == nil || c.CPU.ServerSeconds <= 0 || !c.CPU.Database || c.CPU.DatabaseSeconds <= 0 {
			t.Errorf("%d servers: CPU %+v", n, c.CPU)
		}
		items += c.Items
		steps += len(c.Steps)
	}
	if rep.Items != items || len(rep.Steps) != steps || rep.Errors != 0 || rep.Backend != "postgres" {
		t.Errorf("report: %d items (configurations %d), %d steps (%d), %d errors, backend %s", rep.Items, items, len(rep.Steps), steps, rep.Errors, rep.Backend)
	}
}

// TestBenchServers: bench rest and bench patents against 1 and 2 servers
// on one PostgreSQL in one run, each configuration in a schema of its own.
func TestBenchServers(t *testing.T) {
	dsn := benchClusterDSN(t)
	bin := filepath.Join(testkit.Build(t, "shelfmark", "shelfmark-bench"), "shelfmark-bench")

	t.Run("rest", func(t *testing.T) {
		// no warmup: every work stored is one the steps counted
		dir := t.TempDir()
		rep := runBench(t, bin, "rest", "--database", dsn, "--servers", "1,2", "--clients", "1,3", "--step", "300ms", "--warmup", "0s", "--durability", "relaxed",
			"--chart", filepath.Join(dir, "rest.svg"), "--report", filepath.Join(dir, "report"))
		checkConfigs(t, rep, []string{"local"}, []int{1, 2}, 2)
		for _, f := range []string{"rest-rate.svg", "rest-cpu.svg", "report/index.html"} {
			if b, err := os.ReadFile(filepath.Join(dir, f)); err != nil || !bytes.Contains(b, []byte("<polyline")) {
				t.Errorf("%s: %v, no line drawn", f, err)
			}
		}
		for _, c := range rep.Configurations {
			for _, s := range c.Steps {
				if s.CPU == nil || s.LatencyMS == nil || s.LatencyMS.P50 <= 0 {
					t.Errorf("%d servers, %d clients: CPU %v, latency %v", c.Servers, s.Clients, s.CPU, s.LatencyMS)
				}
			}
		}
	})
	t.Run("patents", func(t *testing.T) {
		const works = 60
		rep := runBench(t, bin, "patents", "--database", dsn, "--servers", "1,2", "--objects", "60", "--durability", "relaxed")
		checkConfigs(t, rep, []string{"local"}, []int{1, 2}, 20)
		for _, c := range rep.Configurations {
			if c.Items != works {
				t.Errorf("%d servers: %d works, want %d", c.Servers, c.Items, works)
			}
		}
	})
	t.Run("s3", func(t *testing.T) {
		if os.Getenv("SHELFMARK_VERSITYGW") == "" {
			if os.Getenv("SHELFMARK_REQUIRE_TOOLS") == "1" {
				t.Fatal("SHELFMARK_VERSITYGW is not set (scripts/testdeps.sh builds versitygw)")
			}
			t.Skip("SHELFMARK_VERSITYGW is not set (scripts/testdeps.sh builds versitygw)")
		}
		// each work with a file past the size an S3 store keeps in the
		// database, so that the S3 store takes one object per work
		const works = 30
		rep := runBench(t, bin, "patents", "--database", dsn, "--servers", "2", "--storage", "local,s3", "--objects", "30",
			"--scan-bytes", "70000", "--durability", "relaxed")
		checkConfigs(t, rep, []string{"local", "s3"}, []int{2}, 20)
		for _, c := range rep.Configurations {
			if c.Items != works {
				t.Errorf("%s: %d works, want %d", c.Storage, c.Items, works)
			}
		}
		if rep.Params["scan_bytes"] != 70000.0 {
			t.Errorf("params %v", rep.Params)
		}
	})
	t.Run("raw-apart", func(t *testing.T) { testBenchRestRawApart(t, bin) })
	t.Run("refused", func(t *testing.T) {
		for _, args := range [][]string{
			{"rest", "--servers", "2"}, // SQLite: no several servers
			{"rest", "--database", dsn, "--servers", "0"},
			{"rest", "--database", dsn, "--servers", "1", "--storage", "nfs"},
			{"rest", "--database", dsn, "--servers", "2", "--generator", "wrk"},
			{"patents", "--database", dsn, "--storage", "s3://bucket/prefix"}, // no endpoint
		} {
			cmd := exec.Command(bin, args...)
			cmd.Env = testkit.CleanEnv(filepath.Dir(bin))
			if out, err := cmd.CombinedOutput(); err == nil {
				t.Errorf("shelfmark %s: no error\n%s", strings.Join(args, " "), out)
			}
		}
	})
}

// testBenchRestRawApart: on PostgreSQL, bench rest measures its raw limit
// outside the server's tables, so the works the server holds afterwards
// are the ones the steps counted (with the raw rows in the same tables,
// the server's projector and indexer took them up during the steps).
func testBenchRestRawApart(t *testing.T, bin string) {
	dsn := testkit.Schema(t, benchClusterDSN(t))
	rep := runBench(t, bin, "rest", "--database", dsn, "--clients", "2", "--step", "300ms", "--warmup", "0s",
		"--compare-noauth=false", "--durability", "relaxed")
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var works int64
	if err := db.QueryRow("SELECT count(*) FROM resources WHERE kind = 'work' AND deleted IS NULL").Scan(&works); err != nil {
		t.Fatal(err)
	}
	if rep.Items == 0 || works != rep.Items || rep.RawLimitPerS <= 0 {
		t.Fatalf("%d works in the server's tables, %d counted by the steps (raw limit %.0f works/s)", works, rep.Items, rep.RawLimitPerS)
	}
}
