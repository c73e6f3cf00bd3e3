package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestRefusesWithoutFTS5 builds shelfmark without the sqlite_fts5 tag, as
// a plain "go build" does, and checks that serve refuses to start with the
// fix in one line, rather than opening the store and failing every search.
func TestRefusesWithoutFTS5(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary without the sqlite_fts5 tag (a minute on 2 cores)")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "shelfmark-nofts5")
	build := exec.CommandContext(ctx, gobin, "build", "-o", bin, ".")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOFLAGS=") {
			env = append(env, kv)
		}
	}
	build.Env = append(env, "GOFLAGS=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build without tags: %v\n%s", err, out)
	}
	// a store made by a proper build, then opened by the one without FTS5
	data := filepath.Join(dir, "data")
	serve := exec.CommandContext(ctx, bin, "serve", "--data", data, "--addr", "127.0.0.1:0")
	out, err := serve.CombinedOutput()
	if err == nil {
		t.Fatalf("serve without FTS5 exited 0:\n%s", out)
	}
	if !strings.Contains(string(out), "built without SQLite full-text search (FTS5)") ||
		!strings.Contains(string(out), "-tags sqlite_fts5") {
		t.Fatalf("serve without FTS5 did not say why and how to fix it:\n%s", out)
	}
	if strings.Count(strings.TrimSpace(string(out)), "\n") > 2 {
		t.Errorf("more than a short message:\n%s", out)
	}
}
