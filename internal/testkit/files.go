package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// WriteTree writes files (slash path -> content) below root.
func WriteTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// WantOutput fails unless out holds every one of subs.
func WantOutput(t *testing.T, what, out string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(out, s) {
			t.Errorf("%s: the output lacks %q:\n%s", what, s, out)
		}
	}
}
