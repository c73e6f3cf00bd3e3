package sqlite

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// TestNumberedParameters: the shared statements of dialect number their
// parameters where one is used twice or out of order (?NNN); the driver
// binds positional arguments by that number.
func TestNumberedParameters(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "shelfmark.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var a, b, c int64
	err = db.View(ctx, func(r shelfmark.ReadTx) error {
		return sqlstore.Row(ctx, r.(*readTx), `SELECT ?2, ?1, ?2`, []any{1, 2}, &a, &b, &c)
	})
	if err != nil {
		t.Fatal(err)
	}
	if a != 2 || b != 1 || c != 2 {
		t.Fatalf("SELECT ?2, ?1, ?2 with (1, 2) = %d, %d, %d; want 2, 1, 2", a, b, c)
	}
}
