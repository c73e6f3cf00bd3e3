package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/mattn/go-sqlite3"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// probeSize is how many bytes ProbeSpace writes.
const probeSize = 64 << 10

// full turns an error caused by a lack of space (SQLITE_FULL, ENOSPC, a
// disk quota) into ESTORAGEFULL (sqlstore.Full).
func full(err error) error { return sqlstore.Full(err, noSpace) }

// noSpace reports whether err says SQLite or its disk ran out of space.
func noSpace(err error) bool {
	var se sqlite3.Error
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) ||
		(errors.As(err, &se) && (se.Code == sqlite3.ErrFull || se.SystemErrno == syscall.ENOSPC || se.SystemErrno == syscall.EDQUOT))
}

// ProbeSpace implements shelfmark.SpaceProber: it writes probeSize bytes
// to a temporary file beside the database (where its write-ahead log
// grows), syncs and removes it. A lack of space is ESTORAGEFULL.
func (db *DB) ProbeSpace(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(db.path), ".space-probe-*")
	if err != nil {
		return full(fmt.Errorf("sqlite: probing for space: %w", err))
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if _, err := f.Write(make([]byte, probeSize)); err != nil {
		return full(fmt.Errorf("sqlite: probing for space: %w", err))
	}
	if err := f.Sync(); err != nil {
		return full(fmt.Errorf("sqlite: probing for space: %w", err))
	}
	return nil
}
