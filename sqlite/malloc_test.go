package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestTuneMalloc: where the C library is glibc, opening a store sets how
// much freed memory the allocator keeps (mallocKeep), unless the operator
// set MALLOC_TRIM_THRESHOLD_ (a check that the C side finds glibc at all:
// its first version tested __GLIBC__ before any header defined it, and
// did nothing).
func TestTuneMalloc(t *testing.T) {
	if _, set := os.LookupEnv("MALLOC_TRIM_THRESHOLD_"); set {
		t.Skip("MALLOC_TRIM_THRESHOLD_ is set: the operator's setting stands")
	}
	if !glibc() {
		t.Skip("the C library is not glibc: nothing to set")
	}
	if !tuneMalloc() {
		t.Fatal("glibc, but the allocator's trim threshold was not set")
	}
}

// TestMemstatusOff: SQLite counts no memory in a process that loads this
// package (memstatusOff, set before main), so that no allocation of any
// connection takes the lock the counters share: after the package's
// other tests and a store written and read, SQLite has counted nothing.
func TestMemstatusOff(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "m.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if !memstatusOff() {
		t.Fatal("SQLite was initialized before this package was loaded: its memory is still counted")
	}
	var n int
	if err := db.read.QueryRowContext(ctx, "SELECT count(*) FROM resources").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if used := memoryUsed(); used != 0 {
		t.Errorf("SQLite counts %d bytes allocated", used)
	}
}
