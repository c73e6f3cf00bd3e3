package blob

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"

	// The SQLite driver the metadata store uses too.
	_ "github.com/mattn/go-sqlite3"
)

// SmallMax is the size up to which a blob is kept in the store's pack
// database instead of a file of its own. On this kind of file system one
// file costs about 150 µs of metadata system calls (create, rename, shard
// directories) whatever its size, more than writing 64 KiB; SQLite's own
// measurements find blobs below about 100 KB faster to read from a database
// than from files (https://sqlite.org/intern-v-extern-blob.html).
const SmallMax = 64 << 10

// smallFile is the pack database's name inside the store directory.
const smallFile = "small.db"

// smallStore keeps small blobs in a SQLite database, content-addressed like
// the files: one row per SHA-256. A store's deferred puts wait in memory
// (pendingSmall) and come here in one transaction at its Sync, so a whole
// ingest batch of small files costs one durable commit, and no write
// transaction stays open between the puts of a batch.
//
// Several processes may share the database: SQLite locks it, and a writer
// waits up to busyTimeout for another's transaction to end.
type smallStore struct {
	w *sql.DB // one connection: the writer
	r *sql.DB // readers
}

// busyTimeoutMS is how long a writer waits for another process's write
// transaction on the pack database.
const busyTimeoutMS = 30000

func openSmall(path string) (*smallStore, error) {
	dsn := func(extra string) string {
		return "file:" + (&url.URL{Path: path}).EscapedPath() +
			fmt.Sprintf("?_journal_mode=WAL&_synchronous=FULL&_busy_timeout=%d&_foreign_keys=0&_cache_size=-32768", busyTimeoutMS) + extra
	}
	w, err := sql.Open("sqlite3", dsn("&_txlock=immediate"))
	if err != nil {
		return nil, fmt.Errorf("blob: opening the pack database: %w", err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxLifetime(0)
	w.SetMaxIdleConns(1)
	// stored is when the blob was last stored (Unix microseconds), so the
	// collector of blobs no file refers to spares recent uploads; 0 for
	// the rows of stores made before it was kept.
	if _, err := w.Exec(`CREATE TABLE IF NOT EXISTS blobs (sha256 BLOB PRIMARY KEY, data BLOB NOT NULL, stored INTEGER NOT NULL DEFAULT 0)`); err != nil {
		w.Close()
		return nil, fmt.Errorf("blob: creating the pack database: %w", err)
	}
	var hasStored int
	if err := w.QueryRow(`SELECT count(*) FROM pragma_table_info('blobs') WHERE name = 'stored'`).Scan(&hasStored); err != nil {
		w.Close()
		return nil, fmt.Errorf("blob: reading the pack database's columns: %w", err)
	}
	if hasStored == 0 {
		if _, err := w.Exec(`ALTER TABLE blobs ADD COLUMN stored INTEGER NOT NULL DEFAULT 0`); err != nil && !strings.Contains(err.Error(), "duplicate column") {
			w.Close()
			return nil, fmt.Errorf("blob: adding the stored column to the pack database: %w", err)
		}
	}
	r, err := sql.Open("sqlite3", dsn("&mode=ro"))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("blob: opening the pack database: %w", err)
	}
	return &smallStore{w: w, r: r}, nil
}

// put stores blobs durably, in one transaction: all or none (none when a
// SHA-256 is not lower-case hex of 32 bytes).
func (s *smallStore) put(ctx context.Context, blobs []shelfmark.SmallBlob) error {
	if len(blobs) == 0 {
		return nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("blob: pack database: %w", err)
	}
	defer tx.Rollback()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO blobs (sha256, data, stored) VALUES (?, ?, ?)
		ON CONFLICT (sha256) DO UPDATE SET stored = excluded.stored`)
	if err != nil {
		return fmt.Errorf("blob: storing in the pack database: %w", err)
	}
	defer stmt.Close()
	// Storing the same bytes again renews their time, for the collector.
	now := time.Now().UnixMicro()
	for _, b := range blobs {
		if !validSHA256(b.SHA256) {
			return fmt.Errorf("blob: pack: not a SHA-256: %.80q", b.SHA256)
		}
		sum, _ := hex.DecodeString(b.SHA256)
		if _, err := stmt.ExecContext(ctx, sum, b.Data, now); err != nil {
			return fmt.Errorf("blob: storing %d blobs in the pack database: %w", len(blobs), err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("blob: committing %d blobs to the pack database: %w", len(blobs), err)
	}
	return nil
}

// remove deletes the blobs of sums last stored before cutoff (a put since
// renewed the others), in one transaction, and reports how many it
// deleted.
func (s *smallStore) remove(ctx context.Context, sums [][]byte, cutoff time.Time) (int, error) {
	if len(sums) == 0 {
		return 0, nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("blob: pack database: %w", err)
	}
	defer tx.Rollback()
	n := 0
	for _, sum := range sums {
		res, err := tx.ExecContext(ctx, `DELETE FROM blobs WHERE sha256 = ? AND stored < ?`, sum, cutoff.UnixMicro())
		if err != nil {
			return 0, fmt.Errorf("blob: collect the pack database: %w", err)
		}
		k, _ := res.RowsAffected()
		n += int(k)
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("blob: collect the pack database: %w", err)
	}
	return n, nil
}

// get returns the bytes stored under sum, or nil and false. A store's
// deferred puts not yet synced are its pendingSmall's to find.
func (s *smallStore) get(ctx context.Context, sum []byte) ([]byte, bool, error) {
	var data []byte
	err := s.r.QueryRowContext(ctx, `SELECT data FROM blobs WHERE sha256 = ?`, sum).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, fmt.Errorf("blob: reading the pack database: %w", err)
	}
	return data, true, nil
}

// close closes the database; a store syncs its deferred puts first.
func (s *smallStore) close() error {
	return errors.Join(s.r.Close(), s.w.Close())
}

// memBlob is a small blob read into memory, seekable for Range requests.
type memBlob struct{ *bytes.Reader }

// Close implements io.Closer.
func (memBlob) Close() error { return nil }

var _ io.ReadSeekCloser = memBlob{}
