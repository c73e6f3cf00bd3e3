package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/shelfmark/shelfmark/internal/testkit"
)

// runCLI runs shelfmark-bench with args in this process and returns what
// it printed.
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// TestMain stops at once, with what to run instead, when the tests were
// built without the sqlite_fts5 tag (testkit.Main).
func TestMain(m *testing.M) { testkit.Main(m) }
