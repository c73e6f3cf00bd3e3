package sqlite_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/sqlite"
)

// TestWALStaysBounded (rule R7): under a continuous stream of commits the
// write-ahead log is checkpointed (passively, beside the writer) and
// rewound, so it stays within a few MiB instead of growing with the data (a
// growing WAL would also make every fsync journal a new file size).
func TestWALStaysBounded(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := sqlite.Open(ctx, filepath.Join(dir, "w.db"), sqlite.Options{Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	defer repo.Close()
	largest := writeBatches(ctx, t, repo, filepath.Join(dir, "w.db-wal"))
	fi, err := os.Stat(filepath.Join(dir, "w.db"))
	if err != nil {
		t.Fatal(err)
	}
	const bound = 8 << 20 // 8× the catch-up threshold (256 pages at 4 KiB)
	if largest > bound {
		t.Fatalf("WAL grew to %d bytes (database %d bytes), bound %d: %+v", largest, fi.Size(), bound, db.WALStats())
	}
	t.Logf("database %d bytes, largest WAL %d bytes, %+v", fi.Size(), largest, db.WALStats())
}

// TestWALBoundedUnderReaders: with read transactions always open (a ring of
// readers hands over so that one ends only after the next has taken its
// snapshot) SQLite's automatic checkpoint never finds a moment without an
// older snapshot and the WAL is never rewound. The checkpointer waits for
// the readers of old frames once the WAL passes its limit, so the WAL stays
// under a fixed size however many batches are written.
func TestWALBoundedUnderReaders(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const limit = 1 << 20
	db, err := sqlite.Open(ctx, filepath.Join(dir, "w.db"), sqlite.Options{Relaxed: true, WALLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	defer repo.Close()
	// one reader of the ring uses a database handle of its own, as a second
	// process does (shelfmark jobs status)
	other, err := sqlite.Open(ctx, filepath.Join(dir, "w.db"), sqlite.Options{ReadConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	stop, handoffs := readerRing(t, []*sqlite.DB{db, db, other})
	largest := writeBatches(ctx, t, repo, filepath.Join(dir, "w.db-wal"))
	stop()
	st := db.WALStats()
	// the limit, a batch written before the commit that sees it, and
	// room for a few attempts that find readers busy on a loaded machine
	const bound = 4 * limit
	if largest > bound {
		t.Fatalf("WAL grew to %d bytes under constant readers (%d reader handoffs; checkpoints %+v), bound %d", largest, handoffs(), st, bound)
	}
	if st.Restarts == 0 || st.Limit != limit {
		t.Fatalf("WAL stats %+v: want restarts at limit %d", st, limit)
	}
	t.Logf("largest WAL %d bytes, %d reader handoffs, checkpoints %+v", largest, handoffs(), st)
}

// readerRing starts a goroutine for each of dbs running read transactions
// back to back: a reader ends its transaction only when another has read
// (taken its snapshot) inside its own, so some snapshot is open at every
// moment. stop ends them; handoffs counts the transactions handed over.
func readerRing(t *testing.T, dbs []*sqlite.DB) (stop func(), handoffs func() int64) {
	t.Helper()
	ctx := context.Background()
	var (
		done  = make(chan struct{})
		baton = make(chan struct{}) // a reader with a snapshot releases the holder
		count atomic.Int64
		wg    sync.WaitGroup
		first = make(chan struct{}, 1)
		errc  = make(chan error, len(dbs))
	)
	first <- struct{}{}
	for _, db := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				err := db.View(ctx, func(tx shelfmark.ReadTx) error {
					for range 100 { // a short read: a page of rows
						if _, err := tx.Counter(ctx, "key"); err != nil {
							return err
						}
					}
					select { // the first reader holds without releasing anyone
					case <-first:
					default:
						select {
						case baton <- struct{}{}:
							count.Add(1)
						case <-done:
							return nil
						}
					}
					select { // hold the snapshot until the next reader has one
					case <-baton:
						count.Add(1)
					case <-done:
					}
					return nil
				})
				if err != nil {
					errc <- err
					return
				}
				select {
				case <-done:
					return
				default:
				}
			}
		}()
	}
	stop = func() {
		close(done)
		wg.Wait()
		select {
		case err := <-errc:
			t.Fatal(err)
		default:
		}
	}
	return stop, func() int64 { return count.Load() / 2 }
}

// TestWALReaderOutlastsWait: a read transaction that outlasts the
// checkpointer's wait is counted busy and the log grows meanwhile (writes do
// not fail or wait for it); once it ends, the next attempt rewinds the log
// and the file is cut back to the limit.
func TestWALReaderOutlastsWait(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const limit = 1 << 20
	db, err := sqlite.Open(ctx, filepath.Join(dir, "w.db"), sqlite.Options{Relaxed: true, WALLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	defer repo.Close()
	batch := 0
	write := func() {
		t.Helper()
		writeBatch(ctx, t, repo, batch)
		batch++
	}
	walSize := func() int64 {
		fi, err := os.Stat(filepath.Join(dir, "w.db-wal"))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}

	// a first snapshot to hold, which needs frames of the log: none is
	// copied into the database file before the reader has it
	resume := db.HoldPassiveCheckpoints()
	write()
	held, release, ended := make(chan struct{}), make(chan struct{}), make(chan error)
	go func() {
		ended <- db.View(ctx, func(tx shelfmark.ReadTx) error {
			if _, err := tx.Counter(ctx, "key"); err != nil {
				return err
			}
			close(held)
			<-release
			return nil
		})
	}()
	<-held
	resume()
	// the first batch may have passed the limit already, and been rewound
	restarts := db.WALStats().Restarts
	for db.WALStats().Busy < 2 {
		if batch > 40 {
			t.Fatalf("no busy checkpoint after %d batches: %+v", batch, db.WALStats())
		}
		write()
	}
	st := db.WALStats()
	if st.Restarts != restarts || walSize() <= limit {
		t.Fatalf("with a reader holding the first snapshot: WAL %d bytes, %+v", walSize(), st)
	}
	close(release)
	if err := <-ended; err != nil {
		t.Fatal(err)
	}
	// Once the reader has ended, the log is rewound: by the checkpointer's
	// next RESTART or, when the machine is slow enough that a passive
	// checkpoint copies every frame first, by the next writer (and
	// journal_size_limit cuts the file back to the limit).
	for db.WALStats().Restarts == restarts && walSize() > limit {
		if batch > 80 {
			t.Fatalf("the log was not rewound after the reader ended, %d batches: WAL %d bytes, %+v", batch, walSize(), db.WALStats())
		}
		write()
	}
	write() // writes at the start of the log and cuts the file back
	if n := walSize(); n > limit {
		t.Fatalf("WAL %d bytes after a restart, limit %d (%+v)", n, limit, db.WALStats())
	}
	t.Logf("%d batches, %+v", batch, db.WALStats())
}

// writeBatches commits 60 batches of 100 works of 54 statements (about
// 25 MB of pages) and returns the largest size the WAL file at walPath had
// after a batch.
func writeBatches(ctx context.Context, t *testing.T, repo *shelfmark.Repository, walPath string) int64 {
	t.Helper()
	var largest int64
	for batch := 0; batch < 60; batch++ {
		writeBatch(ctx, t, repo, batch)
		if fi, err := os.Stat(walPath); err == nil {
			largest = max(largest, fi.Size())
		}
	}
	return largest
}

// TestWALCopiedBesideWriter: a commit does not copy the log into the
// database file (SQLite's automatic checkpoint, which runs inside COMMIT and
// holds the committer, is off); the checkpointer does, from a connection of
// its own after commits. With its checkpoints held off, batches of works
// leave the database file as it was; once they may run, it grows.
func TestWALCopiedBesideWriter(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "w.db")
	db, err := sqlite.Open(ctx, path, sqlite.Options{Relaxed: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	defer repo.Close()
	dbSize := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	write := func(batch int) { writeBatch(ctx, t, repo, batch) }
	write(0)
	resume := db.HoldPassiveCheckpoints()
	before := dbSize()
	for b := 1; b <= 5; b++ { // about 2 MB of pages, far from the log's limit
		write(b)
	}
	if n := dbSize(); n != before {
		resume()
		t.Fatalf("the database file changed from %d to %d bytes with the checkpointer held: a commit checkpointed", before, n)
	}
	wal := db.WALStats()
	resume()
	write(6) // wakes the checkpointer
	for i := 0; dbSize() == before; i++ {
		if i > 1000 {
			t.Fatalf("the database file stayed at %d bytes after commits: %+v", before, db.WALStats())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if wal.Restarts != 0 {
		t.Fatalf("the log passed its limit: %+v", wal)
	}
	t.Logf("database %d → %d bytes; %+v", before, dbSize(), db.WALStats())
}

// writeBatch commits 100 works of 54 statements (about 420 KB of pages),
// their identifiers made unique by batch.
func writeBatch(ctx context.Context, t *testing.T, repo *shelfmark.Repository, batch int) {
	t.Helper()
	meta := benchMetadata(54)
	nrs := make([]*shelfmark.NewResource, 100)
	for i := range nrs {
		nrs[i] = &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: append(meta[:53:53],
			shelfmark.Statement{Predicate: shelfmark.NSDC + "identifier", Object: shelfmark.NewLiteral(fmt.Sprint(batch, "/", i))})}
	}
	if _, errs := repo.CreateResources(ctx, nrs); errs[0] != nil {
		t.Fatal(errs[0])
	}
}

// TestWALCheckpointAtLimit: with CheckpointAtLimit the log is not copied
// after commits: it gathers up to the limit, the database file stays as it
// was meanwhile, and the commit that finds the log past the limit copies
// and rewinds it, so the log stays within a batch of the limit and every
// work written reads back from the database.
func TestWALCheckpointAtLimit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "w.db")
	const limit = 4 << 20 // about ten batches of writeBatch
	db, err := sqlite.Open(ctx, path, sqlite.Options{Relaxed: true, WALLimit: limit, CheckpointAtLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	repo := shelfmark.NewRepository(db, shelfmark.RepositoryOptions{})
	dbSize := func() int64 {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	writeBatch(ctx, t, repo, 0)
	before := dbSize()
	writeBatch(ctx, t, repo, 1)
	writeBatch(ctx, t, repo, 2)
	time.Sleep(100 * time.Millisecond) // passive checkpoints, were they on, run within 50 ms
	if n := dbSize(); n != before {
		t.Fatalf("the database file changed from %d to %d bytes below the log's limit: %+v", before, n, db.WALStats())
	}
	largest := writeBatches(ctx, t, repo, path+"-wal")
	st := db.WALStats()
	if st.Passive != 0 {
		t.Errorf("%d passive checkpoints ran: %+v", st.Passive, st)
	}
	if st.Restarts == 0 || largest < limit {
		t.Errorf("the log never reached its limit of %d (largest %d): %+v", limit, largest, st)
	}
	if largest > 2*limit {
		t.Errorf("the log grew to %d bytes, limit %d: %+v", largest, limit, st)
	}
	repo.Close()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// reopened by another reader of the file (the log copied at close),
	// every work is there
	raw, err := sql.Open("sqlite3", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var n int64
	if err := raw.QueryRowContext(ctx, `SELECT count(*) FROM resources WHERE kind = 'work'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if want := int64(63 * 100); n != want {
		t.Fatalf("%d works after reopening, want %d", n, want)
	}
	t.Logf("largest log %d bytes, limit %d; %+v", largest, limit, st)
}
