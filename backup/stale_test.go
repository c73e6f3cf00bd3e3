package backup

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestRemoveStaleSnapshots: the snapshot directory of a process that has
// ended goes; those of this process and of one still running stay, and
// so does anything not named as a snapshot.
func TestRemoveStaleSnapshots(t *testing.T) {
	dir := t.TempDir()
	ended := exec.Command("true")
	if err := ended.Run(); err != nil {
		t.Fatal(err)
	}
	alive := exec.Command("sleep", "60")
	if err := alive.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { alive.Process.Kill(); alive.Wait() })
	names := map[string]bool{ // name -> whether it stays
		fmt.Sprintf("%s%d-123", snapshotPrefix, ended.Process.Pid): false,
		fmt.Sprintf("%s%d-456", snapshotPrefix, os.Getpid()):       true,
		fmt.Sprintf("%s%d-789", snapshotPrefix, alive.Process.Pid): true,
		snapshotPrefix + "notapid-1":                               true,
		"other-" + fmt.Sprint(ended.Process.Pid):                   true,
	}
	for n := range names {
		if err := os.MkdirAll(filepath.Join(dir, n), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, n, "shelfmark.db"), []byte("copy"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	removeStaleSnapshots(dir)
	for n, stays := range names {
		_, err := os.Stat(filepath.Join(dir, n))
		if exists := err == nil; exists != stays {
			t.Errorf("%s: there %v, want %v", n, exists, stays)
		}
	}
}
