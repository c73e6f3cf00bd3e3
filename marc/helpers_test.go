package marc

import (
	"os"
	"path/filepath"
	"testing"
)

// pymarcDir returns the directory of the unpacked pymarc source
// distribution used as test data.
func pymarcDir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("SHELFMARK_PYMARC_DIR")
	if dir == "" {
		dir = filepath.Join("..", ".build", "testdata", "pymarc-5.4.0")
	}
	if _, err := os.Stat(filepath.Join(dir, "test", "test.dat")); err != nil {
		t.Fatalf("pymarc test data not found in %s (set SHELFMARK_PYMARC_DIR or run scripts/testdeps.sh): %v", dir, err)
	}
	return dir
}

func testFile(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(pymarcDir(t), "test", name)
}

func readTestFile(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(testFile(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
