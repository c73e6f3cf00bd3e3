package postgres

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/internal/sqlstore"
)

// diskFull is PostgreSQL's SQLSTATE disk_full.
const diskFull = "53100"

// full turns an error caused by a lack of space (disk_full, or ENOSPC on
// this side) into ESTORAGEFULL (sqlstore.Full).
func full(err error) error { return sqlstore.Full(err, noSpace) }

// noSpace reports whether err says the server or this side's disk ran
// out of space.
func noSpace(err error) bool {
	var pgErr *pgconn.PgError
	return (errors.As(err, &pgErr) && pgErr.Code == diskFull) || errors.Is(err, syscall.ENOSPC)
}

// ProbeSpace implements shelfmark.SpaceProber: it commits an update that
// changes nothing (the key counter set to itself), which still writes a
// row version and its write-ahead log record. A lack of space is
// ESTORAGEFULL.
func (db *DB) ProbeSpace(ctx context.Context) error {
	return db.Update(ctx, func(wtx shelfmark.WriteTx) error {
		t := wtx.(*writeTx)
		if _, err := t.r.exec(ctx, `UPDATE counters SET value = value WHERE name = 'key'`); err != nil {
			return fmt.Errorf("postgres: probing for space: %w", err)
		}
		return nil
	})
}
