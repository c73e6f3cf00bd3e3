package shelfmark

import (
	"context"
	"fmt"
)

// StorageFull returns the error of a write to what ("the database", "the
// content store") that failed for lack of space: ESTORAGEFULL (HTTP 507),
// wrapping cause for the logs. Adapters return it for ENOSPC, a disk
// quota, SQLite's SQLITE_FULL and PostgreSQL's disk_full (53100), so a
// full disk says so instead of answering a generic internal error.
func StorageFull(what string, cause error) error {
	e := &Error{Code: ESTORAGEFULL,
		Message: fmt.Sprintf("Storage full: %s has no space left for this write; it succeeds again once space is freed.", what)}
	if cause == nil {
		return e
	}
	return fmt.Errorf("%w: %w", e, cause)
}

// SpaceProber is implemented by stores that can check, with a small write
// of their own, that a write would find space. A server that saw a write
// fail with ESTORAGEFULL reports itself not ready until a probe succeeds
// (or another write does).
type SpaceProber interface {
	// ProbeSpace makes a small durable write and undoes it; an error with
	// code ESTORAGEFULL means there is still no space.
	ProbeSpace(ctx context.Context) error
}
