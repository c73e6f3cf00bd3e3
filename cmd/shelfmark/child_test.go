package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
)

// Environment of TestChild, the shelfmark process (serve, worker) that
// tests needing real processes (kill -9, several servers on one database)
// start.
const (
	childEnv     = "SHELFMARK_TEST_CHILD"
	childArgsEnv = "SHELFMARK_TEST_CHILD_ARGS" // arguments, one per line
)

// TestChild is `shelfmark ARGS…` run as a process of its own by another
// test (see childArgs); it runs until killed or interrupted, and exits 1
// with the error on stderr when the command fails.
func TestChild(t *testing.T) {
	if os.Getenv(childEnv) != "1" {
		t.Skip("a child process of other tests; it runs only when one starts it")
	}
	root := newRootCommand()
	root.SetArgs(strings.Split(os.Getenv(childArgsEnv), "\n"))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "shelfmark:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// childArgs returns the test binary's arguments and the environment
// entries that make it run `shelfmark args…` (TestChild).
func childArgs(args ...string) (testArgs, env []string) {
	return []string{"-test.run=^TestChild$", "-test.count=1", "-test.timeout=30m"},
		[]string{childEnv + "=1", childArgsEnv + "=" + strings.Join(args, "\n")}
}

// childCommand is the command that runs `shelfmark args…` as a process of
// its own, with this process's environment and env.
func childCommand(env []string, args ...string) *exec.Cmd {
	targs, cenv := childArgs(args...)
	cmd := exec.Command(os.Args[0], targs...)
	cmd.Env = append(append(os.Environ(), cenv...), env...)
	return cmd
}
