package postgres

import (
	"context"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestStorageFull makes the real server answer disk_full (SQLSTATE 53100)
// from a trigger on resources, as it does when its disk fills, and checks
// that the engine's write then fails with ESTORAGEFULL, not an internal
// error; without the trigger, writes and the space probe succeed.
func TestStorageFull(t *testing.T) {
	ctx := context.Background()
	db, _ := openTest(t, Options{})
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	defer repo.Close()
	work := &shelfmark.NewResource{Kind: shelfmark.KindWork}
	if _, err := repo.CreateResource(ctx, work); err != nil {
		t.Fatal(err)
	}
	if err := db.ProbeSpace(ctx); err != nil {
		t.Fatalf("probe: %v", err)
	}
	r := db.run(db.pool)
	if _, err := r.exec(ctx, `CREATE FUNCTION no_space() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = 'disk_full'; END $$;
		CREATE TRIGGER no_space BEFORE INSERT OR UPDATE ON resources FOR EACH ROW EXECUTE FUNCTION no_space();
		CREATE TRIGGER no_space BEFORE UPDATE ON counters FOR EACH ROW EXECUTE FUNCTION no_space()`); err != nil {
		t.Fatal(err)
	}
	_, err := repo.CreateResource(ctx, work)
	if shelfmark.ErrorCode(err) != shelfmark.ESTORAGEFULL || !strings.Contains(shelfmark.ErrorMessage(err), "Storage full") {
		t.Errorf("a write to a full database: %v (code %s), want %s", err, shelfmark.ErrorCode(err), shelfmark.ESTORAGEFULL)
	}
	if err := db.ProbeSpace(ctx); shelfmark.ErrorCode(err) != shelfmark.ESTORAGEFULL {
		t.Errorf("probe of a full database: %v", err)
	}
	if _, err := r.exec(ctx, `DROP TRIGGER no_space ON resources; DROP TRIGGER no_space ON counters`); err != nil {
		t.Fatal(err)
	}
	if err := db.ProbeSpace(ctx); err != nil {
		t.Errorf("probe with space: %v", err)
	}
	if _, err := repo.CreateResource(ctx, work); err != nil {
		t.Errorf("a write once there is room: %v", err)
	}
}
