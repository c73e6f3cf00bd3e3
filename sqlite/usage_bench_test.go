package sqlite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// BenchmarkUsageRecord measures what counting a use costs the request
// that is counted (UsageCounter.Record, from as many goroutines as the
// benchmark runs: a map update under a lock), and what a flush of 1,000
// works' uses costs the server in the background.
func BenchmarkUsageRecord(b *testing.B) {
	ctx := context.Background()
	repo := benchRepo(b)
	nrs := make([]*shelfmark.NewResource, 1000)
	for i := range nrs {
		nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork}
	}
	works, errs := repo.CreateResources(ctx, nrs)
	if errs[0] != nil {
		b.Fatal(errs[0])
	}
	b.Run("record", func(b *testing.B) {
		u, err := repo.NewUsageCounter()
		if err != nil {
			b.Fatal(err)
		}
		at := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				i++
				u.Record(shelfmark.UsageEvent{ID: works[i%len(works)].ID, Session: fmt.Sprint("s", i%5000), At: at.Add(time.Duration(i) * time.Millisecond)})
			}
		})
	})
	b.Run("flush-1000-works", func(b *testing.B) {
		u, err := repo.NewUsageCounter()
		if err != nil {
			b.Fatal(err)
		}
		at := time.Now()
		for i := 0; i < b.N; i++ {
			for j, w := range works {
				u.Record(shelfmark.UsageEvent{ID: w.ID, Request: j%3 == 0, Session: fmt.Sprint("f", i), At: at})
			}
			at = at.Add(time.Minute)
			if err := u.Flush(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
