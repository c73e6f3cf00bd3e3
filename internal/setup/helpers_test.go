package setup

import (
	"context"
	"testing"

	"github.com/shelfmark/shelfmark/internal/testkit"
)

// The helpers the server's tests share with the commands' tests and the
// end-to-end suites (internal/testkit).
var (
	do           = testkit.Do
	freePort     = testkit.FreePort
	withBearer   = testkit.WithBearer
	waitServing  = testkit.WaitServing
	createWork   = testkit.CreateWork
	s3Keys       = testkit.S3Keys
	workerSchema = testkit.Schema
)

// adminToken returns an admin-scoped token of the administrator of the
// SQLite repository in data (testkit.AdminToken).
func adminToken(t testing.TB, data string) string {
	t.Helper()
	store, err := OpenStorage(context.Background(), "", data, "safe", 2)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	return testkit.AdminToken(t, store)
}

// TestMain stops at once, with what to run instead, when the tests were
// built without the sqlite_fts5 tag (testkit.Main).
func TestMain(m *testing.M) { testkit.Main(m) }
