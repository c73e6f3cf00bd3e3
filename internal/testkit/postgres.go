package testkit

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// schemaMu makes one schema at a time.
var schemaMu sync.Mutex

// Schema makes an empty schema dropped when the test ends and
// returns a DSN whose search_path is that schema.
func Schema(t testing.TB, dsn string) string {
	t.Helper()
	schemaMu.Lock()
	defer schemaMu.Unlock()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("workers%d_%d", os.Getpid(), rand.IntN(1e9))
	if _, err := pool.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		pool.Close()
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// PostgresSchema is Schema on the server SHELFMARK_TEST_DATABASE_URL names.
// Without it the test is skipped, or fails when CI is set: there the
// PostgreSQL half of a suite must not pass by not running.
func PostgresSchema(t testing.TB) string {
	t.Helper()
	dsn := os.Getenv("SHELFMARK_TEST_DATABASE_URL")
	if dsn == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("SHELFMARK_TEST_DATABASE_URL is not set")
		}
		t.Skip("SHELFMARK_TEST_DATABASE_URL is not set")
	}
	return Schema(t, dsn)
}
