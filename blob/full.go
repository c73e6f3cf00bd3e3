package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/mattn/go-sqlite3"

	"github.com/shelfmark/shelfmark"
)

// probeSize is how many bytes ProbeSpace writes.
const probeSize = 64 << 10

// noSpace reports whether err says the file system (or the pack
// database) has no space left: ENOSPC, a disk quota, or SQLITE_FULL.
func noSpace(err error) bool {
	var se sqlite3.Error
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) ||
		(errors.As(err, &se) && se.Code == sqlite3.ErrFull)
}

// full turns an error caused by a lack of space into ESTORAGEFULL.
func full(err error) error {
	if err != nil && noSpace(err) && shelfmark.ErrorCode(err) != shelfmark.ESTORAGEFULL {
		return shelfmark.StorageFull("the content store", err)
	}
	return err
}

// ProbeSpace implements shelfmark.SpaceProber: it writes probeSize bytes
// to a temporary file of the store, syncs and removes it. A lack of space
// is ESTORAGEFULL.
func (s *LocalStore) ProbeSpace(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return cancelled(ctx)
	}
	f, err := os.CreateTemp(s.tmp, tmpPrefix+"probe-*")
	if err != nil {
		return full(fmt.Errorf("blob: probing for space: %w", err))
	}
	defer os.Remove(f.Name())
	defer f.Close()
	var w io.Writer = f
	if s.wrapTemp != nil {
		w = s.wrapTemp(f)
	}
	if _, err := w.Write(make([]byte, probeSize)); err != nil {
		return full(fmt.Errorf("blob: probing for space: %w", err))
	}
	if err := f.Sync(); err != nil {
		return full(fmt.Errorf("blob: probing for space: %w", err))
	}
	return nil
}
