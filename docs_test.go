package shelfmark_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsStandAlone: the README, docs/, scripts and code comments never
// send a reader outside the project (to the steering repository's brief
// or shared folder, or to an issue tracker's notes): what a reader needs is
// copied into docs/.
func TestDocsStandAlone(t *testing.T) {
	outside := regexp.MustCompile(`\.\./shared|BRIEF\.md|dependency-notes|brief §|closing note|\bissue [0-9]+\b`)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", ".build", "bin", "node_modules", "shelfmark-data":
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".md", ".sh", ".sql":
		default:
			if !strings.HasPrefix(path, "Makefile") && path != filepath.Join(".ci", "run") {
				return nil
			}
		}
		if path == "docs_test.go" {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := outside.FindString(line); m != "" {
				t.Errorf("%s:%d points outside the project (%q): %s", path, i+1, m, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
