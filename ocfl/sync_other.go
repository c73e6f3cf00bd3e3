//go:build !linux

package ocfl

import "context"

// Sync implements BatchFS by syncing each file and directory written with
// WriteLater since the last Sync.
func (d *DirFS) Sync(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return syncPaths(d.takePending())
}
