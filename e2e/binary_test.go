package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/shelfmark/shelfmark/internal/setup"
	"github.com/shelfmark/shelfmark/internal/testkit"
)

// The suites here drive the shelfmark binary as its users do: built once
// per test run from this tree (with the sqlite_fts5 tag, as make does) and
// run as processes of their own.

var (
	binOnce sync.Once
	binDir  string
	binErr  error
)

// TestMain runs the suites (testkit.Run: it stops at once, with what to
// run instead, when the tests were built without the sqlite_fts5 tag) and
// removes the binary they built.
func TestMain(m *testing.M) {
	code := testkit.Run(m)
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// shelfmarkBinary returns the shelfmark binary of this tree, built at the
// first call of the test run.
func shelfmarkBinary(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "shelfmark-e2e-"); binErr == nil {
			binErr = testkit.BuildInto(binDir, "shelfmark")
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return filepath.Join(binDir, "shelfmark")
}

// buildShelfmark is shelfmarkBinary, under the name the suites know.
func buildShelfmark(t *testing.T) string {
	t.Helper()
	return shelfmarkBinary(t)
}

// childCommand is the command that runs `shelfmark args…` as a process of
// its own, with this process's environment and env.
func childCommand(t testing.TB, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(shelfmarkBinary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// runShelfmark runs `shelfmark args…` with stdin, as a person or script
// would, logs what it printed, and returns its standard output and
// whether it succeeded.
func runShelfmark(t *testing.T, stdin string, args ...string) (string, bool) {
	t.Helper()
	cmd := childCommand(t, nil, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr, cmd.Stdin = &out, &errOut, strings.NewReader(stdin)
	err := cmd.Run()
	t.Logf("shelfmark %s\n%s%s", strings.Join(args, " "), out.String(), errOut.String())
	return out.String(), err == nil
}

// runCLI runs `shelfmark args…` as a process of its own and returns what
// it printed (standard output and error).
func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	out, err := childCommand(t, nil, args...).CombinedOutput()
	return string(out), err
}

// hasFlag reports whether `shelfmark command` has the flag --name (as its
// --help lists it).
func hasFlag(t *testing.T, command, name string) bool {
	t.Helper()
	out, err := exec.Command(shelfmarkBinary(t), command, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("shelfmark %s --help: %v\n%s", command, err, out)
	}
	return strings.Contains(string(out), "--"+name+" ")
}

// The helpers the suites share with the commands' and the server's tests
// (internal/testkit).
var (
	do           = testkit.Do
	freePort     = testkit.FreePort
	workMetadata = testkit.WorkMetadata
	withBearer   = testkit.WithBearer
	cleanEnv     = testkit.CleanEnv
	writeTree    = testkit.WriteTree
	wantOutput   = testkit.WantOutput
)

// adminToken returns an admin-scoped token of the administrator of the
// SQLite repository in data (testkit.AdminToken).
func adminToken(t testing.TB, data string) string {
	t.Helper()
	store, err := setup.OpenStorage(context.Background(), "", data, "safe", 2)
	if err != nil {
		t.Fatal(fmt.Errorf("open %s: %w", data, err))
	}
	defer store.Close()
	return testkit.AdminToken(t, store)
}

// lockedBuffer collects the output of child processes (testkit.LockedBuffer).
type lockedBuffer = testkit.LockedBuffer

// noBacklogLimit are serve's flags that lift the backlog limit of every
// queue, for a server run with --workers=false that no worker joins (a test
// of durability or of a rebuild is not a test of back-pressure).
func noBacklogLimit() []string {
	return []string{"--backlog-limit", setup.NoBacklogLimits()}
}
