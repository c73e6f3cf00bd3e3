package preserve

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/sqlite"
)

// benchStack is a benchmark's repository on SQLite, its content store and
// its preserver, on a clock the benchmark moves.
type benchStack struct {
	repo  *shelfmark.Repository
	blobs *blob.LocalStore
	clk   *clock
	p     *Preserver
}

// newBenchStack opens a benchStack in a fresh directory, with the storage
// root in a fresh directory under ocflDir (removed afterwards) when that is
// set; all is closed when b ends.
func newBenchStack(b *testing.B, ocflDir string) *benchStack {
	dir := b.TempDir()
	store, err := sqlite.Open(context.Background(), filepath.Join(dir, "db.sqlite"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	ids, err := shelfmark.LoadIDCodec(context.Background(), store)
	if err != nil {
		b.Fatal(err)
	}
	clk := &clock{t: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: ids, Now: clk.Now})
	b.Cleanup(func() { repo.Close() })
	blobs, err := blob.NewLocal(filepath.Join(dir, "blobs"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { blobs.Close() })
	odir := filepath.Join(dir, "ocfl")
	if ocflDir != "" {
		odir = filepath.Join(ocflDir, filepath.Base(dir))
		b.Cleanup(func() { os.RemoveAll(odir) })
	}
	fsys, err := ocfl.NewDirFS(odir)
	if err != nil {
		b.Fatal(err)
	}
	root, err := ocfl.InitRoot(context.Background(), fsys)
	if err != nil {
		b.Fatal(err)
	}
	return &benchStack{repo: repo, blobs: blobs, clk: clk, p: New(store, blobs, root, ids, Options{Now: clk.Now})}
}

// BenchmarkPreserveNewWorks measures the preserver's catch-up over new
// works of ten statements each and no files (what one-work-per-request
// ingest over the REST API makes), on SQLite: the time and the processor
// time per work, the reads of their states and the writes of their
// objects together. SHELFMARK_BENCH_OCFL names a directory for the
// storage root (a memory file system shows the preserver's own part).
func BenchmarkPreserveNewWorks(b *testing.B) {
	ctx := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("bench"))
	bs := newBenchStack(b, os.Getenv("SHELFMARK_BENCH_OCFL"))
	repo, clk, p := bs.repo, bs.clk, bs.p
	const works = 1000
	var cpu time.Duration
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		nrs := make([]*shelfmark.NewResource, works)
		for j := range nrs {
			md := titled(fmt.Sprintf("Work %d of round %d", j, i))
			for k := range 9 {
				md = append(md, shelfmark.Statement{Predicate: "http://purl.org/dc/terms/subject", Object: shelfmark.NewLiteral(fmt.Sprintf("Subject %d", k))})
			}
			nrs[j] = &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: md}
		}
		if _, errs := repo.CreateResources(ctx, nrs); errs != nil {
			for _, err := range errs {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
		clk.Add(time.Hour)
		b.StartTimer()
		before := cpuTime()
		if _, versions, err := p.CatchUp(context.Background()); err != nil || versions != works {
			b.Fatalf("%d versions, %v", versions, err)
		}
		cpu += cpuTime() - before
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*works), "µs/work")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*works), "cpu-µs/work")
}

// cpuTime is the user and system CPU time of this process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
