package main

import (
	"context"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/internal/testkit"
)

// The helpers this package's tests share with the server's own tests and
// the end-to-end suites (internal/testkit).
var (
	s3Keys     = testkit.S3Keys
	writeTree  = testkit.WriteTree
	wantOutput = testkit.WantOutput
)

// openRepo opens the engine over the store of --database / --data, as the
// commands do, until the test ends.
func openRepo(t *testing.T, database, data string) *shelfmark.Repository {
	t.Helper()
	store, err := setup.OpenStorage(context.Background(), database, data, "safe", 4)
	if err != nil {
		t.Fatal(err)
	}
	return testkit.Repo(t, store)
}

// TestMain stops at once, with what to run instead, when the tests were
// built without the sqlite_fts5 tag (testkit.Main).
func TestMain(m *testing.M) { testkit.Main(m) }
