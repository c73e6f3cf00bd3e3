package sqlite

import (
	"os"
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
