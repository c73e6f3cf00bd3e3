package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	_ "github.com/mattn/go-sqlite3"

	"github.com/shelfmark/shelfmark/sqlite"
)

// TestSnapshotWhileWriting: Snapshot copies a database another connection
// keeps writing (each transaction adds two rows) and finishes: the copy is
// one moment of it (an even number of rows, as many as some committed
// state held), whole (integrity_check), a single file in rollback-journal
// mode; writes went on during the copy. A destination that exists is
// refused.
func TestSnapshotWhileWriting(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	src := filepath.Join(dir, "src.db")
	w, err := sql.Open("sqlite3", "file:"+src+"?_journal_mode=WAL&_busy_timeout=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	w.SetMaxOpenConns(1)
	if _, err := w.Exec(`CREATE TABLE t (a INTEGER, pad TEXT)`); err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 3000)
	insertPair := func() error {
		tx, err := w.Begin()
		if err != nil {
			return err
		}
		for range 2 {
			if _, err := tx.Exec(`INSERT INTO t VALUES (1, ?)`, pad); err != nil {
				tx.Rollback()
				return err
			}
		}
		return tx.Commit()
	}
	// about 36 MB in one transaction: a copy of several steps
	if _, err := w.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 12000)
		INSERT INTO t SELECT 1, ? FROM n`, pad); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var commits atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	var werr error
	go func() {
		defer wg.Done()
		for !stop.Load() {
			if werr = insertPair(); werr != nil {
				return
			}
			commits.Add(1)
		}
	}()
	dst := filepath.Join(dir, "copy.db")
	for commits.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	during, steps := commits.Load(), 0
	err = sqlite.Snapshot(ctx, src, dst, func(done, total int) {
		steps++
		if done == total {
			during = commits.Load() - during
		}
	})
	stop.Store(true)
	wg.Wait()
	if err != nil || werr != nil {
		t.Fatalf("snapshot: %v; writer: %v", err, werr)
	}
	if steps < 2 || during == 0 {
		t.Fatalf("%d steps, %d commits during the copy: the test did not copy while writing", steps, during)
	}
	if _, err := os.Stat(dst + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the copy has a -wal beside it: %v", err)
	}
	c, err := sql.Open("sqlite3", "file:"+dst+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var n int64
	var check, mode string
	if err := c.QueryRow(`SELECT count(*) FROM t`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if err := c.QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity_check: %q %v", check, err)
	}
	if err := c.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "delete" {
		t.Fatalf("journal_mode %q %v, want delete", mode, err)
	}
	var total int64
	if err := w.QueryRow(`SELECT count(*) FROM t`).Scan(&total); err != nil {
		t.Fatal(err)
	}
	if n%2 != 0 || n < 12000 || n >= total {
		t.Fatalf("the copy holds %d rows (the original %d at the end, 12000 at the start): not one committed state", n, total)
	}
	t.Logf("copied %d rows in %d steps while %d transactions committed", n, steps, during)
	if err := sqlite.Snapshot(ctx, src, dst, nil); err == nil {
		t.Fatal("a snapshot over an existing file succeeded")
	}
}
