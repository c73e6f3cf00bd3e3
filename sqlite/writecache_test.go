package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"
)

// TestWriteCache: the write connection's page cache is Options.WriteCache
// (DefaultWriteCache when 0), in KiB as SQLite counts it, and the read
// connections keep their own smaller one whatever the writer's.
func TestWriteCache(t *testing.T) {
	ctx := context.Background()
	cacheKiB := func(pool *sql.DB) int64 {
		t.Helper()
		var n int64
		if err := pool.QueryRowContext(ctx, `PRAGMA cache_size`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, c := range []struct {
		opt, want int64
	}{
		{0, -DefaultWriteCache >> 10},
		{1 << 30, -(1 << 20)},
		{100 << 20, -100 << 10},
		{1, -1}, // less than a KiB: the least SQLite takes as a size
	} {
		db, err := Open(ctx, filepath.Join(t.TempDir(), "shelfmark.db"), Options{WriteCache: c.opt})
		if err != nil {
			t.Fatal(err)
		}
		if got := cacheKiB(db.write); got != c.want {
			t.Errorf("WriteCache %d: the writer's cache_size is %d, want %d", c.opt, got, c.want)
		}
		if got := cacheKiB(db.read); got != -16384 {
			t.Errorf("WriteCache %d: a reader's cache_size is %d, want -16384", c.opt, got)
		}
		db.Close()
	}
}
