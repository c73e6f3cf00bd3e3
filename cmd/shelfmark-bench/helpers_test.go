package main

import (
	"bytes"
	"context"
	"testing"
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
