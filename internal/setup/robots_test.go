package setup

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark/http/ui"
)

// TestReadRobots: --robots-file is read whole when it is UTF-8 text
// within ui.MaxRobotsBytes; a missing, too large or binary file is an
// error naming the flag; no flag is no file.
func TestReadRobots(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if b, err := readRobots(""); b != nil || err != nil {
		t.Errorf("no flag: %q %v", b, err)
	}
	own := []byte("User-agent: *\nDisallow: /private-stacks/\n")
	if b, err := readRobots(write("robots.txt", own)); err != nil || !bytes.Equal(b, own) {
		t.Errorf("a robots.txt: %q %v", b, err)
	}
	full := bytes.Repeat([]byte("#"), ui.MaxRobotsBytes)
	if b, err := readRobots(write("full.txt", full)); err != nil || len(b) != ui.MaxRobotsBytes {
		t.Errorf("a robots.txt of the largest size: %d bytes, %v", len(b), err)
	}
	for name, b := range map[string][]byte{"large.txt": append(full, '#'), "binary.txt": {0xff, 0xfe, 'U', 0}} {
		if _, err := readRobots(write(name, b)); err == nil || !strings.Contains(err.Error(), "--robots-file") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := readRobots(filepath.Join(dir, "missing.txt")); err == nil || !strings.Contains(err.Error(), "--robots-file") {
		t.Errorf("a missing file: %v", err)
	}
}
