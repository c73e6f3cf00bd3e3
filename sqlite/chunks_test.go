package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// openChunks opens a database whose tracer records each statement and its
// rows.
func openChunks(t *testing.T) (*DB, *[]string) {
	t.Helper()
	var traced []string
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "chunks.db"), Options{
		Tracer: func(q string, n int64) { traced = append(traced, fmt.Sprintf("%d %s", n, q)) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, &traced
}

// readChunks runs query in a read transaction through shelfmark_chunks.
func readChunks(ctx context.Context, db *DB, query string, args []any, scan func(sqlstore.Scanner) error) error {
	return db.View(ctx, func(tx shelfmark.ReadTx) error {
		return tx.(*readTx).queryChunks(ctx, query, args, scan)
	})
}

// TestChunkScannerAsDatabaseSQL: for every kind of value SQLite returns
// and every destination a scan gives, a value read in a chunk fills the
// destination exactly as database/sql does from the driver's row, and
// fails where database/sql fails.
func TestChunkScannerAsDatabaseSQL(t *testing.T) {
	ctx := context.Background()
	db, _ := openChunks(t)
	values := []string{"0", "1", "-5", "1099511627776", "9223372036854775807", "-9223372036854775808", "'12'", "' 12'", "'1.5'",
		"1.5", "2.0", "-0.0", "1e300", "NULL", "'abc'", "''", "'true'", "'é€𝄞'", "x'3132'", "x''", "x'00ff'", "CAST('7' AS BLOB)"}
	show := func(v any) string {
		switch v := v.(type) {
		case *any:
			return fmt.Sprintf("%T %v", *v, *v)
		case **string:
			if *v == nil {
				return "nil"
			}
			return fmt.Sprintf("%q", **v)
		case *[]byte:
			return fmt.Sprintf("%v %q", *v == nil, *v)
		}
		return fmt.Sprintf("%+v", reflect.ValueOf(v).Elem().Interface())
	}
	dests := map[string]func() any{
		"int64":      func() any { return new(int64) },
		"int":        func() any { return new(int) },
		"float64":    func() any { return new(float64) },
		"string":     func() any { return new(string) },
		"*string":    func() any { return new(*string) },
		"[]byte":     func() any { return new([]byte) },
		"bool":       func() any { return new(bool) },
		"any":        func() any { return new(any) },
		"NullInt64":  func() any { return new(sql.NullInt64) },
		"NullString": func() any { return new(sql.NullString) },
		"nullable":   func() any { return new(nullable) },
	}
	for _, value := range values {
		for name, dest := range dests {
			want := dest()
			wantErr := db.read.QueryRowContext(ctx, "SELECT "+value).Scan(want)
			got := dest()
			var s string
			rows := 0
			gotErr := readChunks(ctx, db, "SELECT 1, 'x' UNION ALL SELECT "+value+", 'y'", nil, func(r sqlstore.Scanner) error {
				rows++
				if rows == 1 { // a row of another shape first
					var first int64
					if err := r.Scan(&first, &s); err != nil || first != 1 || s != "x" {
						return fmt.Errorf("the first row: %d %q %v", first, s, err)
					}
					return nil
				}
				return r.Scan(got, &s)
			})
			if (gotErr != nil) != (wantErr != nil) {
				t.Errorf("%s into %s: error %v, database/sql's %v", value, name, gotErr, wantErr)
				continue
			}
			if wantErr == nil && (show(got) != show(want) || s != "y") {
				t.Errorf("%s into %s: %s, database/sql's %s", value, name, show(got), show(want))
			}
		}
	}
}

// TestChunksRows: a statement's rows come back whole and in order across
// chunks (rows of every kind of value, one larger than a chunk, none at
// all), with the values bound as given, and the tracer sees the statement
// itself with its rows.
func TestChunksRows(t *testing.T) {
	ctx := context.Background()
	db, traced := openChunks(t)
	// 5,000 rows of about 70 bytes: several chunks; row 2,500 holds 200
	// KiB, more than a chunk
	const q = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
SELECT i, i * 1.5, 'row ' || i || ?2, CASE WHEN i = 2500 THEN zeroblob(204800) ELSE x'00ff' END, CASE WHEN i % 2 = 0 THEN NULL ELSE -i END,
  printf('%030d', i), i % 3, printf('long %d %s', i, hex(randomblob(12))) FROM n`
	var n int64
	err := readChunks(ctx, db, q, []any{5000, "é"}, func(r sqlstore.Scanner) error {
		n++
		var i int64
		var f float64
		var s string
		var b []byte
		var neg *string
		// long texts (past chunkShort) on either side of a number
		var long1, long2 string
		var mod int64
		if err := r.Scan(&i, &f, &s, &b, &neg, &long1, &mod, &long2); err != nil {
			return err
		}
		if long1 != fmt.Sprintf("%030d", i) || mod != i%3 || !strings.HasPrefix(long2, fmt.Sprintf("long %d ", i)) || len(long2) != len(fmt.Sprintf("long %d ", i))+24 {
			return fmt.Errorf("row %d: long texts %q %q, number %d", n, long1, long2, mod)
		}
		wantB := []byte{0, 0xff}
		if i == 2500 {
			wantB = make([]byte, 204800)
		}
		if i != n || f != float64(i)*1.5 || s != fmt.Sprintf("row %dé", i) || !bytes.Equal(b, wantB) ||
			(i%2 == 0) != (neg == nil) || (neg != nil && *neg != fmt.Sprint(-i)) {
			return fmt.Errorf("row %d: %d %v %q %d bytes %v", n, i, f, s, len(b), neg)
		}
		return nil
	})
	if err != nil || n != 5000 {
		t.Fatalf("%d rows, %v", n, err)
	}
	if len(*traced) == 0 || (*traced)[len(*traced)-1] != "5000 "+q {
		t.Errorf("traced %q", *traced)
	}
	n = 0
	if err := readChunks(ctx, db, "SELECT 1 WHERE ?1", []any{false}, func(sqlstore.Scanner) error { n++; return nil }); err != nil || n != 0 {
		t.Errorf("no rows: %d rows, %v", n, err)
	}
}

// TestChunksNested: a chunked read can run another inside its loop, and
// two cursors of one statement at once each read it whole (the second
// prepares one of its own); the kept statement serves the next read.
func TestChunksNested(t *testing.T) {
	ctx := context.Background()
	db, _ := openChunks(t)
	const outerQ, innerQ = `SELECT value FROM json_each(?1)`, `SELECT value * 10 FROM json_each(?1)`
	var got []string
	err := db.View(ctx, func(tx shelfmark.ReadTx) error {
		rt := tx.(*readTx)
		return rt.queryChunks(ctx, outerQ, []any{"[1,2]"}, func(r sqlstore.Scanner) error {
			var outer int64
			if err := r.Scan(&outer); err != nil {
				return err
			}
			return rt.queryChunks(ctx, innerQ, []any{"[1,2]"}, func(r sqlstore.Scanner) error {
				var inner int64
				if err := r.Scan(&inner); err != nil {
					return err
				}
				got = append(got, fmt.Sprint(outer, inner))
				return nil
			})
		})
	})
	if err != nil || strings.Join(got, ",") != "1 10,1 20,2 10,2 20" {
		t.Fatalf("%q %v", got, err)
	}
	// one statement, two cursors: a join of its two runs
	got = nil
	err = db.View(ctx, func(tx shelfmark.ReadTx) error {
		return tx.(*readTx).query(ctx, `SELECT a.chunk, b.chunk FROM shelfmark_chunks(?1, '[1,2]') a, shelfmark_chunks(?1, '[3]') b`,
			[]any{outerQ}, func(r sqlstore.Scanner) error {
				var a, b []byte
				if err := r.Scan(&a, &b); err != nil {
					return err
				}
				for _, c := range [][]byte{a, b} {
					var cs chunkScanner
					if err := cs.reset(c); err != nil {
						return err
					}
					for cs.next() {
						var v string
						if err := cs.Scan(&v); err != nil {
							return err
						}
						got = append(got, v)
					}
				}
				return nil
			})
	})
	if err != nil || strings.Join(got, ",") != "1,2,3" {
		t.Fatalf("two cursors of one statement: %q %v", got, err)
	}
	for range 3 { // again and again, after both
		got = nil
		err := readChunks(ctx, db, outerQ, []any{"[3]"}, func(r sqlstore.Scanner) error {
			var v string
			err := r.Scan(&v)
			got = append(got, v)
			return err
		})
		if err != nil || strings.Join(got, ",") != "3" {
			t.Fatalf("%q %v", got, err)
		}
	}
}

// TestChunksRefuse: a statement that does not parse, that writes, that is
// two statements, or that is given more values than it takes is an error
// that says so, and nothing is written; a scan into the wrong number of
// destinations is an error as in database/sql.
func TestChunksRefuse(t *testing.T) {
	ctx := context.Background()
	db, _ := openChunks(t)
	if _, err := db.write.ExecContext(ctx, "CREATE TABLE t (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	nothing := func(sqlstore.Scanner) error { return nil }
	for _, c := range []struct {
		query string
		args  []any
		want  string
	}{
		{"SELEC 1", nil, "syntax error"},
		{"INSERT INTO t VALUES (1) RETURNING x", nil, "reads only"},
		{"SELECT 1; SELECT 2", nil, "one statement only"},
		{"SELECT ?1", []any{1, 2}, "more values than"},
		{"SELECT * FROM missing", nil, "no such table"},
	} {
		err := db.Update(ctx, func(tx shelfmark.WriteTx) error {
			return tx.(*writeTx).queryChunks(ctx, c.query, c.args, nothing)
		})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.query, err, c.want)
		}
	}
	var n int
	if err := db.read.QueryRowContext(ctx, "SELECT count(*) FROM t").Scan(&n); err != nil || n != 0 {
		t.Errorf("rows written: %d %v", n, err)
	}
	err := readChunks(ctx, db, "SELECT 1, 2", nil, func(r sqlstore.Scanner) error {
		var a int
		return r.Scan(&a)
	})
	if err == nil || !strings.Contains(err.Error(), "expected 2 destination arguments") {
		t.Errorf("one destination for two columns: %v", err)
	}
}

// TestChunksCancel: a chunked read stops when its context ends, with the
// context's error, whether the end comes before or during it.
func TestChunksCancel(t *testing.T) {
	db, _ := openChunks(t)
	const q = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n`
	ctx, cancel := context.WithCancel(context.Background())
	rows := 0
	err := readChunks(ctx, db, q, nil, func(sqlstore.Scanner) error {
		if rows++; rows == 10 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) && (err == nil || !strings.Contains(err.Error(), "interrupt")) {
		t.Fatalf("an endless read cancelled after %d rows: %v", rows, err)
	}
	// a statement that never gives a row: the end interrupts SQLite
	// inside shelfmark_chunks, while it steps the statement
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = readChunks(ctx, db, `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT max(i) FROM n`, nil,
		func(sqlstore.Scanner) error { return errors.New("a row") })
	if !errors.Is(err, context.DeadlineExceeded) && (err == nil || !strings.Contains(err.Error(), "interrupt")) {
		t.Fatalf("an endless statement past its deadline: %v", err)
	}
	// the connection serves the next read
	n := 0
	if err := readChunks(context.Background(), db, "SELECT 1", nil, func(sqlstore.Scanner) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("after the cancel: %d rows, %v", n, err)
	}
}

// FuzzChunkScanner: a chunk that does not decode is an error, never a
// panic nor a read past its end.
func FuzzChunkScanner(f *testing.F) {
	f.Add([]byte{1, 0, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{2, 0, 0, 0, 3, 3, 0, 0, 0, 'a', 'b', 'c', 0})
	f.Add([]byte{1, 0, 0, 0, 4, 255, 255, 255, 255})
	f.Fuzz(func(t *testing.T, chunk []byte) {
		var cs chunkScanner
		if cs.reset(chunk) != nil {
			return
		}
		for cs.next() {
			dest := make([]any, cs.ncol)
			for i := range dest {
				dest[i] = new(any)
			}
			_ = cs.Scan(dest...)
		}
	})
}

// TestChunksClose: the statements shelfmark_chunks keeps do not keep a
// connection open once the store is closed. SQLite closes a connection
// with statements still prepared as a zombie that keeps the database
// open; the last connection to close removes the write-ahead log, so the
// log outliving Close would show one.
func TestChunksClose(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "close.db")
	db, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.write.ExecContext(ctx, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2)"); err != nil {
		t.Fatal(err)
	}
	for range 4 { // on the write connection and on readers
		err := db.Update(ctx, func(tx shelfmark.WriteTx) error {
			return tx.(*writeTx).queryChunks(ctx, "SELECT x FROM t", nil, func(sqlstore.Scanner) error { return nil })
		})
		if err == nil {
			err = readChunks(ctx, db, "SELECT x FROM t WHERE x > ?1", []any{0}, func(sqlstore.Scanner) error { return nil })
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path + "-wal"); err != nil {
		t.Fatalf("no write-ahead log while open: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + "-wal"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the write-ahead log outlives Close (a connection left open): %v", err)
	}
}
