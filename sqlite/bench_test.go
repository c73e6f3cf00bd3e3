package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/sqlite"
)

func benchMetadata(n int) []shelfmark.Statement {
	out := make([]shelfmark.Statement, n)
	for i := range out {
		out[i] = shelfmark.Statement{Predicate: fmt.Sprintf("http://purl.org/dc/terms/p%d", i%15), Object: shelfmark.NewLiteral(fmt.Sprintf("value number %d of a work", i))}
	}
	return out
}

// benchRepo opens a repository over a SQLite database of its own in
// b's temporary directory, closed when b ends.
func benchRepo(b *testing.B) *shelfmark.Repository {
	b.Helper()
	db, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "b.db"), sqlite.Options{})
	if err != nil {
		b.Fatal(err)
	}
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	b.Cleanup(func() {
		repo.Close()
		db.Close()
	})
	return repo
}

// BenchmarkCreateWork54 creates works of 54 statements from concurrent
// goroutines (b.SetParallelism), through the engine and group commit.
func BenchmarkCreateWork54(b *testing.B) {
	for _, par := range []int{1, 16} {
		b.Run(fmt.Sprintf("clients=%d", par), func(b *testing.B) {
			ctx := context.Background()
			repo := benchRepo(b)
			meta := benchMetadata(54)
			b.ResetTimer()
			var wg sync.WaitGroup
			per := b.N / par
			for g := 0; g < par; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < per; i++ {
						if _, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: meta}); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.ReportMetric(float64(per*par)/b.Elapsed().Seconds(), "works/s")
		})
	}
}
