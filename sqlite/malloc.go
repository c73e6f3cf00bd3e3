package sqlite

// int shelfmark_malloc_keep(int bytes);
// int shelfmark_glibc(void);
// int shelfmark_memstatus_off(void);
// long long shelfmark_memory_used(void);
import "C"

import (
	"os"
	"sync"
)

// mallocKeep is how much free memory glibc's allocator keeps at the top
// of each of its heaps instead of giving it back to the system at once
// (M_TRIM_THRESHOLD; glibc's own default is 128 KiB).
//
// SQLite allocates its temporary b-trees and sorters (GROUP BY, ORDER BY,
// DISTINCT, window functions, materialized CTEs: a search page with its
// facets has a dozen) from the C heap and frees them at the end of the
// statement; with glibc's default, that memory went back to the system
// after every statement and the next one faulted it in again, page by
// page. Measured on a search page of works with its facets (2 cores):
// 1.85 ms a statement with the default, 1.13 ms keeping 4 MiB, 1.09 ms
// keeping 8 MiB; a page of documents 1.13 and 0.84 ms. The price is up to
// that much memory kept per heap (glibc makes one per thread that
// allocates at once, up to eight a core): a half-hour soak keeping 8 MiB
// ended with 17% more RSS than its first tenth, the heaps a crawler storm
// had added keeping theirs, so it keeps 4 MiB, which was as fast.
const mallocKeep = 4 << 20

// tuneMalloc sets mallocKeep once for the process, unless the operator
// set glibc's MALLOC_TRIM_THRESHOLD_ (which then stands), and reports
// whether it did. It does nothing where the C library is not glibc.
var tuneMalloc = sync.OnceValue(func() bool {
	if _, set := os.LookupEnv("MALLOC_TRIM_THRESHOLD_"); set {
		return false
	}
	return C.shelfmark_malloc_keep(C.int(mallocKeep)) == 1
})

// glibc reports whether the C library is glibc.
func glibc() bool { return C.shelfmark_glibc() == 1 }

// memstatusOff stops SQLite from counting the memory it allocates, once
// for the process, and reports whether it did. Counting takes a lock
// that every connection shares at each of SQLite's allocations (a read
// of a book's rows makes thousands), and Shelfmark reads none of the
// counts (no soft heap limit is set). SQLite takes the setting only
// before it is initialized, which the first connection of the process
// does, whichever package opens it (the small-blob store and the ingest's
// key set open databases of their own), so it is set when this package
// is loaded, before main runs; called later, it is a no-op and SQLite
// goes on counting.
var memstatusOff = sync.OnceValue(func() bool {
	return C.shelfmark_memstatus_off() == 0
})

// init sets memstatusOff: a setting of the C library for the whole
// process, which SQLite takes only before its first connection.
func init() { memstatusOff() }

// memoryUsed is the memory SQLite counts as allocated, in bytes: 0 once
// memstatusOff has stopped the counting.
func memoryUsed() int64 { return int64(C.shelfmark_memory_used()) }
