package main

import (
	"testing"

	"github.com/shelfmark/shelfmark/internal/testkit"
)

// TestFlagUsageHasNoBackquotes: no flag's usage holds a backquote, which
// --help would render as the name of the flag's argument.
func TestFlagUsageHasNoBackquotes(t *testing.T) {
	testkit.CheckFlagUsage(t, newRootCommand())
}
