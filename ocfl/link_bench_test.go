package ocfl

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// BenchmarkRootInventoryPlacement measures what a Batch spends putting an
// object's root inventory in place, written anew (as on an FS that is not
// a Linker) or as a second name of the version's, in the processor time
// of the writing thread, the kernel's included. The two alternate object
// by object, so that both meet the file system in the same state (on a
// local disk the cost of a new file varies with what was deleted lately).
// Each object is new, in a tuple directory of its own as the layout makes
// them: go test ./ocfl -run X -bench RootInventoryPlacement.
func BenchmarkRootInventoryPlacement(b *testing.B) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ctx := context.Background()
	fsys, err := NewDirFS(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	inv := bytes.Repeat([]byte("x"), 2000)
	var written, linked time.Duration
	var nw, nl int
	for i := 0; b.Loop(); i++ {
		dir := fmt.Sprintf("%03x/%08d", i%4096, i)
		if err := fsys.WriteLater(ctx, dir+"/v1/inventory.json", bytes.NewReader(inv), true); err != nil {
			b.Fatal(err)
		}
		t := threadCPU()
		if i%2 == 0 {
			err = fsys.WriteLater(ctx, dir+"/inventory.json", bytes.NewReader(inv), false)
			written += threadCPU() - t
			nw++
		} else {
			err = fsys.LinkLater(ctx, dir+"/v1/inventory.json", dir+"/inventory.json")
			linked += threadCPU() - t
			nl++
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if nw > 0 && nl > 0 {
		b.ReportMetric(float64(written.Microseconds())/float64(nw), "written-cpu-µs")
		b.ReportMetric(float64(linked.Microseconds())/float64(nl), "linked-cpu-µs")
	}
}

// threadCPU is the user and system time of the calling thread (Linux; 0
// elsewhere).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1, &ru); err != nil { // RUSAGE_THREAD
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
