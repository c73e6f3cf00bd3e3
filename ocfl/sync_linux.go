package ocfl

import (
	"context"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// Sync implements BatchFS with one syncfs(2) of the file system holding
// the root: every write made before it, with the directories it made, is
// then durable (and so is everything else written to that file system,
// which is the price of one system call instead of one per file).
func (d *DirFS) Sync(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	paths := d.takePending()
	f, err := os.Open(d.root)
	if err != nil {
		return fmt.Errorf("ocfl: sync %s: %w", d.root, err)
	}
	defer f.Close()
	if err := unix.Syncfs(int(f.Fd())); err == unix.ENOSYS {
		return syncPaths(paths)
	} else if err != nil {
		return fmt.Errorf("ocfl: sync %s: %w", d.root, err)
	}
	return nil
}
