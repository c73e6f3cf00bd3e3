package sqlite

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestStorageFull fills the database for real (SQLITE_FULL, with its page
// count capped where it stands) and checks that the engine's writes then
// fail with ESTORAGEFULL, not an internal error, and that the database
// works again once there is room.
func TestStorageFull(t *testing.T) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(t.TempDir(), "shelfmark.db"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	defer repo.Close()
	work := func(i int) *shelfmark.NewResource {
		return &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: []shelfmark.Statement{{
			Predicate: "http://purl.org/dc/terms/title", Object: shelfmark.NewLiteral(strconv.Itoa(i) + strings.Repeat(" a long title", 2000))}}}
	}
	if _, err := repo.CreateResource(ctx, work(0)); err != nil {
		t.Fatal(err)
	}
	// Cap both connections of the write pool (max_page_count is a
	// connection's setting).
	capPages := func(extra int) {
		conns := make([]interface{ Close() error }, 0, 2)
		for range 2 {
			c, err := db.write.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var pages int
			if err := c.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
				t.Fatal(err)
			}
			if _, err := c.ExecContext(ctx, `PRAGMA max_page_count = `+strconv.Itoa(pages+extra)); err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
		}
		for _, c := range conns {
			c.Close()
		}
	}
	capPages(2)
	for i := 1; ; i++ {
		_, err = repo.CreateResource(ctx, work(i))
		if err != nil || i > 100 {
			break
		}
	}
	if shelfmark.ErrorCode(err) != shelfmark.ESTORAGEFULL || !strings.Contains(shelfmark.ErrorMessage(err), "Storage full") {
		t.Fatalf("a write to a full database: %v (code %s), want %s", err, shelfmark.ErrorCode(err), shelfmark.ESTORAGEFULL)
	}
	if err := db.ProbeSpace(ctx); err != nil {
		t.Errorf("probe: %v", err)
	}
	// Room again.
	capPages(1000)
	if _, err := repo.CreateResource(ctx, work(1000)); err != nil {
		t.Errorf("a write once there is room: %v", err)
	}
}
