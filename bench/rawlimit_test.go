package bench

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark/sqlite"
)

// TestRawInsertLimitRuns checks the raw-limit measurement works on a real
// database (it is part of every rest report) and logs its figure.
func TestRawInsertLimitRuns(t *testing.T) {
	ctx := context.Background()
	db, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "raw.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, batch := range []int{1, 64} {
		rate, err := RawInsertLimit(ctx, db, 54, batch, 300*time.Millisecond)
		if err != nil || rate <= 0 {
			t.Fatalf("batch %d: %v, %v", batch, rate, err)
		}
		t.Logf("batch %d: %.0f works/s", batch, rate)
	}
}
