package testkit

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// WaitJobs polls the queue counts of repo every 100 ms until cond holds,
// and fails the test after limit, naming what it waited for and showing
// logs (the output of the workers involved).
func WaitJobs(t testing.TB, repo *shelfmark.Repository, limit time.Duration, what string, cond func([]shelfmark.QueueCount) bool, logs ...fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		counts, err := repo.QueueCounts(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if cond(counts) {
			return
		}
		if time.Now().After(deadline) {
			var out strings.Builder
			for _, l := range logs {
				out.WriteString(l.String())
			}
			t.Fatalf("%s: not within %s; counts %+v; worker output:\n%s", what, limit, counts, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
