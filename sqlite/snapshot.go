package sqlite

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"

	"github.com/mattn/go-sqlite3"
)

// snapshotStep is how many pages one step of an online backup copies
// between progress reports.
const snapshotStep = 4096

// Snapshot copies the database file at src, which servers may be writing
// meanwhile, to a new file dst with SQLite's online backup API. The copy is
// the database as of one moment: the source connection holds one read
// transaction for the whole copy, so in WAL mode writers go on and the
// copy never restarts. dst is left in rollback-journal mode (one
// self-contained file, no -wal beside it) and synced to disk; a dst that
// exists is an error. progress, when set, is called after each step with
// the pages copied and the total. Cost: one read of every page of the
// database, written once.
func Snapshot(ctx context.Context, src, dst string, progress func(done, total int)) (err error) {
	if _, err := os.Stat(src); err != nil {
		return fmt.Errorf("snapshot: the database: %w", err)
	}
	if _, err := os.Stat(dst); err == nil {
		return fmt.Errorf("snapshot: %s exists", dst)
	}
	srcDB := openPool("file:"+(&url.URL{Path: src}).EscapedPath()+"?_busy_timeout=10000&_txlock=deferred", "")
	defer srcDB.Close()
	dstDB := openPool("file:"+(&url.URL{Path: dst}).EscapedPath()+"?_journal_mode=DELETE&_synchronous=FULL", "")
	defer dstDB.Close()
	srcConn, err := srcDB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("snapshot: open %s: %w", src, err)
	}
	defer srcConn.Close()
	dstConn, err := dstDB.Conn(ctx)
	if err != nil {
		return fmt.Errorf("snapshot: create %s: %w", dst, err)
	}
	defer func() {
		if err != nil {
			dstConn.Close()
			dstDB.Close()
			os.Remove(dst)
			os.Remove(dst + "-journal")
		}
	}()
	// One read transaction over the whole copy: every step then reads the
	// same snapshot of the database.
	if _, err := srcConn.ExecContext(ctx, "BEGIN DEFERRED"); err != nil {
		return fmt.Errorf("snapshot: begin read: %w", err)
	}
	defer srcConn.ExecContext(context.Background(), "ROLLBACK")
	var n int
	if err := srcConn.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master").Scan(&n); err != nil {
		return fmt.Errorf("snapshot: begin read: %w", err)
	}
	err = dstConn.Raw(func(d any) error {
		dc, ok := d.(*sqlite3.SQLiteConn)
		if !ok {
			return errors.New("not a SQLite connection")
		}
		return srcConn.Raw(func(s any) error {
			sc, ok := s.(*sqlite3.SQLiteConn)
			if !ok {
				return errors.New("not a SQLite connection")
			}
			b, err := dc.Backup("main", sc, "main")
			if err != nil {
				return err
			}
			for {
				if err := ctx.Err(); err != nil {
					b.Finish()
					return err
				}
				done, err := b.Step(snapshotStep)
				if err != nil {
					b.Finish()
					return err
				}
				if progress != nil {
					total := b.PageCount()
					progress(total-b.Remaining(), total)
				}
				if done {
					return b.Finish()
				}
			}
		})
	})
	if err != nil {
		return fmt.Errorf("snapshot %s to %s: %w", src, dst, err)
	}
	// The copied header says WAL; the copy is one file at rest.
	if _, err := dstConn.ExecContext(ctx, "PRAGMA journal_mode=DELETE"); err != nil {
		return fmt.Errorf("snapshot: %s: leave WAL mode: %w", dst, err)
	}
	if err := dstConn.Close(); err != nil {
		return fmt.Errorf("snapshot: close %s: %w", dst, err)
	}
	if err := dstDB.Close(); err != nil {
		return fmt.Errorf("snapshot: close %s: %w", dst, err)
	}
	f, err := os.Open(dst)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("snapshot: sync %s: %w", dst, err)
	}
	return nil
}

// SnapshotBlobs calls fn with the SHA-256 (lower-case hex) of every blob
// the database file at path refers to, in order and each once: the bytes
// of every file, live or deleted, and of every upload record. Open it on
// a snapshot nobody writes (it is opened read-only and immutable). Cost:
// one pass over the files_sha256 and uploads_sha256 indexes.
func SnapshotBlobs(ctx context.Context, path string, fn func(sha256 string) error) error {
	db := openPool("file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&immutable=1", "")
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT sha256 FROM files WHERE sha256 <> ''
		UNION SELECT sha256 FROM uploads WHERE sha256 <> '' ORDER BY 1`)
	if err != nil {
		return fmt.Errorf("snapshot %s: list blobs: %w", path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var sha string
		if err := rows.Scan(&sha); err != nil {
			return fmt.Errorf("snapshot %s: list blobs: %w", path, err)
		}
		if err := fn(sha); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("snapshot %s: list blobs: %w", path, err)
	}
	return nil
}
