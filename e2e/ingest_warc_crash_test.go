package e2e

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/internal/testkit"
	"github.com/shelfmark/shelfmark/storagetest"
)

// TestIngestWARCResumeAfterKill: `shelfmark ingest` of a directory of WARC
// files is killed with SIGKILL while it indexes (each time after the index
// moved on since the last kill), three times, then run to the end; the link
// index then holds exactly what the in-memory reference computes from the
// crawl's link graph. On SQLite, and on PostgreSQL when a test server is
// configured.
func TestIngestWARCResumeAfterKill(t *testing.T) {
	backends := []string{"sqlite"}
	if os.Getenv("SHELFMARK_TEST_DATABASE_URL") != "" {
		backends = append(backends, "postgres")
	}
	for _, backend := range backends {
		t.Run(backend, func(t *testing.T) { testWARCKill(t, backend) })
	}
}

func testWARCKill(t *testing.T, backend string) {
	dir := t.TempDir()
	crawlDir, data := filepath.Join(dir, "crawl"), filepath.Join(dir, "data")
	if err := os.MkdirAll(crawlDir, 0o755); err != nil {
		t.Fatal(err)
	}
	crawl := storagetest.GenerateCrawl(11, 900, 3)
	paths, err := crawl.Write(crawlDir)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		total += fi.Size()
	}
	ref, err := crawl.Reference(nil)
	if err != nil {
		t.Fatal(err)
	}
	database := ""
	if backend == "postgres" {
		database = testkit.PostgresSchema(t)
	}
	argv := []string{"ingest", crawlDir, "--data", data, "--crawl", "killed", "--batch", "10"}
	if database != "" {
		argv = append(argv, "--database", database)
	}
	ctx := context.Background()
	// the store exists (migrated) before the first child starts, so the
	// polls below never race the child to make it
	if store, err := setup.OpenStorage(ctx, database, data, "safe", 2); err != nil {
		t.Fatal(err)
	} else {
		store.Close()
	}
	// indexed reports the sum of the files' offsets and whether all are done
	indexed := func() (int64, bool) {
		store, err := setup.OpenStorage(ctx, database, data, "safe", 2)
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		var sum int64
		done := true
		n := 0
		err = store.View(ctx, func(tx shelfmark.ReadTx) error {
			fs, err := tx.WebFiles(ctx, 0, 100)
			for _, f := range fs {
				sum += f.Offset
				done = done && f.Done
			}
			n = len(fs)
			return err
		})
		if err != nil {
			return 0, false
		}
		return sum, done && n == crawl.Files
	}
	// run runs one ingest; a limited one is killed once the files'
	// offsets sum past killAfter
	run := func(limited bool, killAfter int64) (killed bool, at int64) {
		args := argv
		if limited {
			// slow enough that a kill lands while it indexes
			args = append(append([]string{}, argv...), "--rate", "1500")
		}
		cmd := childCommand(t, nil, args...)
		var buf safeBuffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		if !limited {
			if err := <-done; err != nil {
				t.Fatalf("final ingest failed: %v\n%s", err, buf.Bytes())
			}
			return false, 0
		}
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("ingest failed before the kill: %v\n%s", err, buf.Bytes())
				}
				return false, 0
			case <-tick.C:
				if sum, all := indexed(); sum > killAfter && !all {
					_ = cmd.Process.Signal(syscall.SIGKILL)
					<-done
					return true, sum
				}
			}
		}
	}
	// killed at a fifth, two fifths and three fifths of the bytes
	kills := 0
	var last int64
	for k := range 3 {
		killed, at := run(true, int64(k+1)*total/5)
		if !killed {
			break
		}
		kills++
		last = at
	}
	if kills == 0 {
		t.Fatal("no run was killed while indexing: the rate limit did not hold the ingest back long enough")
	}
	run(false, 0)
	if _, all := indexed(); !all {
		t.Fatal("after the final run, not every file is indexed")
	}
	t.Logf("%d kills, the last at %d of %d bytes indexed", kills, last, total)
	storagetest.CheckWebIndex(t, shelfmark.WithCaller(ctx, shelfmark.SystemCaller("test")), openRepo(t, database, data), ref)
}

// openRepo opens the engine over the store of --database / --data, as the
// commands do, until the test ends.
func openRepo(t *testing.T, database, data string) *shelfmark.Repository {
	t.Helper()
	store, err := setup.OpenStorage(context.Background(), database, data, "safe", 4)
	if err != nil {
		t.Fatal(err)
	}
	return testkit.Repo(t, store)
}
