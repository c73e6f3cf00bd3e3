package testkit

import (
	"fmt"
	"os"
	"testing"
)

// Main runs the tests of a package whose tests open SQLite stores and
// exits with Run's code.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run runs m's tests after checking that the test binary was built with
// the sqlite_fts5 tag (a plain `go test ./...` builds without it, and every
// SQLite store would refuse to open): without it, it prints one line
// saying what to run instead and returns 1 before any test runs.
func Run(m *testing.M) int {
	if !fts5 {
		fmt.Fprintln(os.Stderr, "built without -tags sqlite_fts5 (SQLite full-text search): run make test (it sets -tags sqlite_fts5 and starts PostgreSQL)")
		return 1
	}
	return m.Run()
}
