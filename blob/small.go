package blob

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"sync"
	"time"

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
// the files: one row per SHA-256. Deferred puts go into one write
// transaction kept open until Sync commits it, so a whole ingest batch of
// small files costs one durable commit.
//
// Several processes may share the database: SQLite locks it, and a writer
// waits up to busyTimeout for another's transaction to end.
type smallStore struct {
	w *sql.DB // one connection: the writer
	r *sql.DB // readers

	mu sync.Mutex
	tx *sql.Tx // open while deferred puts wait for Sync
	// deferred counts the deferred puts in tx; lost is the error that
	// rolled back a transaction holding some, for the next sync to
	// return.
	deferred int
	lost     error
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

// put stores data under its SHA-256 sum. A deferred put joins the open
// write transaction and is durable at the next sync; any other put commits
// that transaction, and so everything deferred before it, durably.
func (s *smallStore) put(ctx context.Context, sum, data []byte, deferred bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tx == nil {
		// The transaction outlives this call, so it must not end with ctx.
		tx, err := s.w.BeginTx(context.WithoutCancel(ctx), nil)
		if err != nil {
			return fmt.Errorf("blob: pack database: %w", err)
		}
		s.tx = tx
	}
	// Storing the same bytes again renews their time, for the collector.
	if _, err := s.tx.ExecContext(ctx, `INSERT INTO blobs (sha256, data, stored) VALUES (?, ?, ?)
		ON CONFLICT (sha256) DO UPDATE SET stored = excluded.stored`, sum, data, time.Now().UnixMicro()); err != nil {
		// SQLite may have rolled the transaction back already (a full
		// disk does): end it, so the next put starts a new one.
		_ = s.tx.Rollback()
		s.tx = nil
		if s.deferred > 0 {
			s.lost = fmt.Errorf("blob: %d deferred puts were rolled back: %w", s.deferred, err)
			s.deferred = 0
		}
		return fmt.Errorf("blob: storing in the pack database: %w", err)
	}
	if deferred {
		s.deferred++
		return nil
	}
	return s.commitLocked()
}

// sync commits the deferred puts, if any, durably.
func (s *smallStore) sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commitLocked()
}

func (s *smallStore) commitLocked() error {
	if lost := s.lost; lost != nil {
		s.lost = nil
		if s.tx != nil {
			_ = s.tx.Rollback()
			s.tx, s.deferred = nil, 0
		}
		return lost
	}
	if s.tx == nil {
		return nil
	}
	err := s.tx.Commit()
	s.tx, s.deferred = nil, 0
	if err != nil {
		return fmt.Errorf("blob: committing the pack database: %w", err)
	}
	return nil
}

// remove deletes the blobs of sums last stored before cutoff (a put since
// renewed the others), in a transaction of its own or in the open one of
// deferred puts, and reports how many it deleted.
func (s *smallStore) remove(ctx context.Context, sums [][]byte, cutoff time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	own := s.tx == nil
	tx := s.tx
	if own {
		var err error
		if tx, err = s.w.BeginTx(ctx, nil); err != nil {
			return 0, fmt.Errorf("blob: pack database: %w", err)
		}
		defer tx.Rollback()
	}
	n := 0
	for _, sum := range sums {
		res, err := tx.ExecContext(ctx, `DELETE FROM blobs WHERE sha256 = ? AND stored < ?`, sum, cutoff.UnixMicro())
		if err != nil {
			return 0, fmt.Errorf("blob: collect the pack database: %w", err)
		}
		k, _ := res.RowsAffected()
		n += int(k)
	}
	if own {
		if err := tx.Commit(); err != nil {
			return 0, fmt.Errorf("blob: collect the pack database: %w", err)
		}
	}
	return n, nil
}

// get returns the bytes stored under sum, or nil and false. It sees the
// deferred puts not yet synced as well.
func (s *smallStore) get(ctx context.Context, sum []byte) ([]byte, bool, error) {
	var data []byte
	err := s.r.QueryRowContext(ctx, `SELECT data FROM blobs WHERE sha256 = ?`, sum).Scan(&data)
	if err == nil {
		return data, true, nil
	} else if !errors.Is(err, sql.ErrNoRows) {
		return nil, false, fmt.Errorf("blob: reading the pack database: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tx == nil {
		return nil, false, nil
	}
	err = s.tx.QueryRowContext(ctx, `SELECT data FROM blobs WHERE sha256 = ?`, sum).Scan(&data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, fmt.Errorf("blob: reading the pack database: %w", err)
	}
	return data, true, nil
}

// close commits what is deferred and closes the database.
func (s *smallStore) close() error {
	err := s.sync()
	return errors.Join(err, s.r.Close(), s.w.Close())
}

// memBlob is a small blob read into memory, seekable for Range requests.
type memBlob struct{ *bytes.Reader }

// Close implements io.Closer.
func (memBlob) Close() error { return nil }

var _ io.ReadSeekCloser = memBlob{}
