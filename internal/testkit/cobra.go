package testkit

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// CheckFlagUsage fails the test for every flag of root and its
// subcommands whose usage holds a backquote: pflag takes a `quoted` word
// in a usage as the name of the flag's argument, so "--workers `shelfmark
// worker`" would render a boolean flag as if it took an argument in --help.
func CheckFlagUsage(t *testing.T, root *cobra.Command) {
	t.Helper()
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		check := func(f *pflag.Flag) {
			if strings.Contains(f.Usage, "`") {
				t.Errorf("%s --%s: usage has a backquote, which --help renders as an argument name: %q", c.CommandPath(), f.Name, f.Usage)
			}
		}
		c.LocalFlags().VisitAll(check)
		c.PersistentFlags().VisitAll(check)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// RunCommand runs cmd with args in this process and returns what it
// printed, standard output and error together.
func RunCommand(cmd *cobra.Command, args ...string) (string, error) {
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}
