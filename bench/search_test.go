package bench

import (
	"context"
	"testing"
)

// TestRunSearch: the scenario stores, indexes and searches a small
// repository; the common word's total is estimated and close to the truth,
// the rare words' totals exact.
func TestRunSearch(t *testing.T) {
	repo, _ := labRepo(t)
	store := repo.Storage()
	res, err := RunSearch(context.Background(), repo, store, SearchConfig{Works: 3000, Queries: 5, Batch: 250})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Report
	if r.Errors != 0 || len(res.Kinds) != 4 || len(r.Steps) != 4 || r.Items != 20 || r.LatencyMS.P50 <= 0 {
		t.Fatalf("%+v", r)
	}
	common, rare := res.Kinds[0], res.Kinds[2]
	if !common.Estimated || common.Matches != 2850 || common.Total < 2700 || common.Total > 3000 {
		t.Fatalf("common word: %+v", common)
	}
	if rare.Estimated || rare.Total != rare.Matches {
		t.Fatalf("rare word: %+v", rare)
	}
}
