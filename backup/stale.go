package backup

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// snapshotPrefix begins the name of a run's snapshot directory in
// Options.TempDir, followed by the process id and a hyphen.
const snapshotPrefix = "shelfmark-backup-"

// removeStaleSnapshots removes the snapshot directories in dir whose
// process is no longer running: what a backup killed before its deferred
// removal ran left behind (a copy of the whole database). A directory of
// a process still running, of a process id now reused by another, or
// with a name it cannot read is left; the cost is one listing of dir.
// Best effort: it reports nothing.
func removeStaleSnapshots(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), snapshotPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pid, _, ok := strings.Cut(rest, "-")
		n, err := strconv.Atoi(pid)
		if !ok || err != nil || n <= 0 || n == os.Getpid() || running(n) {
			continue
		}
		os.RemoveAll(filepath.Join(dir, e.Name()))
	}
}

// running reports whether a process with id pid exists (signal 0 checks
// without sending; a process of another user answers EPERM, and runs).
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
