package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/shelfmark/shelfmark"
)

// TestViewBeginsWithFirstStatement: a View's transaction begins with its
// first statement (sent in one batch with it, or on its own before a
// statement that names its pgx execution mode) and is the transaction a
// View promises: REPEATABLE READ and READ ONLY, its snapshot taken at the
// first statement, so a row committed after it is not seen by the next.
// A first statement that fails ends the View with its error and leaves
// the pool's connection usable.
func TestViewBeginsWithFirstStatement(t *testing.T) {
	db, _ := openTest(t, Options{MaxConns: 1}) // one connection: every View reuses it
	ctx := context.Background()
	insert(t, db, 1)
	count := func(tx *readTx, args ...any) int64 {
		t.Helper()
		var n int64
		if err := tx.r.queryRow(ctx, "SELECT count(*) FROM resources", args, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	rows := int64(1) // the rows the table holds: one more for each subtest run
	for _, c := range []struct {
		name  string
		first []any // the first statement's arguments
	}{{"batched", nil}, {"own execution mode", []any{pgx.QueryExecModeExec}}} {
		t.Run(c.name, func(t *testing.T) {
			var before, after int64
			var iso, ro string
			err := db.View(ctx, func(rt shelfmark.ReadTx) error {
				tx := rt.(*readTx)
				before = count(tx, c.first...)
				// committed by another connection after the first statement
				// (the pool's one is this View's: the write opens its own)
				other, err := pgx.Connect(ctx, db.pool.Config().ConnConfig.ConnString())
				if err != nil {
					return err
				}
				defer other.Close(ctx)
				if _, err := other.Exec(ctx, `INSERT INTO resources (key, kind, visibility, version, seq, created, modified)
					SELECT max(key) + 1, 'work', 'public', 1, 1, 0, 0 FROM resources`); err != nil {
					return err
				}
				rows++
				after = count(tx)
				return tx.r.queryRow(ctx, "SELECT current_setting('transaction_isolation'), current_setting('transaction_read_only')", nil, &iso, &ro)
			})
			if err != nil {
				t.Fatal(err)
			}
			if before != after {
				t.Errorf("the View saw %d rows, then %d: its snapshot was not taken at its first statement", before, after)
			}
			if iso != "repeatable read" || ro != "on" {
				t.Errorf("the View ran in isolation %q, read only %q", iso, ro)
			}
		})
	}
	err := db.View(ctx, func(rt shelfmark.ReadTx) error {
		_, err := rt.(*readTx).r.exec(ctx, "DELETE FROM resources")
		return err
	})
	if err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("a write in a View: %v, want the read-only transaction's refusal", err)
	}
	err = db.View(ctx, func(rt shelfmark.ReadTx) error {
		var n int64
		return rt.(*readTx).r.queryRow(ctx, "SELECT count(*) FROM no_such_table", nil, &n)
	})
	if err == nil || !strings.Contains(err.Error(), "no_such_table") {
		t.Errorf("a failing first statement: %v", err)
	}
	if err := db.View(ctx, func(shelfmark.ReadTx) error { return nil }); err != nil {
		t.Errorf("a View of no statement: %v", err)
	}
	var n int64
	if err := db.View(ctx, func(rt shelfmark.ReadTx) error { n = count(rt.(*readTx)); return nil }); err != nil || n != rows {
		t.Errorf("after a failed View, the next reads %d rows (%v), want %d", n, err, rows)
	}
}

// TestViewEndsItsTransaction: a View returns before its transaction's
// COMMIT or ROLLBACK is answered, and the transaction still ends, on
// every way out of fn (a result, an error, a panic): a lock that waits
// for every reader of the table is granted, and the pool's one connection
// serves the next View (the same backend: a connection released still in
// its transaction would have been closed by the pool).
func TestViewEndsItsTransaction(t *testing.T) {
	db, _ := openTest(t, Options{MaxConns: 1})
	ctx := context.Background()
	insert(t, db, 1)
	var pid int32 // the backend of the last read
	read := func(rt shelfmark.ReadTx) {
		var n int64
		if err := rt.(*readTx).r.queryRow(ctx, "SELECT count(*), pg_backend_pid() FROM resources", nil, &n, &pid); err != nil {
			t.Fatal(err)
		}
	}
	errFn := errors.New("fn's own error")
	for _, c := range []struct {
		name string
		fn   func(shelfmark.ReadTx) error
	}{
		{"result", func(rt shelfmark.ReadTx) error { read(rt); return nil }},
		{"error", func(rt shelfmark.ReadTx) error { read(rt); return errFn }},
		{"panic", func(rt shelfmark.ReadTx) error { read(rt); panic(errFn) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			func() {
				defer func() {
					if r := recover(); r != nil && r != errFn {
						panic(r)
					}
				}()
				if err := db.View(ctx, c.fn); err != nil && err != errFn {
					t.Fatal(err)
				}
			}()
			// the View's AccessShareLock on resources goes with its transaction
			other, err := pgx.Connect(ctx, db.pool.Config().ConnConfig.ConnString())
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close(ctx)
			tx, err := other.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback(ctx)
			if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '20s'"); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "LOCK TABLE resources IN ACCESS EXCLUSIVE MODE"); err != nil {
				t.Fatalf("the View's transaction did not end: %v", err)
			}
			if err := tx.Rollback(ctx); err != nil {
				t.Fatal(err)
			}
			before := pid
			next, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			if err := db.View(next, func(rt shelfmark.ReadTx) error { read(rt); return nil }); err != nil {
				t.Fatalf("the View's connection did not come back to the pool: %v", err)
			}
			if pid != before {
				t.Errorf("the next View ran on backend %d, not on the View's %d: its connection was closed, not ended", pid, before)
			}
		})
	}
}
