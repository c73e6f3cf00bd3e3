package testkit

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// OCFLPython returns the interpreter of the test virtualenv, which has
// ocfl-py 2.1.0, the OCFL editors' reference implementation
// (scripts/testdeps.sh installs it). Without SHELFMARK_TEST_PYTHON the
// test is skipped, unless SHELFMARK_REQUIRE_TOOLS=1 (make test): then it
// fails.
func OCFLPython(t testing.TB) string {
	t.Helper()
	py := os.Getenv("SHELFMARK_TEST_PYTHON")
	if py == "" {
		if os.Getenv("SHELFMARK_REQUIRE_TOOLS") == "1" {
			t.Fatal("SHELFMARK_TEST_PYTHON is not set and SHELFMARK_REQUIRE_TOOLS=1 (scripts/testdeps.sh installs ocfl-py into .build/venv)")
		}
		t.Skip("SHELFMARK_TEST_PYTHON is not set: ocfl-py (the independent OCFL validator) is not run (scripts/testdeps.sh installs it into .build/venv)")
	}
	out, err := exec.Command(py, "-c", "import ocfl; print(ocfl.__version__)").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "2.1.0" {
		t.Fatalf("no Python with ocfl-py 2.1.0 at %s (run scripts/testdeps.sh or set SHELFMARK_TEST_PYTHON): %v %s", py, err, out)
	}
	return py
}

// OCFLPyResult is what the ocfl package's harness script
// (ocfl/testdata/ocflpy_validate.py) reports of a storage root.
type OCFLPyResult struct {
	Version string `json:"ocfl_py"`
	Root    struct {
		Valid       bool     `json:"valid"`
		Layout      string   `json:"layout"`
		NumObjects  int      `json:"num_objects"`
		GoodObjects int      `json:"good_objects"`
		Errors      int      `json:"errors"`
		Warnings    int      `json:"warnings"`
		Messages    []string `json:"messages"`
	} `json:"root"`
	Objects []struct {
		Path       string   `json:"path"`
		ID         string   `json:"id"`
		LayoutPath string   `json:"layout_path"`
		Valid      bool     `json:"valid"`
		Errors     int      `json:"errors"`
		Warnings   int      `json:"warnings"`
		Messages   []string `json:"messages"`
	} `json:"objects"`
}

// OCFLPyRoot has ocfl-py (py, from OCFLPython) validate the storage root
// in dir, every object with its digests checked, through the harness
// script at script, and returns its report.
func OCFLPyRoot(t testing.TB, py, script, dir string) OCFLPyResult {
	t.Helper()
	out, err := exec.Command(py, script, dir).Output()
	if err != nil {
		var stderr []byte
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		t.Fatalf("ocfl-py: %v\n%s", err, stderr)
	}
	var res OCFLPyResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("ocfl-py output: %v\n%s", err, out)
	}
	return res
}
