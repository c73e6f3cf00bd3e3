package main

import (
	"testing"

	"github.com/shelfmark/shelfmark/internal/testkit"
)

// runCLI runs shelfmark-bench with args in this process and returns what
// it printed.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	return testkit.RunCommand(newRootCommand(), args...)
}

// TestMain stops at once, with what to run instead, when the tests were
// built without the sqlite_fts5 tag (testkit.Main).
func TestMain(m *testing.M) { testkit.Main(m) }
