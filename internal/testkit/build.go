package testkit

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Build builds the commands of this tree named (shelfmark,
// shelfmark-bench: directories under cmd/) with the sqlite_fts5 tag, as
// make does, into one directory of the test's own, and returns it. Each
// call links every command again (a few seconds each on 2 cores; the
// compiled packages come from the build cache).
func Build(t testing.TB, commands ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "bin")
	if err := BuildInto(dir, commands...); err != nil {
		t.Fatal(err)
	}
	return dir
}

// BuildInto is Build into dir, for a binary several tests share.
func BuildInto(dir string, commands ...string) error {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return fmt.Errorf("testkit: no source path to find the module from")
	}
	root := filepath.Join(filepath.Dir(file), "..", "..")
	for _, name := range commands {
		build := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", filepath.Join(dir, name), "./cmd/"+name)
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("go build -tags sqlite_fts5 ./cmd/%s: %v\n%s", name, err, out)
		}
	}
	return nil
}

// CleanEnv is the environment of a fresh shell with binDir first on PATH:
// this process's environment without its SHELFMARK_ variables.
func CleanEnv(binDir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SHELFMARK_") && !strings.HasPrefix(kv, "PATH=") {
			env = append(env, kv)
		}
	}
	return append(env, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
}
