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
//
// The tests run with TMPDIR set to a directory of their own, removed when
// they end: a server or backup a crash test kills leaves its scratch
// files (a tool's working directory, a database snapshot) where no defer
// removes them, and they go with that directory instead of piling up in
// the machine's temporary directory.
func Run(m *testing.M) int {
	if !fts5 {
		fmt.Fprintln(os.Stderr, "built without -tags sqlite_fts5 (SQLite full-text search): run make test (it sets -tags sqlite_fts5 and starts PostgreSQL)")
		return 1
	}
	tmp, err := os.MkdirTemp("", "shelfmark-test-")
	if err == nil {
		// open to everyone with the sticky bit, as the system's is: some
		// tests run a server as another user (PostgreSQL's), in
		// directories made below it
		err = os.Chmod(tmp, os.ModeSticky|0o777)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "testkit:", err)
		return 1
	}
	old, had := os.LookupEnv("TMPDIR")
	os.Setenv("TMPDIR", tmp)
	code := m.Run()
	if had {
		os.Setenv("TMPDIR", old)
	} else {
		os.Unsetenv("TMPDIR")
	}
	if err := os.RemoveAll(tmp); err != nil {
		fmt.Fprintln(os.Stderr, "testkit: remove the tests' temporary directory:", err)
	}
	return code
}
