package sqlite_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// BenchmarkChangeWorks makes every work of a repository of 1,000 and of
// 10,000 works private with one ChangeWorks over the workspace's "every
// work" list, as an administrator, and reports the works changed a
// second and the most heap the run held above what it held before it
// (sampled at each work's progress): the walk reads 200 works at a time,
// so the heap is the same at both sizes.
func BenchmarkChangeWorks(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("works=%d", n), func(b *testing.B) {
			ctx := context.Background()
			repo := benchRepo(b)
			meta := benchMetadata(16)
			for done := 0; done < n; done += shelfmark.MaxPageSize {
				nrs := make([]*shelfmark.NewResource, shelfmark.MaxPageSize)
				for i := range nrs {
					nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: meta}
				}
				if _, errs := repo.CreateResources(ctx, nrs); errs[0] != nil {
					b.Fatal(errs[0])
				}
			}
			admin := shelfmark.WithCaller(ctx, &shelfmark.Caller{User: 1, Name: "admin", Admin: true, Scope: shelfmark.ScopeWrite})
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				vis := shelfmark.Private
				if i%2 == 1 {
					vis = shelfmark.Public
				}
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				base, peak := ms.HeapAlloc, ms.HeapAlloc
				p, err := repo.ChangeWorks(admin, shelfmark.WorkspaceQuery{Scope: shelfmark.WorkspaceAll}, nil, shelfmark.WorkChange{Visibility: &vis},
					func(p shelfmark.WorkChangeProgress) {
						if p.Changed%100 == 0 {
							runtime.ReadMemStats(&ms)
							peak = max(peak, ms.HeapAlloc)
						}
					})
				if err != nil || p.Changed != n {
					b.Fatalf("changed %d of %d: %v", p.Changed, n, err)
				}
				b.ReportMetric(float64(peak-base)/(1<<20), "peak-heap-MiB")
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "works/s")
		})
	}
}
