package setup

import (
	"context"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// TestReadDatabaseFlags: --read-database needs PostgreSQL on both sides and
// a positive --read-max-lag, and is refused with a message naming the flag.
func TestReadDatabaseFlags(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, database string
		flags          replicaFlags
		want           string
	}{
		{"sqlite", "", replicaFlags{url: "postgres://h/db", maxLag: time.Second}, "--read-database needs --database"},
		{"not a URL", "postgres://h/db", replicaFlags{url: "host=replica", maxLag: time.Second}, "--read-database must be a postgres:// URL"},
		{"no lag", "postgres://h/db", replicaFlags{url: "postgres://r/db", maxLag: 0}, "--read-max-lag must be positive"},
	} {
		_, err := c.flags.OpenStorage(ctx, c.database, t.TempDir(), "safe", 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

// TestReadDatabaseOpens: serve's storage with --read-database reports its
// replica (skipped without the test replica, failed in CI).
func TestReadDatabaseOpens(t *testing.T) {
	dsn, replica := os.Getenv("SHELFMARK_TEST_DATABASE_URL"), os.Getenv("SHELFMARK_TEST_REPLICA_URL")
	if dsn == "" || replica == "" {
		if os.Getenv("SHELFMARK_REQUIRE_TOOLS") != "" {
			t.Fatal("SHELFMARK_TEST_DATABASE_URL or SHELFMARK_TEST_REPLICA_URL is not set")
		}
		t.Skip("SHELFMARK_TEST_DATABASE_URL or SHELFMARK_TEST_REPLICA_URL is not set")
	}
	database := workerSchema(t, dsn)
	u, err := url.Parse(database)
	if err != nil {
		t.Fatal(err)
	}
	r, err := url.Parse(replica)
	if err != nil {
		t.Fatal(err)
	}
	r.RawQuery = u.RawQuery // the same search_path
	f := replicaFlags{url: r.String(), maxLag: 3 * time.Second}
	store, err := f.OpenStorage(context.Background(), database, t.TempDir(), "safe", 4)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	rr, ok := store.(shelfmark.ReplicaRouter)
	if !ok {
		t.Fatalf("%T has no replica", store)
	}
	if st := rr.ReplicaStats(); !st.Configured || st.MaxLag != 3*time.Second {
		t.Errorf("replica stats %+v", st)
	}
}
