package setup

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestImportRoots: --import-root takes folders, several in one value
// separated as SHELFMARK_IMPORT_ROOT separates them; a missing folder or a
// file is refused before the server starts.
func TestImportRoots(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	file := filepath.Join(a, "f.txt")
	os.WriteFile(file, []byte("x"), 0o600)
	got, err := importRoots([]string{a + string(filepath.ListSeparator) + b, a})
	if err != nil || !slices.Equal(got, []string{a, b, a}) {
		t.Errorf("importRoots: %q, %v", got, err)
	}
	for _, bad := range []string{file, filepath.Join(a, "missing")} {
		if _, err := importRoots([]string{bad}); err == nil || !strings.Contains(err.Error(), "--import-root") {
			t.Errorf("importRoots(%s): %v, want an error naming the flag", bad, err)
		}
	}
	cmd, c := ServeCommand()
	t.Setenv("SHELFMARK_IMPORT_ROOT", a+string(filepath.ListSeparator)+b)
	if err := ApplyEnv(cmd.Flags()); err != nil {
		t.Fatal(err)
	}
	if got, err := importRoots(c.importRoots); err != nil || !slices.Equal(got, []string{a, b}) {
		t.Errorf("from the environment: %q, %v", got, err)
	}
}
